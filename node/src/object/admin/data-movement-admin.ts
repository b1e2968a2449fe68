/**
 * The pool, decommission and rebalance services of the admin API: status
 * from `pool.bin` / `rebalance.bin` (absent = idle) and capacity measured
 * from the drives on every call; mutations checked completely by
 * `data-movement-rules.ts`, then handed to the worker ports; a refusal
 * changes nothing.
 */
import type { Clock } from '../../util/clock.ts';
import { SvcError } from '../../util/errors.ts';
import { type ConfiguredPoolMeta, type DecommissionEntry, projectPoolMeta, withPoolEntries } from '../records/pool-meta.ts';
import type { RebalanceMeta, RebalancePoolEntry } from '../records/rebalance-meta.ts';
import type { PoolRecords } from '../records/store.ts';
import type { PoolCapacity } from '../types.ts';
import {
  checkDecommissionCancel,
  checkDecommissionClear,
  checkDecommissionStart,
  checkRebalanceStart,
  checkRebalanceStop,
  type ClusterFacts,
} from './data-movement-rules.ts';
import type { DecommissionWorker, PoolAdmin, RebalanceAdmin, RebalanceWorker } from './services.ts';
import {
  type DecommissionInfo,
  type DecommissionStatusName,
  type DecommissionStatusReport,
  nanos,
  type PoolLifecycle,
  type PoolRebalanceName,
  type PoolStatus,
  type RebalancePoolStatus,
  type RebalanceStatus,
  type RebalanceWireStatus,
  rfc3339,
  ZERO_TIME,
} from './types.ts';

/** What the admin API reports about a configured pool besides its records. */
export interface PoolDescriptor {
  readonly id: number;
  readonly cmdline: string;
  readonly ellipsis: boolean;
  readonly setCount: number;
  readonly setDriveCount: number;
  readonly standardParity: number;
  readonly rrsParity: number;
  /** `host:port` of the node leading the pool, or `local` for a path-only deployment. */
  readonly leader: string;
}

export interface DataMovementAdminOptions {
  readonly pools: readonly PoolDescriptor[];
  readonly records: PoolRecords;
  readonly capacity: () => Promise<PoolCapacity[]>;
  /**
   * Object bytes per pool as the scanner last counted them (undefined for a
   * pool not wholly counted yet). The capacity check of a decommission start
   * uses them before the drives' used space, which on a shared file system
   * counts everything else on the disk too.
   */
  readonly storedBytes?: () => Promise<readonly (number | undefined)[]>;
  readonly clock: Clock;
  /** The workers a checked mutation is handed to. */
  readonly decommissionWorker: DecommissionWorker;
  readonly rebalanceWorker: RebalanceWorker;
}

// ---- projections (pure)

export function decommissionStatusName(d: DecommissionEntry | null): DecommissionStatusName {
  if (d === null) return 'none';
  switch (d.state) {
    case 'queued':
      return 'queued';
    case 'active':
      return 'running';
    case 'completed':
      return 'complete';
    default:
      return d.state;
  }
}

export function poolLifecycle(d: DecommissionEntry | null, rebalance: RebalancePoolEntry | undefined): PoolLifecycle {
  if (d !== null) {
    if (d.state === 'queued' || d.state === 'active') return 'decommissioning';
    if (d.state === 'completed') return 'decommissioned';
    return 'blocked';
  }
  return rebalance !== undefined && (rebalance.state === 'started' || rebalance.stopping) ? 'rebalancing' : 'active';
}

export function poolRebalanceName(e: RebalancePoolEntry | undefined): PoolRebalanceName {
  if (e === undefined) return 'none';
  if (e.stopping) return 'stopping';
  return e.state;
}

