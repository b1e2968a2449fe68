/**
 * Quorum arithmetic (spec: Quorum and capacity rules) and the vote that picks
 * authoritative versions from the xl.meta journals of a set's drives. Pure.
 */
import type { FileVersion } from '../storage/drive.ts';
import { baseVersionId } from '../storage/xl-meta.ts';

/** Write quorum of a K+M object: K, or K+1 when K = M (N for EC:0, since K = N). */
export function writeQuorum(data: number, parity: number): number {
  return data === parity ? data + 1 : data;
}

/** Read quorum of a K+M object: K. */
export function readQuorum(data: number): number {
  return data;
}

/** Majority of N drives (delete markers, version deletes): N/2 + 1. */
export function majority(n: number): number {
  return Math.floor(n / 2) + 1;
}

/**
 * Votes a version needs to be authoritative: K for data objects; for delete
 * markers a majority, N/2 + 1, the same as they are written with (spec:
 * "majority, for write and vote").
 */
export function versionQuorum(v: FileVersion, n: number): number {
  if (v.type === 'delete' || !v.erasure) return majority(n);
  return readQuorum(v.erasure.data);
}

/**
 * Identity of a version across drives: the fields every drive must agree on
 * (per-drive fields such as the shard index and inline data excluded;
 * metadata excluded so a partial tag update never splits the vote).
 */
export function versionKey(v: FileVersion): string {
  const e = v.erasure;
  return [baseVersionId(v.versionId), v.modTime, v.type, v.dataDir, v.etag, v.size, e ? `${e.data}+${e.parity}:${e.blockSize}` : '-', v.parts.length].join(
    '|',
  );
}

/** The metadata a drive's copy of a version carries (user and system metadata, headers, tags, checksum, class). */
export function metaKey(v: FileVersion): string {
  return JSON.stringify([v.userMeta, v.contentHeaders, v.tags, v.sysMeta, v.checksum ?? null, v.storageClass]);
}

/** The same string fields in the same order (what `metaKey`'s JSON tells apart). */
function sameRecord(a: Record<string, string>, b: Record<string, string>): boolean {
  if (a === b) return true;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (let i = 0; i < ka.length; i++) if (ka[i] !== kb[i] || a[ka[i]!] !== b[ka[i]!]) return false;
  return true;
}

/** Whether every copy has the metadata of the first: `metaKey` equal for all, without building it (a decoded checksum record has exactly its three fields). */
function allSameMeta(copies: readonly (FileVersion | undefined)[]): boolean {
  let first: FileVersion | undefined;
  for (const v of copies) {
    if (v === undefined) continue;
    if (first === undefined) {
      first = v;
      continue;
    }
    const a = first.checksum;
    const b = v.checksum;
    if (
      v.storageClass !== first.storageClass ||
      v.tags !== first.tags ||
      (a === undefined) !== (b === undefined) ||
      (a !== undefined && (a.algorithm !== b!.algorithm || a.value !== b!.value || a.type !== b!.type)) ||
      !sameRecord(first.userMeta, v.userMeta) ||
      !sameRecord(first.contentHeaders, v.contentHeaders) ||
      !sameRecord(first.sysMeta, v.sysMeta)
    )
      return false;
  }
  return true;
}

export interface VersionGroup {
  /** Representative (from the drive with the most common metadata). */
  version: FileVersion;
  /** `perSlot[slot]` = that drive's copy, or undefined when it lacks the version. */
  perSlot: (FileVersion | undefined)[];
  votes: number;
  quorum: number;
}

/**
 * Result of reading one object's xl.meta from every drive of a set. A drive
 * without the bucket's volume holds no version of anything in it: it
 * answers not-found, flagged `noVolume` (the bucket is missing there).
 */
export type SlotMeta = { ok: true; versions: FileVersion[] } | { ok: false; notFound: boolean; noVolume?: boolean; error?: unknown };

/**
 * Groups the journals of N drives by version identity, newest first. `answered`
 * counts drives that replied (journal or a clean not-found); the rest failed.
 */
