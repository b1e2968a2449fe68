/**
 * The lifecycle rules engine, pure: a bucket's lifecycle configuration (the
 * `lifecycle` configuration document, stored as JSON), its validation, and
 * what it selects at a given time — which versions of an object expire,
 * which incomplete multipart uploads are aborted — plus the expiry date a
 * current version shows in `x-amz-expiration`.
 *
 * Semantics follow S3's lifecycle:
 * - ages count from the version's creation (current versions), from the
 *   moment it became noncurrent (its successor's creation), or from an
 *   upload's initiation, and are rounded up to the next midnight UTC; a
 *   `date` expires every matching current version from that midnight on;
 * - `Expiration` expires current versions: an unversioned bucket deletes
 *   the object, a versioned one adds a delete marker; it never touches
 *   noncurrent versions; with `days` it also removes an expired object
 *   delete marker (a marker that is the only version left) once the marker
 *   is that old, with `expiredObjectDeleteMarker` as soon as it is one;
 * - `NoncurrentVersionExpiration` permanently deletes noncurrent versions
 *   (delete markers included) `days` after they became noncurrent, keeping
 *   the `newerNoncurrentVersions` newest noncurrent ones whatever their age;
 * - `AbortIncompleteMultipartUpload` aborts uploads `days` after initiation;
 * - filters: key prefix, tags (every one given must be on the version),
 *   sizes (strictly greater / strictly less), or all of them (`And`);
 *   disabled rules select nothing; transitions to other storage tiers are
 *   refused (svc has none).
 *
 * Object lock is not this module's business: the executor refuses to remove
 * a locked version whatever a rule selects.
 */
import { randomUUID } from 'node:crypto';
import { SvcError } from '../../util/errors.ts';

export const DAY_MS = 86_400_000;
const MAX_RULES = 1000;
const MAX_ID = 255;
const MAX_DAYS = 2_147_483_647;

export interface LifecycleFilter {
  prefix?: string;
  tags?: [string, string][];
  /** Matches versions strictly larger than this many bytes. */
  sizeGreaterThan?: number;
  /** Matches versions strictly smaller than this many bytes. */
  sizeLessThan?: number;
}

export interface LifecycleRule {
  id: string;
  enabled: boolean;
  filter: LifecycleFilter;
  /** How the filter was written (`Filter` with `And` or one condition, legacy rule-level `Prefix`), so GET returns the same shape. */
  filterForm?: 'and' | 'single' | 'legacy-prefix' | 'empty';
  expiration?: { days?: number; date?: number; expiredObjectDeleteMarker?: boolean };
  noncurrentExpiration?: { days: number; newerNoncurrentVersions?: number };
  abortIncompleteMultipartUpload?: { days: number };
}

export interface LifecycleConfig {
  rules: LifecycleRule[];
}

/** One version of an object as the engine sees it (newest first in a list). */
export interface VersionFacts {
  versionId: string;
  deleteMarker: boolean;
  /** Unix ms. */
  modTime: number;
  /** Plaintext size in bytes (0 for delete markers). */
  size: number;
  /** URL-encoded tag set ('' when none). */
  tags: string;
}

export type LifecycleActionKind =
  /** Expire the current version: delete it (unversioned), or add a delete marker (versioned). */
  | 'expire-current'
  /** Permanently delete a noncurrent version (or noncurrent delete marker). */
  | 'delete-noncurrent'
  /** Remove an expired object delete marker (the only version left). */
  | 'delete-marker';

export interface LifecycleAction {
  kind: LifecycleActionKind;
  versionId: string;
  ruleId: string;
  /** When it became due (Unix ms). */
  due: number;
}

/** The next midnight UTC at or after `t` (S3 rounds lifecycle ages up to it). */
export function nextMidnight(t: number): number {
  return Math.ceil(t / DAY_MS) * DAY_MS;
}

// ============ validation ============

function bad(msg: string): SvcError {
  return new SvcError('InvalidArgument', msg);
}

function positiveInt(v: unknown, what: string, max = MAX_DAYS): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > max) throw bad(`${what} must be a positive integer.`);
  return v;
}