/** `decommissionInfo`, always an object; sizes are the live measurement (as MinIO's Status fills them). */
export function decommissionInfoOf(d: DecommissionEntry | null, cap: { usableTotal: number; usableFree: number }, now = 0): DecommissionInfo {
  const stage = decommissionStatusName(d);
  return {
    startTime: d === null ? ZERO_TIME : rfc3339(d.startTime),
    startSize: d?.startSize ?? 0,
    totalSize: cap.usableTotal,
    currentSize: cap.usableFree,
    complete: d?.state === 'completed',
    failed: d?.state === 'failed',
    canceled: d?.state === 'canceled',
    objectsDecommissioned: d?.objectsDecommissioned ?? 0,
    objectsDecommissionedFailed: d?.objectsDecommissionedFailed ?? 0,
    bytesDecommissioned: d?.bytesDecommissioned ?? 0,
    bytesDecommissionedFailed: d?.bytesDecommissionedFailed ?? 0,
    queued: d?.state === 'queued',
    queuedBuckets: d?.queuedBuckets ?? [],
    decommissionedBuckets: d?.decommissionedBuckets ?? [],
    bucket: d?.bucket ?? '',
    prefix: d?.prefix ?? '',
    object: d?.object ?? '',
    stage,
    waitingReason: d?.state === 'queued' ? 'queued' : null,
    lastError: d?.lastError ?? null,
    elapsedSeconds: d === null || d.startTime <= 0 ? 0 : Math.max(0, Math.round(((d.endTime > 0 ? d.endTime : now) - d.startTime) / 1000)),
  };
}

/** What the admission rules judge: the configured pools with their records and measured capacity. */
export function clusterFacts(
  pools: readonly Pick<PoolDescriptor, 'id' | 'cmdline' | 'ellipsis'>[],
  meta: readonly ConfiguredPoolMeta[],
  rebalance: RebalanceMeta | undefined,
  caps: readonly (PoolCapacity | undefined)[],
  stored: readonly (number | undefined)[] = [],
): ClusterFacts {
  return {
    rebalance,
    pools: pools.map((p) => ({
      id: p.id,
      cmdline: p.cmdline,
      ellipsis: p.ellipsis,
      decommission: meta[p.id]?.decommission ?? null,
      // what must move: the objects the scanner counted, else what the drives report used
      usableUsed: stored[p.id] ?? usableUsed(caps[p.id]),
      usableFree: caps[p.id]?.usableFree ?? 0,
    })),
  };
}

function fraction(part: number, total: number): number {
  return total > 0 ? Math.min(1, Math.max(0, part / total)) : 0;
}

/**
 * Usable bytes in use: what the online drives report used (statfs blocks
 * minus free blocks) × K/N. Not total − free: a filesystem's reserved
 * blocks are neither used by data nor available.
 */
export function usableUsed(cap: PoolCapacity | undefined): number {
  if (cap === undefined || cap.rawTotal <= 0) return 0;
  const rawUsed = cap.drives.reduce((a, d) => a + (d.online ? d.used : 0), 0);
  return Math.floor((rawUsed * cap.usableTotal) / cap.rawTotal);
}

export function poolStatusOf(
  desc: PoolDescriptor,
  meta: ConfiguredPoolMeta,
  cap: PoolCapacity | undefined,
  rebalance: RebalancePoolEntry | undefined,
  now = 0,
): PoolStatus {
  const usableTotal = cap?.usableTotal ?? 0;
  const usableFree = cap?.usableFree ?? 0;
  const used = usableUsed(cap);
  return {
    id: desc.id,
    cmdline: desc.cmdline,
    lastUpdate: rfc3339(meta.lastUpdate),
    decommissionInfo: decommissionInfoOf(meta.decommission, { usableTotal, usableFree }, now),
    totalSize: usableTotal,
    currentSize: usableFree,
    usedSize: used,
    used: fraction(used, usableTotal),
    status: poolLifecycle(meta.decommission, rebalance),
    decommissionStatus: decommissionStatusName(meta.decommission),
    rebalanceStatus: poolRebalanceName(rebalance),
    leader: desc.leader,
    setCount: desc.setCount,
    setDriveCount: desc.setDriveCount,
    standardParity: desc.standardParity,
    rrsParity: desc.rrsParity,
    drives: cap?.drives.length ?? desc.setCount * desc.setDriveCount,
    drivesOnline: cap?.drives.filter((d) => d.online).length ?? 0,
  };
}

const WIRE_STATUS: Record<RebalancePoolEntry['state'], RebalanceWireStatus> = {
  none: 'none',
  started: 'active',
  completed: 'completed',
  stopped: 'stopped',
  failed: 'failed',
};

