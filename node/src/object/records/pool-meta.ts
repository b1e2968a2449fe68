/**
 * `pool.bin`: the decommission entries of the cluster's pools (SPEC "Decommission
 * entry (persisted in pool.bin)"), in the record envelope of `envelope.ts`
 * (magic "SVPB", format 1.0). Written under `.svc.sys` with the `.svc.sys`
 * quorum (parity N/2) on every pool, so it survives the removal of a drained
 * pool. Pure: types, codec, and the projection onto the configured pools.
 *
 * A pool's identity is its command line (`cmdline`), not its position: after
 * a drained pool is removed from the launch command, the pools behind it
 * move up one index, and their entries follow them by command line.
 *
 * Absent file or no entry for a pool = that pool was never decommissioned
 * (or its entry was cleared): it is `active` and takes new writes.
 */
import { decodeRecord, encodeRecord, FieldReader, type RecordKind } from './envelope.ts';

/** Path under the `.svc.sys` volume. */
export const POOL_META_PATH = 'pool.bin';

export const POOL_META_KIND: RecordKind = { magic: 'SVPB', name: 'pool.bin', major: 1, minor: 0 };

export const DECOMMISSION_STATES = ['queued', 'active', 'completed', 'failed', 'canceled'] as const;
export type DecommissionState = (typeof DECOMMISSION_STATES)[number];

/** `completed`, `failed` and `canceled` are terminal (SPEC). */
export function isTerminal(s: DecommissionState): boolean {
  return s === 'completed' || s === 'failed' || s === 'canceled';
}

/** One pool's decommission, from queueing to its terminal state. Times are unix ms; 0 = unset. */
export interface DecommissionEntry {
  state: DecommissionState;
  /** When the batch holding this pool was accepted. */
  queuedAt: number;
  /** When data started to move (`active`); 0 while queued. */
  startTime: number;
  /** When it reached a terminal state; 0 before. */
  endTime: number;
  /** Usable free bytes of the pool when it became active. */
  startSize: number;
  /** Usable capacity of the pool. */
  totalSize: number;
  /** Usable free bytes of the pool as last measured by the worker. */
  currentSize: number;
  objectsDecommissioned: number;
  objectsDecommissionedFailed: number;
  bytesDecommissioned: number;
  bytesDecommissionedFailed: number;
  /** Buckets still to drain, in order, and those done (the resume point). */
  queuedBuckets: string[];
  decommissionedBuckets: string[];
  /** The bucket, prefix and object the worker was at when it last persisted. */
  bucket: string;
  prefix: string;
  object: string;
  /** Why it failed (or the last non-fatal error); null when none. */
  lastError: string | null;
  /**
   * Listing entries that could not be resolved (below read quorum). A failed
   * or canceled entry holding some may be retried by a new start without a
   * clear (SPEC, decommission table: the retry path).
   */
  unresolvedEntries: number;
}

export interface PoolMetaEntry {
  /** The pool argument exactly as configured when the entry was written. */
  cmdline: string;
  /** Its position then (informational; identity is `cmdline`). */
  id: number;
  /** Unix ms of the entry's last change. */
  lastUpdate: number;
  decommission: DecommissionEntry | null;
}

export interface PoolMeta {
  pools: PoolMetaEntry[];
}

/** A fresh entry for a pool whose decommission was just accepted. */
export function queuedEntry(now: number, totalSize: number, currentSize: number, buckets: readonly string[]): DecommissionEntry {
  return {
    state: 'queued',
    queuedAt: now,
    startTime: 0,
    endTime: 0,
    startSize: currentSize,
    totalSize,
    currentSize,
    objectsDecommissioned: 0,
    objectsDecommissionedFailed: 0,
    bytesDecommissioned: 0,
    bytesDecommissionedFailed: 0,
    queuedBuckets: [...buckets],
    decommissionedBuckets: [],
    bucket: '',
    prefix: '',
    object: '',
    lastError: null,
    unresolvedEntries: 0,
  };
}

// ---- codec (short wire keys keep the file small; the types above are the API)

export function encodePoolMeta(meta: PoolMeta): Buffer {
  return encodeRecord(POOL_META_KIND, {
    pools: meta.pools.map((p) => ({
      c: p.cmdline,
      i: p.id,
      u: p.lastUpdate,
      d: p.decommission === null ? null : { ...p.decommission },
    })),
  });
}

