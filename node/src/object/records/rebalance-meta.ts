/**
 * `rebalance.bin`: the cluster's rebalance, one record per pool (SPEC
 * "Rebalance (cluster-wide, per-pool state in rebalance.bin)"), in the record
 * envelope of `envelope.ts` (magic "SVRB", format 1.0), written under
 * `.svc.sys` with the `.svc.sys` quorum. Pure: types and codec.
 *
 * Absent file = no rebalance was ever started (or it was cleaned up): every
 * pool is `none`. A process restart recovers the state from this record and
 * never starts a rebalance by itself.
 */
import { decodeRecord, encodeRecord, FieldReader, type RecordKind } from './envelope.ts';

export const REBALANCE_META_PATH = 'rebalance.bin';

export const REBALANCE_META_KIND: RecordKind = { magic: 'SVRB', name: 'rebalance.bin', major: 1, minor: 0 };

/** Per-pool state; the wire spells these `None`, `Started`, `Completed`, `Stopped`, `Failed` (what mc compares). */
export const REBALANCE_POOL_STATES = ['none', 'started', 'completed', 'stopped', 'failed'] as const;
export type RebalancePoolState = (typeof REBALANCE_POOL_STATES)[number];

/** Most cleanup warnings kept per pool (the count keeps counting). */
export const MAX_REBALANCE_WARNINGS = 32;

export interface RebalanceWarning {
  bucket: string;
  object: string;
  message: string;
  /** Unix ms. */
  at: number;
}

export interface RebalanceProgress {
  objects: number;
  versions: number;
  bytes: number;
  /** Buckets not yet walked, in walk order. */
  remainingBuckets: string[];
  bucket: string;
  object: string;
  /** Unix ms when this pool's work started; 0 when it never did. */
  startedAt: number;
  /** Time spent moving, in ms (excludes stopped intervals). */
  elapsedMs: number;
  /** Unix ms of the last persisted progress. */
  updatedAt: number;
}

export interface RebalancePoolEntry {
  cmdline: string;
  id: number;
  /** False for pools that only receive (below the mean fill when started). */
  participating: boolean;
  state: RebalancePoolState;
  /** A stop was requested and the pool's worker has not acknowledged it yet. */
  stopping: boolean;
  /**
   * Usable capacity, and capacity minus the usable bytes in use, when the
   * rebalance started: the cluster's mean fill (the target) is computed from
   * them (`background/movement/rebalance-plan.ts`).
   */
  initFreeSpace: number;
  initCapacity: number;
  lastError: string | null;
  /** Count of cleanup warnings (objects moved but not removed from the source) and the latest few. */
  warningCount: number;
  warnings: RebalanceWarning[];
  progress: RebalanceProgress;
}

/** How a stop reached the peers (names as RustFS tooling reads them). */
export interface StopPropagation {
  /** Unix ms of the last attempt to tell every peer to stop; 0 = never. */
  lastAttemptAt: number;
  /** Peers (`host:port`) that did not acknowledge that stop. */
  failedPeers: string[];
  /** Unix ms of the last attempt to make peers reload the terminal state; 0 = never. */
  terminalReloadAttemptAt: number;
  terminalReloadFailedPeers: string[];
  /** Some peer still has to reload the terminal state. */
  pendingTerminalReload: boolean;
}

export interface RebalanceMeta {
  /** UUID of this rebalance. */
  id: string;
  startedAt: number;
  /** Unix ms of the stop request; 0 = not stopped. */
  stoppedAt: number;
  stopPropagation: StopPropagation;
  pools: RebalancePoolEntry[];
}

export function emptyProgress(): RebalanceProgress {
  return { objects: 0, versions: 0, bytes: 0, remainingBuckets: [], bucket: '', object: '', startedAt: 0, elapsedMs: 0, updatedAt: 0 };
}

export function emptyStopPropagation(): StopPropagation {
  return { lastAttemptAt: 0, failedPeers: [], terminalReloadAttemptAt: 0, terminalReloadFailedPeers: [], pendingTerminalReload: false };
}