export function groupVersions(metas: readonly SlotMeta[]): { groups: VersionGroup[]; answered: number; failed: number } {
  const n = metas.length;
  const byKey = new Map<string, VersionGroup>();
  let answered = 0;
  for (let slot = 0; slot < n; slot++) {
    const m = metas[slot]!;
    if (!m.ok) {
      if (m.notFound) answered++;
      continue;
    }
    answered++;
    for (const v of m.versions) {
      const k = versionKey(v);
      let g = byKey.get(k);
      if (!g) {
        g = { version: v, perSlot: new Array(n).fill(undefined), votes: 0, quorum: versionQuorum(v, n) };
        byKey.set(k, g);
      }
      if (g.perSlot[slot] === undefined) {
        g.perSlot[slot] = v;
        g.votes++;
      }
    }
  }
  const groups = [...byKey.values()];
  for (const g of groups) {
    // Most common metadata among the agreeing drives wins (when all agree, as they nearly always
    // do, the first copy, found without building a key per copy).
    if (allSameMeta(g.perSlot)) {
      g.version = g.perSlot.find((v) => v !== undefined)!;
      const base = baseVersionId(g.version.versionId);
      if (base !== g.version.versionId) g.version = { ...g.version, versionId: base };
      continue;
    }
    const counts = new Map<string, { n: number; v: FileVersion }>();
    for (const v of g.perSlot) {
      if (!v) continue;
      const k = metaKey(v);
      const c = counts.get(k);
      if (c) c.n++;
      else counts.set(k, { n: 1, v });
    }
    let best: { n: number; v: FileVersion } | undefined;
    for (const c of counts.values()) if (!best || c.n > best.n) best = c;
    if (best) g.version = best.v;
    // A superseded copy (kept until its replacement reached quorum) stands for its base id.
    const base = baseVersionId(g.version.versionId);
    if (base !== g.version.versionId) g.version = { ...g.version, versionId: base };
  }
  groups.sort((a, b) => b.version.modTime - a.version.modTime || (a.version.versionId < b.version.versionId ? 1 : -1));
  return { groups, answered, failed: n - answered };
}

export type Resolution = { kind: 'found'; group: VersionGroup } | { kind: 'notFound' } | { kind: 'quorum' };

/**
 * Picks the authoritative version: walking the groups (or those of
 * `versionId`) newest first, the first that reached its quorum. A newer
 * group that has not, but could with the drives that did not answer, stops
 * the walk with `quorum` (ErasureReadQuorum): it may be the real latest
 * version (acknowledged at write quorum, its drives now offline), so serving
 * an older one would be a stale read. A newer group that cannot reach quorum
 * even then is a write that never committed, and is passed over. Without a
 * group, `quorum` when fewer than N/2 drives answered at all, else
 * `notFound`.
 */
export function resolveVersion(metas: readonly SlotMeta[], versionId?: string): Resolution {
  const n = metas.length;
  const { groups, answered, failed } = groupVersions(metas);
  const candidates = versionId === undefined ? groups : groups.filter((g) => g.version.versionId === versionId);
  for (const g of candidates) {
    if (g.votes >= g.quorum) return { kind: 'found', group: g };
    if (g.votes + failed >= g.quorum) return { kind: 'quorum' };
  }
  if (answered < Math.max(1, Math.floor(n / 2))) return { kind: 'quorum' };
  return { kind: 'notFound' };
}

/**
 * Groups that pass `threshold`, newest first, one per version id (an older
 * superseded copy of an id is hidden once a newer group of that id passes).
 */
export function listedVersions(groups: readonly VersionGroup[], threshold: (g: VersionGroup) => number): VersionGroup[] {
  const seen = new Set<string>();
  const out: VersionGroup[] = [];
  for (const g of groups) {
    if (g.votes < threshold(g) || seen.has(g.version.versionId)) continue;
    seen.add(g.version.versionId);
    out.push(g);
  }
  return out;
}
