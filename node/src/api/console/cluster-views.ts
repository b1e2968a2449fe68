/**
 * What the cluster pages show, derived from the admin API's answers and this
 * node's readiness report: node health in one word, degraded reasons in
 * words, capacity, each pool with its drives, its decommission progress and
 * the actions its state allows. Pure.
 */
import type { ClusterSnapshot, DecommissionInfo, PoolStatus, RebalanceStatus, RuntimeCapabilities, ServerInfoMessage } from '../../object/admin/types.ts';
import type { CapacityView, DrainProgress, NodeHealth, NodeView, PoolsResponse, PoolView, ReadinessView } from './wire.ts';

/** SPEC "degradedReasons values", for people. */
export const REASON_MEANINGS: Readonly<Record<string, string>> = {
  storage_quorum_unavailable: 'Too many drives are offline: an erasure set lacks read quorum.',
  iam_not_ready: 'Users and credentials are still loading.',
  lock_quorum_unavailable: 'Too few nodes answer lock requests.',
  kms_not_ready: 'The key-management service cannot be reached.',
  peer_health_unavailable: 'This node reaches fewer than a majority of the nodes: it cannot take writes (it still serves the reads it can).',
  cluster_health_timeout: 'A node stopped answering (its health ping timed out) instead of refusing connections: it is frozen or overloaded.',
  storage_and_iam_unavailable: 'Storage quorum is missing, and users cannot load until it is back.',
  storage_and_lock_unavailable: 'Storage quorum and lock quorum are both missing.',
  iam_and_lock_unavailable: 'Users are not loaded and lock quorum is missing.',
  storage_iam_and_lock_unavailable: 'Storage quorum, users and lock quorum are all missing.',
};

export interface ReadinessSource {
  readonly ready: boolean;
  readonly status: string;
  readonly details: object;
  readonly degradedReasons: readonly string[];
  readonly pending?: string | undefined;
}