function wireStatus(e: RebalancePoolEntry | undefined): RebalanceWireStatus {
  if (e === undefined) return 'none';
  return e.state === 'started' && e.stopping ? 'stopping' : WIRE_STATUS[e.state];
}

/**
 * Remaining time of one pool's move, from its rate so far: the bytes it
 * still has to give away (its used bytes at start above the cluster's mean
 * fill at start) × elapsed / bytes moved. 0 when not moving or unknown.
 */
export function rebalanceEtaMs(meta: RebalanceMeta, e: RebalancePoolEntry): number {
  if (e.state !== 'started' || e.stopping || e.progress.bytes <= 0 || e.progress.elapsedMs <= 0) return 0;
  const cap = meta.pools.reduce((a, p) => a + p.initCapacity, 0);
  const used = meta.pools.reduce((a, p) => a + Math.max(0, p.initCapacity - p.initFreeSpace), 0);
  if (cap <= 0) return 0;
  const target = (used / cap) * e.initCapacity;
  const toMove = Math.max(0, e.initCapacity - e.initFreeSpace - target);
  const remaining = Math.max(0, toMove - e.progress.bytes);
  return (remaining * e.progress.elapsedMs) / e.progress.bytes;
}

export function rebalanceStatusOf(meta: RebalanceMeta | undefined, pools: readonly PoolDescriptor[], caps: readonly PoolCapacity[]): RebalanceStatus {
  const entries = pools.map((desc): RebalancePoolStatus => {
    const cap = caps[desc.id];
    const e = meta?.pools.find((p) => p.cmdline === desc.cmdline);
    const last = e?.warnings[e.warnings.length - 1];
    return {
      id: desc.id,
      cmdline: desc.cmdline,
      status: wireStatus(e),
      stopping: e?.stopping ?? false,
      participating: e?.participating ?? false,
      used: fraction(usableUsed(cap), cap?.usableTotal ?? 0),
      lastError: e?.lastError ?? null,
      cleanupWarnings: {
        count: e?.warningCount ?? 0,
        lastMsg: last?.message ?? null,
        lastBucket: last?.bucket ?? null,
        lastObject: last?.object ?? null,
        lastAt: rfc3339(last?.at ?? 0),
        entries: (e?.warnings ?? []).map((w) => ({ bucket: w.bucket, object: w.object, message: w.message, timestamp: rfc3339(w.at) })),
      },
      progress: {
        objects: e?.progress.objects ?? 0,
        versions: e?.progress.versions ?? 0,
        bytes: e?.progress.bytes ?? 0,
        remainingBuckets: e?.progress.remainingBuckets.length ?? 0,
        bucket: e?.progress.bucket ?? '',
        object: e?.progress.object ?? '',
        elapsed: nanos(e?.progress.elapsedMs ?? 0),
        eta: meta !== undefined && e !== undefined ? nanos(rebalanceEtaMs(meta, e)) : 0,
      },
    };
  });
  const states = meta?.pools ?? [];
  const status: RebalanceStatus['status'] =
    meta === undefined
      ? 'idle'
      : states.some((p) => p.stopping)
        ? 'stopping'
        : states.some((p) => p.state === 'started')
          ? 'running'
          : meta.stoppedAt > 0
            ? 'stopped'
            : states.some((p) => p.state === 'failed')
              ? 'failed'
              : states.some((p) => p.state === 'completed')
                ? 'completed'
                : 'idle';
  const sp = meta?.stopPropagation;
  return {
    id: meta?.id ?? '',
    status,
    pools: entries,
    stoppedAt: rfc3339(meta?.stoppedAt ?? 0),
    stopPropagation: {
      lastAttemptAt: rfc3339(sp?.lastAttemptAt ?? 0),
      failedPeers: sp?.failedPeers ?? [],
      terminalReloadAttemptAt: rfc3339(sp?.terminalReloadAttemptAt ?? 0),
      terminalReloadFailedPeers: sp?.terminalReloadFailedPeers ?? [],
      pendingTerminalReload: sp?.pendingTerminalReload ?? false,
    },
  };
}

// ---- the services

export class DataMovementAdmin implements PoolAdmin {
  readonly #o: DataMovementAdminOptions;

  constructor(o: DataMovementAdminOptions) {
    this.#o = o;
  }

