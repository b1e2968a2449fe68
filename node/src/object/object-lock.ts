/**
 * Object lock (WORM) rules, pure: a version's retention and legal hold as
 * stored in its system metadata, the one decision every path that could make
 * a version disappear asks (`removalBlocked`: permanent deletes, overwrites
 * of a null version, lifecycle expiry, heal with `remove`), the rules for
 * changing a retention, and the bucket's object-lock configuration (the
 * `object-lock` configuration document, stored as JSON).
 *
 * Time is the server's clock only (the caller passes `now`). A cluster adds
 * a grace period: a retention counts as active until `retainUntil + graceMs`,
 * where the grace is the largest clock difference the nodes can have and
 * still talk to each other (internode tokens are refused beyond it), so a
 * node whose clock runs ahead never releases a version its peers still hold
 * locked.
 */
import { SvcError } from '../util/errors.ts';

export type RetentionMode = 'GOVERNANCE' | 'COMPLIANCE';

/** A version's lock state. */
export interface ObjectLock {
  mode?: RetentionMode;
  /** Unix ms; set together with `mode`. */
  retainUntil?: number;
  /** 'ON' / 'OFF' once a legal hold was ever set; undefined when never. */
  legalHold?: 'ON' | 'OFF';
}

/** System-metadata keys of the lock state (travel with the version: copies between pools keep them). */
export const LOCK_META = { mode: 'lock-mode', until: 'lock-until', hold: 'lock-hold' } as const;

function isMode(v: unknown): v is RetentionMode {
  return v === 'GOVERNANCE' || v === 'COMPLIANCE';
}

/** The lock state stored in a version's system metadata. */
export function lockOf(sysMeta: Readonly<Record<string, string>>): ObjectLock {
  const out: ObjectLock = {};
  const mode = sysMeta[LOCK_META.mode];
  const until = Number(sysMeta[LOCK_META.until]);
  if (isMode(mode) && Number.isFinite(until)) {
    out.mode = mode;
    out.retainUntil = until;
  }
  const hold = sysMeta[LOCK_META.hold];
  if (hold === 'ON' || hold === 'OFF') out.legalHold = hold;
  return out;
}

/** System metadata with the lock state replaced by `lock` (other keys kept). */
export function withLock(sysMeta: Readonly<Record<string, string>>, lock: ObjectLock): Record<string, string> {
  const out: Record<string, string> = { ...sysMeta };
  delete out[LOCK_META.mode];
  delete out[LOCK_META.until];
  delete out[LOCK_META.hold];
  if (lock.mode !== undefined && lock.retainUntil !== undefined) {
    out[LOCK_META.mode] = lock.mode;
    out[LOCK_META.until] = String(lock.retainUntil);
  }
  if (lock.legalHold !== undefined) out[LOCK_META.hold] = lock.legalHold;
  return out;
}

export interface LockClock {
  now: number;
  /** Extra time a retention stays active (clock-skew allowance of a cluster; 0 on one node). */
  graceMs: number;
}

/** True when the version's retention still holds at `clock`. */
export function retentionActive(lock: ObjectLock, clock: LockClock): boolean {
  return lock.mode !== undefined && lock.retainUntil !== undefined && clock.now < lock.retainUntil + clock.graceMs;
}

/**
 * Why the version may not be removed (permanently deleted, overwritten,
 * expired, healed away), or undefined when it may. A legal hold blocks until
 * it is removed; COMPLIANCE blocks until its date; GOVERNANCE blocks unless
 * `bypassGovernance` (the request carried `x-amz-bypass-governance-retention`
 * and was allowed `s3:BypassGovernanceRetention`). The shared engine
 * decision: every path that can make a version disappear asks it.
 */
export function removalBlocked(sysMeta: Readonly<Record<string, string>>, clock: LockClock, opts: { bypassGovernance?: boolean } = {}): string | undefined {
  const lock = lockOf(sysMeta);
  if (lock.legalHold === 'ON') return 'the version is under a legal hold';
  if (!retentionActive(lock, clock)) return undefined;
  const until = new Date(lock.retainUntil!).toISOString();
  if (lock.mode === 'COMPLIANCE') return `the version is under COMPLIANCE retention until ${until}`;
  if (!opts.bypassGovernance) return `the version is under GOVERNANCE retention until ${until}`;
  return undefined;
}

/** `removalBlocked` as the S3 error a refused delete or overwrite gets. */
export function assertRemovable(sysMeta: Readonly<Record<string, string>>, clock: LockClock, opts: { bypassGovernance?: boolean } = {}): void {
  const why = removalBlocked(sysMeta, clock, opts);
  if (why !== undefined) throw new SvcError('AccessDenied', `Access Denied because object protected by object lock: ${why}.`, { objectLock: true });
}

/**
 * A retention change (PutObjectRetention): COMPLIANCE is never shortened,
 * removed or weakened to GOVERNANCE while active; an active GOVERNANCE
 * retention is shortened, removed or changed (to COMPLIANCE too, as S3
 * refuses that without the bypass) only with the bypass. An extension (same
 * mode, same or later date) is always allowed.
 * A new date must lie in the future.
 */