/** Checks a configuration as S3 does; fills in missing rule ids. Throws InvalidArgument / MalformedXML. */
export function validateLifecycle(c: LifecycleConfig): LifecycleConfig {
  if (c.rules.length === 0) throw new SvcError('MalformedXML', 'A lifecycle configuration needs at least one Rule.');
  if (c.rules.length > MAX_RULES) throw bad(`A lifecycle configuration has at most ${MAX_RULES} rules.`);
  const ids = new Set<string>();
  const rules = c.rules.map((r) => {
    const id = r.id === '' ? randomUUID() : r.id;
    if (id.length > MAX_ID) throw bad(`Rule ID is at most ${MAX_ID} characters.`);
    if (ids.has(id)) throw bad(`Rule ID must be unique. Found same ID for more than one rule: ${id}.`);
    ids.add(id);
    const f = r.filter;
    if (f.tags) for (const [k] of f.tags) if (k === '') throw bad('A Tag filter needs a Key.');
    if (f.tags && new Set(f.tags.map(([k]) => k)).size !== f.tags.length) throw bad('Duplicate Tag Keys are not allowed.');
    if (f.sizeGreaterThan !== undefined && (!Number.isSafeInteger(f.sizeGreaterThan) || f.sizeGreaterThan < 0)) throw bad('ObjectSizeGreaterThan must be a non-negative integer.');
    if (f.sizeLessThan !== undefined && (!Number.isSafeInteger(f.sizeLessThan) || f.sizeLessThan < 1)) throw bad('ObjectSizeLessThan must be a positive integer.');
    if (f.sizeGreaterThan !== undefined && f.sizeLessThan !== undefined && f.sizeGreaterThan >= f.sizeLessThan) {
      throw bad('ObjectSizeGreaterThan must be less than ObjectSizeLessThan.');
    }
    if (!r.expiration && !r.noncurrentExpiration && !r.abortIncompleteMultipartUpload) {
      throw bad('At least one action needs to be specified in a rule.');
    }
    const e = r.expiration;
    if (e) {
      const set = [e.days !== undefined, e.date !== undefined, e.expiredObjectDeleteMarker !== undefined].filter(Boolean).length;
      if (set !== 1) throw bad('Expiration needs exactly one of Days, Date or ExpiredObjectDeleteMarker.');
      if (e.days !== undefined) positiveInt(e.days, "'Days' in the Expiration action");
      if (e.date !== undefined && (!Number.isFinite(e.date) || e.date % DAY_MS !== 0)) throw bad("'Date' must be at midnight GMT.");
      if (e.expiredObjectDeleteMarker !== undefined && f.tags?.length) throw bad('ExpiredObjectDeleteMarker cannot be specified with a Tag filter.');
    }
    if (r.noncurrentExpiration) {
      positiveInt(r.noncurrentExpiration.days, "'NoncurrentDays' in the NoncurrentVersionExpiration action");
      const n = r.noncurrentExpiration.newerNoncurrentVersions;
      if (n !== undefined) positiveInt(n, "'NewerNoncurrentVersions'", 100);
    }
    if (r.abortIncompleteMultipartUpload) {
      positiveInt(r.abortIncompleteMultipartUpload.days, "'DaysAfterInitiation' in the AbortIncompleteMultipartUpload action");
      if (f.tags?.length || f.sizeGreaterThan !== undefined || f.sizeLessThan !== undefined) {
        throw bad('AbortIncompleteMultipartUpload cannot be specified with a Tag or object size filter.');
      }
    }
    return { ...r, id };
  });
  return { rules };
}

export function encodeLifecycle(c: LifecycleConfig): Uint8Array {
  return Buffer.from(JSON.stringify(c));
}

export function decodeLifecycle(raw: Uint8Array | undefined): LifecycleConfig | undefined {
  if (raw === undefined) return undefined;
  try {
    const c = JSON.parse(Buffer.from(raw).toString('utf8')) as LifecycleConfig;
    if (!Array.isArray(c.rules)) throw new Error('no rules');
    return c;
  } catch (err) {
    throw new SvcError('FileCorrupt', 'bucket lifecycle configuration', undefined, { cause: err });
  }
}

// ============ selection ============

function tagsOf(encoded: string): Map<string, string> {
  return new Map(new URLSearchParams(encoded));
}

/** True when the rule's filter selects a version of `key`. */
export function ruleMatches(r: LifecycleRule, key: string, v: Pick<VersionFacts, 'size' | 'tags'>): boolean {
  if (!r.enabled) return false;
  const f = r.filter;
  if (f.prefix !== undefined && !key.startsWith(f.prefix)) return false;
  if (f.sizeGreaterThan !== undefined && !(v.size > f.sizeGreaterThan)) return false;
  if (f.sizeLessThan !== undefined && !(v.size < f.sizeLessThan)) return false;
  if (f.tags?.length) {
    const have = tagsOf(v.tags);
    for (const [k, val] of f.tags) if (have.get(k) !== val) return false;
  }
  return true;
}

/** Earliest of several candidate actions for one version. */
function earliest(cands: LifecycleAction[]): LifecycleAction | undefined {
  let best: LifecycleAction | undefined;
  for (const c of cands) if (!best || c.due < best.due) best = c;
  return best;
}