/** True while any pool is `started` or `stopping`: a rebalance is in progress. */
export function rebalanceRunning(meta: RebalanceMeta | undefined): boolean {
  return meta !== undefined && meta.pools.some((p) => p.state === 'started' || p.stopping);
}

export function encodeRebalanceMeta(meta: RebalanceMeta): Buffer {
  return encodeRecord(REBALANCE_META_KIND, {
    id: meta.id,
    startedAt: meta.startedAt,
    stoppedAt: meta.stoppedAt,
    stopPropagation: { ...meta.stopPropagation },
    pools: meta.pools.map((p) => ({ ...p, warnings: p.warnings.slice(-MAX_REBALANCE_WARNINGS), progress: { ...p.progress } })),
  });
}

export function decodeRebalanceMeta(buf: Uint8Array): RebalanceMeta {
  const { body } = decodeRecord(REBALANCE_META_KIND, buf);
  const r = new FieldReader(REBALANCE_META_KIND);
  const root = r.obj(body, 'root');
  const sp = r.obj(root['stopPropagation'], 'stopPropagation');
  return {
    id: r.str(root['id'], 'id'),
    startedAt: r.int(root['startedAt'], 'startedAt'),
    stoppedAt: r.int(root['stoppedAt'], 'stoppedAt'),
    stopPropagation: {
      lastAttemptAt: r.int(sp['lastAttemptAt'], 'stopPropagation.lastAttemptAt'),
      failedPeers: r.strs(sp['failedPeers'], 'stopPropagation.failedPeers'),
      terminalReloadAttemptAt: r.int(sp['terminalReloadAttemptAt'], 'stopPropagation.terminalReloadAttemptAt'),
      terminalReloadFailedPeers: r.strs(sp['terminalReloadFailedPeers'], 'stopPropagation.terminalReloadFailedPeers'),
      pendingTerminalReload: r.bool(sp['pendingTerminalReload'], 'stopPropagation.pendingTerminalReload'),
    },
    pools: r.arr(root['pools'], 'pools').map((raw, i): RebalancePoolEntry => {
      const at = `pools[${i}]`;
      const p = r.obj(raw, at);
      const g = r.obj(p['progress'], `${at}.progress`);
      return {
        cmdline: r.str(p['cmdline'], `${at}.cmdline`),
        id: r.int(p['id'], `${at}.id`),
        participating: r.bool(p['participating'], `${at}.participating`),
        state: r.oneOf(p['state'], `${at}.state`, REBALANCE_POOL_STATES),
        stopping: r.bool(p['stopping'], `${at}.stopping`),
        initFreeSpace: r.int(p['initFreeSpace'], `${at}.initFreeSpace`),
        initCapacity: r.int(p['initCapacity'], `${at}.initCapacity`),
        lastError: r.optStr(p['lastError'], `${at}.lastError`),
        warningCount: r.int(p['warningCount'], `${at}.warningCount`),
        warnings: r.arr(p['warnings'], `${at}.warnings`).map((w, j) => {
          const wat = `${at}.warnings[${j}]`;
          const o = r.obj(w, wat);
          return { bucket: r.str(o['bucket'], `${wat}.bucket`), object: r.str(o['object'], `${wat}.object`), message: r.str(o['message'], `${wat}.message`), at: r.int(o['at'], `${wat}.at`) };
        }),
        progress: {
          objects: r.int(g['objects'], `${at}.progress.objects`),
          versions: r.int(g['versions'], `${at}.progress.versions`),
          bytes: r.int(g['bytes'], `${at}.progress.bytes`),
          remainingBuckets: r.strs(g['remainingBuckets'], `${at}.progress.remainingBuckets`),
          bucket: r.str(g['bucket'], `${at}.progress.bucket`),
          object: r.str(g['object'], `${at}.progress.object`),
          startedAt: r.int(g['startedAt'], `${at}.progress.startedAt`),
          elapsedMs: r.int(g['elapsedMs'], `${at}.progress.elapsedMs`),
          updatedAt: r.int(g['updatedAt'], `${at}.progress.updatedAt`),
        },
      };
    }),
  };
}
