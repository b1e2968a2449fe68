/**
 * Data usage the scanner accounts: per erasure set, per bucket, the objects
 * (latest version not a delete marker), versions, delete markers and bytes
 * (object size of every version; `rawSize` the bytes those versions take on
 * the drives, shards and parity included). Each node keeps one record
 * under `.svc.sys/usage/<node index>.json` with the sets it scanned; a
 * reader merges every node's record, taking for each set the newest scan
 * (a set scanned by another node after its owner went away is counted
 * once).
 */
import { SvcError } from '../util/errors.ts';
import type { SysRecords } from './sys-records.ts';

export interface BucketUsage {
  objects: number;
  versions: number;
  deleteMarkers: number;
  /** Object bytes of every version. */
  size: number;
  /** Bytes on the drives (size × N/K per version, inline and parity included). */
  rawSize: number;
}

export interface SetUsage {
  pool: number;
  set: number;
  /** Unix ms the scan of this set ended. */
  scannedAt: number;
  buckets: Record<string, BucketUsage>;
}

export interface UsageRecord {
  v: 1;
  node: string;
  updatedAt: number;
  sets: SetUsage[];
}

export interface UsageReport {
  /** Unix ms of the newest set scan counted (0: nothing scanned yet). */
  lastUpdate: number;
  objects: number;
  versions: number;
  deleteMarkers: number;
  size: number;
  rawSize: number;
  buckets: Record<string, BucketUsage>;
  pools: { pool: number; objects: number; versions: number; size: number; rawSize: number }[];
  /** Sets counted. */
  sets: number;
  /** Every set counted, with its totals over its buckets and when its newest scan ended. */
  perSet: ({ pool: number; set: number; scannedAt: number } & BucketUsage)[];
}

export const USAGE_DIR = 'usage';

export function usageRecordPath(nodeIndex: number): string {
  return `${USAGE_DIR}/${nodeIndex}.json`;
}

export function emptyBucketUsage(): BucketUsage {
  return { objects: 0, versions: 0, deleteMarkers: 0, size: 0, rawSize: 0 };
}

export function addUsage(into: BucketUsage, u: BucketUsage): void {
  into.objects += u.objects;
  into.versions += u.versions;
  into.deleteMarkers += u.deleteMarkers;
  into.size += u.size;
  into.rawSize += u.rawSize;
}

export function decodeUsage(raw: Uint8Array): UsageRecord {
  let rec: UsageRecord;
  try {
    rec = JSON.parse(Buffer.from(raw).toString('utf8')) as UsageRecord;
  } catch (err) {
    throw new SvcError('FileCorrupt', 'usage record is not JSON', undefined, { cause: err });
  }
  if (rec?.v !== 1 || !Array.isArray(rec.sets)) throw new SvcError('FileCorrupt', 'usage record of an unknown version');
  return rec;
}

/** Merges node records: per (pool, set) the newest scan, then totals per bucket and pool. */
export function mergeUsage(records: readonly UsageRecord[], poolCount: number): UsageReport {
  const newest = new Map<string, SetUsage>();
  for (const r of records) {
    for (const s of r.sets) {
      const k = `${s.pool}/${s.set}`;
      const cur = newest.get(k);
      if (cur === undefined || s.scannedAt > cur.scannedAt) newest.set(k, s);
    }
  }
  const out: UsageReport = {
    lastUpdate: 0,
    objects: 0,
    versions: 0,
    deleteMarkers: 0,
    size: 0,
    rawSize: 0,
    buckets: {},
    pools: Array.from({ length: poolCount }, (_, pool) => ({ pool, objects: 0, versions: 0, size: 0, rawSize: 0 })),
    sets: newest.size,
    perSet: [],
  };
  for (const s of newest.values()) {
    out.lastUpdate = Math.max(out.lastUpdate, s.scannedAt);
    const pool = out.pools[s.pool];
    const set = { pool: s.pool, set: s.set, scannedAt: s.scannedAt, ...emptyBucketUsage() };
    out.perSet.push(set);
    for (const [b, u] of Object.entries(s.buckets)) {
      addUsage((out.buckets[b] ??= emptyBucketUsage()), u);
      addUsage(out, u);
      addUsage(set, u);
      if (pool) {
        pool.objects += u.objects;
        pool.versions += u.versions;
        pool.size += u.size;
        pool.rawSize += u.rawSize;
      }
    }
  }
  out.perSet.sort((a, b) => a.pool - b.pool || a.set - b.set);
  return out;
}

/** Every node's usage record, merged (undefined while no scanner cycle finished anywhere). */
export async function readUsage(records: SysRecords, poolCount: number): Promise<UsageReport | undefined> {
  const { names } = await records.list(USAGE_DIR);
  const recs: UsageRecord[] = [];
  for (const n of names) {
    if (!/^\d+\.json\/$/.test(n)) continue;
    const raw = await records.read(`${USAGE_DIR}/${n.slice(0, -1)}`).catch(() => undefined);
    if (raw === undefined) continue;
    try {
      recs.push(decodeUsage(raw));
    } catch {
      // A record this build cannot read does not hide the others.
    }
  }
  return recs.length === 0 ? undefined : mergeUsage(recs, poolCount);
}