/**
 * What the configuration selects among the versions of `key` (newest first)
 * at `now`: at most one action per version, the earliest due among the
 * rules. `versioned` is false for an unversioned bucket (its one version is
 * the null version, and only `Expiration` applies).
 */
export function selectVersions(c: LifecycleConfig, key: string, versions: readonly VersionFacts[], now: number, versioned: boolean): LifecycleAction[] {
  const out: LifecycleAction[] = [];
  if (versions.length === 0) return out;
  const current = versions[0]!;
  // The current version.
  if (!current.deleteMarker) {
    const cands: LifecycleAction[] = [];
    for (const r of c.rules) {
      const e = r.expiration;
      if (!e || !ruleMatches(r, key, current)) continue;
      const due = e.days !== undefined ? nextMidnight(current.modTime + e.days * DAY_MS) : e.date;
      if (due !== undefined && due <= now) cands.push({ kind: 'expire-current', versionId: current.versionId, ruleId: r.id, due });
    }
    const a = earliest(cands);
    if (a) out.push(a);
  } else if (versions.length === 1 && versioned) {
    // An expired object delete marker: the only version left.
    const cands: LifecycleAction[] = [];
    for (const r of c.rules) {
      const e = r.expiration;
      if (!e || !ruleMatches(r, key, current)) continue;
      const due = e.expiredObjectDeleteMarker === true ? current.modTime : e.days !== undefined ? nextMidnight(current.modTime + e.days * DAY_MS) : undefined;
      if (due !== undefined && due <= now) cands.push({ kind: 'delete-marker', versionId: current.versionId, ruleId: r.id, due });
    }
    const a = earliest(cands);
    if (a) out.push(a);
  }
  if (!versioned) return out;
  // Noncurrent versions: each became noncurrent when its successor was created.
  for (let i = 1; i < versions.length; i++) {
    const v = versions[i]!;
    const since = versions[i - 1]!.modTime;
    const cands: LifecycleAction[] = [];
    for (const r of c.rules) {
      const n = r.noncurrentExpiration;
      if (!n || !ruleMatches(r, key, v)) continue;
      // The `newer` newest noncurrent versions (that this rule selects) are kept whatever their age.
      if (n.newerNoncurrentVersions !== undefined) {
        let newer = 0;
        for (let j = 1; j < i; j++) if (ruleMatches(r, key, versions[j]!)) newer++;
        if (newer < n.newerNoncurrentVersions) continue;
      }
      const due = nextMidnight(since + n.days * DAY_MS);
      if (due <= now) cands.push({ kind: 'delete-noncurrent', versionId: v.versionId, ruleId: r.id, due });
    }
    const a = earliest(cands);
    if (a) out.push(a);
  }
  return out;
}

/** The rule that aborts an upload of `key` initiated at `initiated`, if one is due at `now`. */
export function selectUpload(c: LifecycleConfig, key: string, initiated: number, now: number): { ruleId: string; due: number } | undefined {
  let best: { ruleId: string; due: number } | undefined;
  for (const r of c.rules) {
    const a = r.abortIncompleteMultipartUpload;
    if (!a || !r.enabled) continue;
    if (r.filter.prefix !== undefined && !key.startsWith(r.filter.prefix)) continue;
    const due = nextMidnight(initiated + a.days * DAY_MS);
    if (due <= now && (!best || due < best.due)) best = { ruleId: r.id, due };
  }
  return best;
}

/** True when some enabled rule can select anything under `prefix`-less keys at all (a bucket worth visiting). */
export function hasObjectRules(c: LifecycleConfig): boolean {
  return c.rules.some((r) => r.enabled && (r.expiration !== undefined || r.noncurrentExpiration !== undefined));
}

export function hasUploadRules(c: LifecycleConfig): boolean {
  return c.rules.some((r) => r.enabled && r.abortIncompleteMultipartUpload !== undefined);
}

/**
 * The `x-amz-expiration` of a current version: the earliest date an
 * `Expiration` rule expires it, and that rule's id; undefined when none does.
 */
export function expiryOf(c: LifecycleConfig, key: string, v: Pick<VersionFacts, 'modTime' | 'size' | 'tags'>): { date: number; ruleId: string } | undefined {
  let best: { date: number; ruleId: string } | undefined;
  for (const r of c.rules) {
    const e = r.expiration;
    if (!e || !ruleMatches(r, key, v)) continue;
    const date = e.days !== undefined ? nextMidnight(v.modTime + e.days * DAY_MS) : e.date;
    if (date !== undefined && (!best || date < best.date)) best = { date, ruleId: r.id };
  }
  return best;
}