export function readinessView(r: ReadinessSource): ReadinessView {
  const details: Record<string, { status: string; ready: boolean; detail?: string }> = {};
  for (const [k, v] of Object.entries(r.details as Record<string, { status?: unknown; ready?: unknown; detail?: unknown }>)) {
    details[k] = {
      status: typeof v.status === 'string' ? v.status : 'unknown',
      ready: v.ready === true,
      ...(typeof v.detail === 'string' && v.detail !== '' ? { detail: v.detail } : {}),
    };
  }
  return {
    ready: r.ready,
    status: r.status,
    pending: r.pending ?? null,
    degradedReasons: r.degradedReasons.map((reason) => ({ reason, meaning: REASON_MEANINGS[reason] ?? reason })),
    details,
  };
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** Healthy, degraded (serving with something missing) or not ready, and each problem in words. */
export function nodeHealth(readiness: ReadinessView, snap: ClusterSnapshot | undefined): NodeHealth {
  const problems: string[] = [];
  if (!readiness.ready) {
    problems.push(`Not ready${readiness.pending ? `, waiting for ${readiness.pending.replace(/_/g, ' ')}` : ''}: S3 requests are answered 503.`);
    for (const r of readiness.degradedReasons) problems.push(r.meaning);
  }
  if (snap !== undefined) {
    const offlineNodes = snap.nodes.filter((n) => n.state !== 'online');
    if (offlineNodes.length > 0) problems.push(`${plural(offlineNodes.length, 'node')} offline: ${offlineNodes.map((n) => n.id).join(', ')}.`);
    for (const p of snap.pools) {
      for (const set of p.sets) {
        const off = set.drives.filter((d) => d.state === 'offline');
        const healing = set.drives.filter((d) => d.state === 'healing');
        if (off.length > 0) {
          const tolerance = set.drives.length - set.readQuorum;
          problems.push(
            `Pool ${p.id}, set ${set.id}: ${plural(off.length, 'drive')} offline (${off.map((d) => d.endpoint).join(', ')}); ` +
              (set.readable ? `it can lose ${Math.max(0, tolerance - off.length)} more and still read.` : 'its objects cannot be read.'),
          );
        }
        if (healing.length > 0) problems.push(`Pool ${p.id}, set ${set.id}: ${plural(healing.length, 'drive')} healing.`);
        for (const d of set.drives) {
          for (const i of d.issues ?? []) problems.push(`Pool ${p.id}, set ${set.id}, ${d.endpoint}: ${i.kind} — ${i.detail}`);
        }
      }
    }
  }
  if (!readiness.ready) return { state: 'not-ready', summary: 'Not ready', problems };
  if (problems.length > 0) return { state: 'degraded', summary: 'Degraded: serving, with reduced redundancy', problems };
  return { state: 'healthy', summary: 'Healthy: every node and drive online', problems };
}

export function nodeViews(snap: ClusterSnapshot, info: ServerInfoMessage | undefined): NodeView[] {
  return snap.nodes.map((n) => {
    const server = info?.servers.find((s) => s.endpoint === n.id);
    const drives = snap.pools.flatMap((p) => p.sets.flatMap((s) => s.drives.filter((d) => d.node === n.id)));
    return {
      id: n.id,
      state: n.state,
      self: n.self,
      leaderOfPools: n.leaderOfPools,
      drives: n.drives,
      drivesOffline: drives.filter((d) => d.state === 'offline').length,
      uptimeSeconds: server !== undefined && server.state === 'online' ? server.uptime : null,
      version: server?.version || null,
    };
  });
}

/** Usable bytes used: raw use scaled by the pool's data share (usable ≈ raw × K / N), as `pools/list` counts it. */
const usableUsedOf = (rawUsed: number, rawTotal: number, usableTotal: number) => (rawTotal > 0 ? Math.round((rawUsed * usableTotal) / rawTotal) : 0);

/**
 * Drives on one file system (same node, same device): each reports the whole
 * file system's size, so raw capacity counts it once per drive.
 */
export function sharedFilesystems(snap: ClusterSnapshot): { shared: CapacityView['sharedFilesystems']; rawTotalDistinct: number } {
  const byFs = new Map<string, { node: string; drives: string[]; total: number }>();
  let distinct = 0;
  for (const d of snap.pools.flatMap((p) => p.sets.flatMap((s) => s.drives))) {
    if (d.state !== 'online') continue;
    if (d.filesystem === undefined) {
      distinct += d.total;
      continue;
    }
    const fs = byFs.get(d.filesystem);
    if (fs === undefined) byFs.set(d.filesystem, { node: d.node, drives: [d.endpoint], total: d.total });
    else {
      fs.drives.push(d.endpoint);
      fs.total = Math.max(fs.total, d.total);
    }
  }
  for (const fs of byFs.values()) distinct += fs.total;
  return { shared: [...byFs.values()].filter((f) => f.drives.length > 1), rawTotalDistinct: distinct };
}

export function capacityView(snap: ClusterSnapshot, alertFraction: number): CapacityView {
  const s = snap.summary;
  const fs = sharedFilesystems(snap);
  const pools = snap.pools.map((p) => ({ id: p.id, cmdline: p.cmdline, usableTotal: p.usableTotal, usableFree: p.usableFree, usableUsed: usableUsedOf(p.rawUsed, p.rawTotal, p.usableTotal) }));
  return {
    rawTotal: s.rawTotal,
    rawUsed: s.rawUsed,
    rawFree: s.rawFree,
    usableTotal: s.usableTotal,
    usableFree: s.usableFree,
    usableUsed: pools.reduce((n, p) => n + p.usableUsed, 0),
    alertFraction,
    pools,
    rawTotalDistinct: fs.rawTotalDistinct,
    sharedFilesystems: fs.shared,
  };
}

/** What the scanner last counted on one pool (server info's `dataUsage`). */
export type PoolStored = NonNullable<PoolView['stored']>;

export function storedByPool(info: ServerInfoMessage | undefined): Map<number, PoolStored> {
  const out = new Map<number, PoolStored>();
  const u = info?.dataUsage;
  if (u === undefined) return out;
  const at = Date.parse(u.lastUpdate);
  for (const p of u.pools) out.set(p.id, { objects: p.objects, versions: p.versions, size: p.size, countedAt: Number.isFinite(at) ? at : 0 });
  return out;
}

/**
 * A running or finished drain's progress; null while the pool has none. The
 * total is object bytes: those moved plus what the scanner last counted
 * still on the pool (null when it has not counted yet), not the file
 * system's used space, which counts everything else on the disk too.
 */
export function drainProgress(status: PoolStatus, stored?: PoolStored): DrainProgress | null {
  const d: DecommissionInfo = status.decommissionInfo;
  if (status.decommissionStatus === 'none') return null;
  const totalBytes = stored === undefined ? 0 : d.bytesDecommissioned + (stored.countedAt > Date.parse(d.startTime) ? stored.size : Math.max(0, stored.size - d.bytesDecommissioned));
  const movedBytes = d.bytesDecommissioned;
  // The worker's own clock: time spent moving data (0 while queued), not wall time since the request.
  const elapsedSeconds = d.elapsedSeconds;
  const running = status.decommissionStatus === 'running';
  const bytesPerSecond = elapsedSeconds > 0 ? movedBytes / elapsedSeconds : null;
  const objectsPerSecond = elapsedSeconds > 0 ? d.objectsDecommissioned / elapsedSeconds : null;
  const fraction = d.complete ? 1 : totalBytes > 0 ? Math.min(1, movedBytes / totalBytes) : 0;
  const etaSeconds = running && stored !== undefined && bytesPerSecond !== null && bytesPerSecond > 0 ? Math.max(0, totalBytes - movedBytes) / bytesPerSecond : null;
  return { totalBytes, movedBytes, fraction, bytesPerSecond, objectsPerSecond, etaSeconds, elapsedSeconds };
}

/** The decommission actions SPEC's state table allows for a pool in `status`. */
export function poolActions(status: PoolStatus | null, all: readonly (PoolStatus | null)[], caps: RuntimeCapabilities, rebalance: RebalanceStatus | null) {
  if (status === null) return { decommission: false, cancel: false, clear: false };
  const s = status.decommissionStatus;
  const othersActive = all.filter((p) => p !== null && p.id !== status.id && p.decommissionStatus === 'none').length;
  const rebalancing = rebalance !== null && (rebalance.status === 'running' || rebalance.status === 'stopping');
  return {
    decommission: caps.decommission.possible && (s === 'none' || s === 'failed' || s === 'canceled') && othersActive > 0 && !rebalancing,
    cancel: s === 'queued' || s === 'running',
    clear: s === 'failed' || s === 'canceled',
  };
}

export function poolViews(snap: ClusterSnapshot, list: readonly PoolStatus[] | undefined, caps: RuntimeCapabilities, rebalance: RebalanceStatus | null, info?: ServerInfoMessage): PoolView[] {
  const statuses = snap.pools.map((p) => list?.find((s) => s.id === p.id) ?? null);
  const stored = storedByPool(info);
  return snap.pools.map((layout, i) => {
    const status = statuses[i] ?? null;
    const s = stored.get(layout.id);
    return { layout, status, drain: status === null ? null : drainProgress(status, s), actions: poolActions(status, statuses, caps, rebalance), stored: s ?? null };
  });
}

/** Pools that take new objects: not being drained, not drained. */
function activePools(list: readonly PoolStatus[]): number {
  return list.filter((p) => p.decommissionStatus === 'none' || p.decommissionStatus === 'failed' || p.decommissionStatus === 'canceled').length;
}

export function rebalanceActions(caps: RuntimeCapabilities, rebalance: RebalanceStatus | null, list: readonly PoolStatus[] | undefined): PoolsResponse['rebalanceActions'] {
  const running = rebalance !== null && (rebalance.status === 'running' || rebalance.status === 'stopping');
  const draining = (list ?? []).some((p) => p.decommissionStatus === 'queued' || p.decommissionStatus === 'running');
  const active = list === undefined ? 0 : activePools(list);
  const stop = rebalance !== null && rebalance.status === 'running';
  if (running) return { start: false, stop, reason: null };
  let reason: string | null = null;
  if (!caps.rebalance.possible) reason = caps.rebalance.reason ?? 'Rebalance is not possible on this cluster.';
  else if (list === undefined || rebalance === null) reason = 'The pool records cannot be read right now.';
  else if (draining) reason = 'A pool is being decommissioned: rebalance waits until the drain ends.';
  else if (active < 2) reason = `Rebalance needs at least two active pools to move objects between; ${active === 1 ? 'one pool is' : `${active} pools are`} active (a decommissioned pool takes no objects).`;
  return { start: reason === null, stop, reason };
}