export function checkRetentionChange(cur: ObjectLock, next: { mode: RetentionMode; retainUntil: number } | undefined, clock: LockClock, bypassGovernance: boolean): void {
  if (next !== undefined && next.retainUntil <= clock.now) throw new SvcError('InvalidArgument', 'The retain until date must be in the future.');
  if (!retentionActive(cur, clock)) return;
  // Keeping the mode and not shortening is always allowed; a GOVERNANCE retention changed to COMPLIANCE
  // is a change of its settings, which S3 allows only with the bypass.
  const extension = next !== undefined && next.retainUntil >= cur.retainUntil! && next.mode === cur.mode;
  if (extension) return;
  if (cur.mode === 'COMPLIANCE') {
    throw new SvcError('AccessDenied', 'Access Denied: a COMPLIANCE retention can only be extended, never shortened, removed or changed to GOVERNANCE.', { objectLock: true });
  }
  if (!bypassGovernance) {
    throw new SvcError(
      'AccessDenied',
      'Access Denied: shortening, removing or weakening a GOVERNANCE retention needs x-amz-bypass-governance-retention: true and the s3:BypassGovernanceRetention permission.',
      { objectLock: true },
    );
  }
}

// ============ bucket configuration ============

export interface DefaultRetention {
  mode: RetentionMode;
  days?: number;
  years?: number;
}

/** The bucket's `object-lock` configuration document (JSON). */
export interface BucketLockConfig {
  enabled: true;
  rule?: DefaultRetention;
}

const MAX_DAYS = 36500;
const MAX_YEARS = 100;

/** Checks a default retention (`days` or `years`, exactly one, positive). */
export function validateDefaultRetention(r: DefaultRetention): void {
  if (!isMode(r.mode)) throw new SvcError('MalformedXML', 'DefaultRetention Mode must be GOVERNANCE or COMPLIANCE.');
  if ((r.days === undefined) === (r.years === undefined)) throw new SvcError('MalformedXML', 'DefaultRetention needs either Days or Years, not both.');
  const n = r.days ?? r.years!;
  const max = r.days !== undefined ? MAX_DAYS : MAX_YEARS;
  if (!Number.isInteger(n) || n < 1 || n > max) {
    throw new SvcError('InvalidRetentionPeriod', `Default retention period must be a positive integer of at most ${max} ${r.days !== undefined ? 'days' : 'years'}.`);
  }
}

export function encodeLockConfig(c: BucketLockConfig): Uint8Array {
  return Buffer.from(JSON.stringify(c));
}

/** The stored configuration; undefined when the bucket has no object lock. */
export function decodeLockConfig(raw: Uint8Array | undefined): BucketLockConfig | undefined {
  if (raw === undefined) return undefined;
  let c: unknown;
  try {
    c = JSON.parse(Buffer.from(raw).toString('utf8'));
  } catch (err) {
    throw new SvcError('FileCorrupt', 'bucket object-lock configuration', undefined, { cause: err });
  }
  const o = c as Partial<BucketLockConfig>;
  if (o?.enabled !== true) return undefined;
  const out: BucketLockConfig = { enabled: true };
  if (o.rule && isMode(o.rule.mode)) {
    out.rule = { mode: o.rule.mode, ...(o.rule.days !== undefined ? { days: o.rule.days } : {}), ...(o.rule.years !== undefined ? { years: o.rule.years } : {}) };
  }
  return out;
}

/**
 * The rules of the bucket's object-lock document, checked when it changes:
 * it can be set on a bucket whose versioning is Enabled (and is then there
 * for good: never removed or disabled), as S3 does.
 */
export function checkLockConfigChange(versioning: string, current: Uint8Array | undefined, next: Uint8Array | undefined): void {
  const had = decodeLockConfig(current) !== undefined;
  let wanted: BucketLockConfig | undefined;
  try {
    wanted = next === undefined ? undefined : decodeLockConfig(next);
  } catch {
    throw new SvcError('InvalidArgument', 'not an object-lock configuration document');
  }
  if (wanted === undefined) {
    if (had || next !== undefined) throw new SvcError('InvalidBucketState', 'Object Lock cannot be disabled or removed once it is enabled on a bucket.');
    return;
  }
  if (!had && versioning !== 'Enabled') {
    throw new SvcError('InvalidBucketState', "Versioning must be 'Enabled' on the bucket to apply a Object Lock configuration.");
  }
}

const DAY_MS = 86_400_000;

/** The retain-until date a default retention gives a version created at `now` (years are calendar years, UTC). */
export function defaultRetainUntil(r: DefaultRetention, now: number): number {
  if (r.days !== undefined) return now + r.days * DAY_MS;
  const d = new Date(now);
  d.setUTCFullYear(d.getUTCFullYear() + (r.years ?? 0));
  return d.getTime();
}

/**
 * The lock state of a new version: what the request asked for, else the
 * bucket's default retention (applied at `now`, the version's creation).
 * Refuses lock settings on a bucket without object lock.
 */
export function newVersionLock(config: BucketLockConfig | undefined, requested: ObjectLock | undefined, now: number): ObjectLock {
  const asked = requested !== undefined && (requested.mode !== undefined || requested.legalHold !== undefined);
  if (!config) {
    if (asked) throw new SvcError('InvalidRequest', 'Bucket is missing Object Lock Configuration.');
    return {};
  }
  const out: ObjectLock = {};
  if (requested?.mode !== undefined && requested.retainUntil !== undefined) {
    if (requested.retainUntil <= now) throw new SvcError('InvalidArgument', 'The retain until date must be in the future.');
    out.mode = requested.mode;
    out.retainUntil = requested.retainUntil;
  } else if (config.rule) {
    out.mode = config.rule.mode;
    out.retainUntil = defaultRetainUntil(config.rule, now);
  }
  if (requested?.legalHold !== undefined) out.legalHold = requested.legalHold;
  return out;
}