  /** Records and capacity read at once. */
  async #state(): Promise<{ meta: ConfiguredPoolMeta[]; rebalance: RebalanceMeta | undefined; caps: PoolCapacity[] }> {
    const [poolMeta, rebalance, caps] = await Promise.all([this.#o.records.readPoolMeta(), this.#o.records.readRebalanceMeta(), this.#o.capacity()]);
    return { meta: projectPoolMeta(poolMeta, this.#o.pools.map((p) => p.cmdline)).pools, rebalance, caps };
  }

  #facts(s: { meta: ConfiguredPoolMeta[]; rebalance: RebalanceMeta | undefined; caps: PoolCapacity[] }, stored: readonly (number | undefined)[] = []): ClusterFacts {
    return clusterFacts(this.#o.pools, s.meta, s.rebalance, s.caps, stored);
  }

  #statuses(s: { meta: ConfiguredPoolMeta[]; rebalance: RebalanceMeta | undefined; caps: PoolCapacity[] }): PoolStatus[] {
    return this.#o.pools.map((p) => poolStatusOf(p, s.meta[p.id]!, s.caps[p.id], s.rebalance?.pools.find((r) => r.cmdline === p.cmdline), this.#o.clock.now()));
  }

  async list(): Promise<PoolStatus[]> {
    return this.#statuses(await this.#state());
  }

  async status(pool: number): Promise<PoolStatus> {
    const all = await this.list();
    const p = all[pool];
    if (p === undefined) throw new SvcError('InvalidArgument', `specified pool index ${pool} not found`);
    return p;
  }

  async decommissionStatus(pool?: number): Promise<DecommissionStatusReport> {
    const all = await this.list();
    const chosen = pool === undefined ? all : all.filter((p) => p.id === pool);
    return {
      pools: chosen.map((p) => ({ id: p.id, cmdline: p.cmdline, status: p.decommissionStatus, poolStatus: p.status, decommissionInfo: p.decommissionInfo })),
    };
  }

  async startDecommission(pools: readonly number[]): Promise<void> {
    const [state, stored] = await Promise.all([this.#state(), this.#o.storedBytes?.() ?? Promise.resolve([])]);
    checkDecommissionStart(this.#facts(state, stored), pools);
    await this.#o.decommissionWorker.start(pools, stored);
  }

  async cancelDecommission(pool: number): Promise<void> {
    checkDecommissionCancel(this.#facts(await this.#state()), pool);
    await this.#o.decommissionWorker.cancel(pool);
  }

  async clearDecommission(pool: number): Promise<void> {
    if (checkDecommissionClear(this.#facts(await this.#state()), pool) === 'none') return;
    const desc = this.#o.pools[pool]!;
    // Re-checked under the record's lock: the entry may have moved on since.
    await this.#o.records.updatePoolMeta(async (current) => {
      const caps = await this.#o.capacity();
      const meta = projectPoolMeta(current, this.#o.pools.map((p) => p.cmdline)).pools;
      if (checkDecommissionClear(this.#facts({ meta, rebalance: undefined, caps }), pool) === 'none') return undefined;
      return withPoolEntries(current, [{ id: desc.id, cmdline: desc.cmdline, lastUpdate: this.#o.clock.now(), decommission: null }]);
    });
    await this.#o.decommissionWorker.cleared?.(pool);
  }

  async startRebalance(): Promise<{ id: string }> {
    checkRebalanceStart(this.#facts(await this.#state()));
    return this.#o.rebalanceWorker.start();
  }

  async stopRebalance(): Promise<void> {
    if (checkRebalanceStop(this.#facts(await this.#state())) === 'none') return;
    await this.#o.rebalanceWorker.stop();
  }

  async rebalanceStatus(): Promise<RebalanceStatus> {
    const s = await this.#state();
    return rebalanceStatusOf(s.rebalance, this.#o.pools, s.caps);
  }
}

/** The `RebalanceAdmin` view of a `DataMovementAdmin`. */
export function rebalanceAdminOf(d: DataMovementAdmin): RebalanceAdmin {
  return { status: () => d.rebalanceStatus(), start: () => d.startRebalance(), stop: () => d.stopRebalance() };
}