export function decodePoolMeta(buf: Uint8Array): PoolMeta {
  const { body } = decodeRecord(POOL_META_KIND, buf);
  const r = new FieldReader(POOL_META_KIND);
  const root = r.obj(body, 'root');
  const pools = r.arr(root['pools'], 'pools').map((raw, i): PoolMetaEntry => {
    const at = `pools[${i}]`;
    const p = r.obj(raw, at);
    const d = p['d'];
    return {
      cmdline: r.str(p['c'], `${at}.cmdline`),
      id: r.int(p['i'], `${at}.id`),
      lastUpdate: r.int(p['u'], `${at}.lastUpdate`),
      decommission: d === null || d === undefined ? null : decodeEntry(r, r.obj(d, `${at}.decommission`), `${at}.decommission`),
    };
  });
  const seen = new Set<string>();
  for (const [i, p] of pools.entries()) {
    if (seen.has(p.cmdline)) r.fail(`pools[${i}].cmdline`, 'a pool listed once');
    seen.add(p.cmdline);
  }
  return { pools };
}

function decodeEntry(r: FieldReader, d: Record<string, unknown>, at: string): DecommissionEntry {
  return {
    state: r.oneOf(d['state'], `${at}.state`, DECOMMISSION_STATES),
    queuedAt: r.int(d['queuedAt'], `${at}.queuedAt`),
    startTime: r.int(d['startTime'], `${at}.startTime`),
    endTime: r.int(d['endTime'], `${at}.endTime`),
    startSize: r.int(d['startSize'], `${at}.startSize`),
    totalSize: r.int(d['totalSize'], `${at}.totalSize`),
    currentSize: r.int(d['currentSize'], `${at}.currentSize`),
    objectsDecommissioned: r.int(d['objectsDecommissioned'], `${at}.objectsDecommissioned`),
    objectsDecommissionedFailed: r.int(d['objectsDecommissionedFailed'], `${at}.objectsDecommissionedFailed`),
    bytesDecommissioned: r.int(d['bytesDecommissioned'], `${at}.bytesDecommissioned`),
    bytesDecommissionedFailed: r.int(d['bytesDecommissionedFailed'], `${at}.bytesDecommissionedFailed`),
    queuedBuckets: r.strs(d['queuedBuckets'], `${at}.queuedBuckets`),
    decommissionedBuckets: r.strs(d['decommissionedBuckets'], `${at}.decommissionedBuckets`),
    bucket: r.str(d['bucket'], `${at}.bucket`),
    prefix: r.str(d['prefix'], `${at}.prefix`),
    object: r.str(d['object'], `${at}.object`),
    lastError: r.optStr(d['lastError'], `${at}.lastError`),
    unresolvedEntries: r.int(d['unresolvedEntries'], `${at}.unresolvedEntries`),
  };
}

// ---- projection onto the configured pools

export interface ConfiguredPoolMeta {
  /** Current position in the pool list. */
  id: number;
  cmdline: string;
  /** Unix ms; 0 when pool.bin never held this pool. */
  lastUpdate: number;
  decommission: DecommissionEntry | null;
}

/**
 * The entries of the pools configured now (by command line, in configured
 * order), and the entries of pools no longer configured (a drained pool
 * removed from the launch command keeps its `completed` entry here).
 */
export function projectPoolMeta(meta: PoolMeta | undefined, cmdlines: readonly string[]): { pools: ConfiguredPoolMeta[]; removed: PoolMetaEntry[] } {
  const byCmdline = new Map((meta?.pools ?? []).map((p) => [p.cmdline, p]));
  const pools = cmdlines.map((cmdline, id) => {
    const e = byCmdline.get(cmdline);
    return { id, cmdline, lastUpdate: e?.lastUpdate ?? 0, decommission: e?.decommission ?? null };
  });
  const configured = new Set(cmdlines);
  return { pools, removed: (meta?.pools ?? []).filter((p) => !configured.has(p.cmdline)) };
}

/** Replaces (or adds) the entries of configured pools, keeping the entries of removed pools. */
export function withPoolEntries(meta: PoolMeta | undefined, updates: readonly ConfiguredPoolMeta[]): PoolMeta {
  const out = new Map((meta?.pools ?? []).map((p) => [p.cmdline, p]));
  for (const u of updates) out.set(u.cmdline, { cmdline: u.cmdline, id: u.id, lastUpdate: u.lastUpdate, decommission: u.decommission });
  return { pools: [...out.values()] };
}

/** True while some pool's decommission is `queued` or `active`. */
export function decommissionRunning(pools: readonly { decommission: DecommissionEntry | null }[]): boolean {
  return pools.some((p) => p.decommission !== null && !isTerminal(p.decommission.state));
}
