/**
 * The admission rules of decommission and rebalance (SPEC Admin API rules 4
 * and 6, the decommission and rebalance state tables, Limits), as pure
 * functions over what the cluster persisted and measured. Each check throws
 * the refusal (an `SvcError` with the spec's code and message) or returns
 * what the request amounts to; nothing here persists anything, so a refused
 * request changes nothing.
 */
import { SvcError } from '../../util/errors.ts';
import { type DecommissionEntry, isTerminal } from '../records/pool-meta.ts';
import { type RebalanceMeta, rebalanceRunning } from '../records/rebalance-meta.ts';

/** Free space the remaining pools need, as a multiple of the drained pools' used bytes (SPEC: plus 30 percent). */
export const DECOMMISSION_CAPACITY_FACTOR = 1.3;

export interface PoolFacts {
  readonly id: number;
  readonly cmdline: string;
  /** The argument carries an ellipsis range (non-legacy). */
  readonly ellipsis: boolean;
  readonly decommission: DecommissionEntry | null;
  /** Usable bytes (raw × K/N over online drives) in use and free. */
  readonly usableUsed: number;
  readonly usableFree: number;
}

export interface ClusterFacts {
  readonly pools: readonly PoolFacts[];
  readonly rebalance: RebalanceMeta | undefined;
}

function label(p: PoolFacts): string {
  return `pool ${p.id} (${p.cmdline})`;
}

function notAllowed(message: string): SvcError {
  return new SvcError('XSvcDecommissionNotAllowed', message);
}

/** Rule 6, first half: decommission needs a multi-pool deployment of ellipsis pools. */
function requireMultiPoolEllipsis(f: ClusterFacts): void {
  if (f.pools.length < 2) throw new SvcError('NotImplemented', 'decommission needs a multi-pool deployment; this deployment has one pool');
  const legacy = f.pools.find((p) => !p.ellipsis);
  if (legacy) throw new SvcError('NotImplemented', `decommission needs every pool to be an ellipsis expression; ${label(legacy)} is a legacy (non-ellipsis) argument`);
}

/**
 * Validates a decommission batch as a whole (rule 4): unknown targets never
 * get here (the parameter validator refuses them); duplicates, targets
 * already queued, active or completed, and failed or canceled targets that
 * were not cleared are refused; at least one pool must stay active; the
 * remaining active pools need free space ≥ 1.3 × the used bytes of the batch.
 * A failed or canceled target holding unresolved listing entries is retried
 * by a new start without a clear (the state table's retry path).
 */
export function checkDecommissionStart(f: ClusterFacts, targets: readonly number[]): void {
  requireMultiPoolEllipsis(f);
  if (targets.length === 0) throw new SvcError('InvalidArgument', 'name at least one pool to decommission');
  const seen = new Set<number>();
  for (const t of targets) {
    if (f.pools[t] === undefined) throw new SvcError('InvalidArgument', `specified pool index ${t} not found`);
    if (seen.has(t)) throw new SvcError('InvalidArgument', `${label(f.pools[t])} is named twice in one request`);
    seen.add(t);
  }
  if (rebalanceRunning(f.rebalance)) {
    throw new SvcError('XSvcAdminRebalanceAlreadyStarted', 'cannot start decommission while a rebalance is in progress; stop it first (svc rebalance stop)');
  }
  for (const t of targets) {
    const p = f.pools[t]!;
    const d = p.decommission;
    if (d === null) continue;
    if (d.state === 'queued' || d.state === 'active') throw notAllowed(`${label(p)} is already being decommissioned (${d.state})`);
    if (d.state === 'completed') throw notAllowed(`${label(p)} is already decommissioned; remove it from the launch command`);
    if (d.unresolvedEntries === 0) {
      throw notAllowed(`${label(p)} holds a ${d.state} decommission; clear it first (POST pools/clear, svc decommission clear) and start again`);
    }
  }
  const remaining = f.pools.filter((p) => !seen.has(p.id) && p.decommission === null);
  if (remaining.length === 0) throw notAllowed('decommissioning every pool is not allowed: at least one active pool must remain');
  const needed = targets.reduce((a, t) => a + f.pools[t]!.usableUsed, 0) * DECOMMISSION_CAPACITY_FACTOR;
  const free = remaining.reduce((a, p) => a + p.usableFree, 0);
  if (free < needed) {
    throw notAllowed(
      `insufficient target pool capacity: the remaining active pools have ${free} bytes free, the drained pools use ${Math.ceil(needed / DECOMMISSION_CAPACITY_FACTOR)} bytes and need ${Math.ceil(needed)} (plus 30 percent)`,
    );
  }
}

/** Cancel applies to a `queued` or `active` entry; anything else is refused. */
export function checkDecommissionCancel(f: ClusterFacts, pool: number): void {
  requireMultiPoolEllipsis(f);
  const p = f.pools[pool];
  if (p === undefined) throw new SvcError('InvalidArgument', `specified pool index ${pool} not found`);
  const d = p.decommission;
  if (d === null) throw notAllowed(`${label(p)} is not being decommissioned; nothing to cancel`);
  if (isTerminal(d.state)) throw notAllowed(`the decommission of ${label(p)} is already ${d.state}; nothing to cancel`);
}

/**
 * Clear removes a `failed` or `canceled` entry (its data is never moved back).
 * A pool without an entry has nothing to clear: `'none'`, and nothing changes.
 */
export function checkDecommissionClear(f: ClusterFacts, pool: number): 'clear' | 'none' {
  requireMultiPoolEllipsis(f);
  const p = f.pools[pool];
  if (p === undefined) throw new SvcError('InvalidArgument', `specified pool index ${pool} not found`);
  const d = p.decommission;
  if (d === null) return 'none';
  if (d.state === 'queued' || d.state === 'active') throw notAllowed(`the decommission of ${label(p)} is ${d.state}; cancel it first (svc decommission cancel)`);
  if (d.state === 'completed') throw notAllowed(`${label(p)} is decommissioned; a completed entry stays until the pool is removed from the launch command`);
  return 'clear';
}

/** Rule 6, second half, and the rebalance table's start row. */
export function checkRebalanceStart(f: ClusterFacts): void {
  if (f.pools.length < 2) throw new SvcError('NotImplemented', 'rebalance needs more than one pool; this deployment has one');
  if (f.pools.some((p) => p.decommission !== null && !isTerminal(p.decommission.state))) {
    throw new SvcError('XSvcRebalanceNotAllowed', 'cannot start rebalance while decommission is in progress');
  }
  if (rebalanceRunning(f.rebalance)) throw new SvcError('XSvcAdminRebalanceAlreadyStarted', 'rebalance is already in progress');
}

/** Stop of a running rebalance; `'none'` when there is nothing to stop (nothing changes). */
export function checkRebalanceStop(f: ClusterFacts): 'stop' | 'none' {
  return rebalanceRunning(f.rebalance) ? 'stop' : 'none';
}
