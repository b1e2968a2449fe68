/**
 * What a rebalance sets out to do, from the pools' measured capacity. Pure.
 *
 * Fill = usable bytes in use / usable capacity. The target is the cluster's
 * mean fill at start (Σ used / Σ capacity, which moves between pools do not
 * change). A pool more than `PARTICIPATE_MARGIN` above it gives objects
 * away until it is within `STOP_MARGIN` of it; the others only receive.
 * With no pool that far above the mean there is nothing to do: the
 * rebalance completes at once, having moved nothing; every pool says
 * `participating: false` (not an error: `lastError` stays empty).
 */
import { usableUsed } from '../../object/admin/data-movement-admin.ts';
import { emptyProgress, emptyStopPropagation, type RebalanceMeta } from '../../object/records/rebalance-meta.ts';
import type { PoolCapacity } from '../../object/types.ts';

/** A pool this far (fraction of its capacity) above the mean fill takes part. */
export const PARTICIPATE_MARGIN = 0.02;
/** A participating pool stops once its fill is within this of the mean. */
export const STOP_MARGIN = 0.01;

/** Fill of a pool now (0 for a pool without capacity). */
export function fillOf(cap: PoolCapacity | undefined): number {
  if (cap === undefined || cap.usableTotal <= 0) return 0;
  return usableUsed(cap) / cap.usableTotal;
}

/** The mean fill a rebalance aims at, from its record. */
export function targetFill(meta: RebalanceMeta): number {
  const cap = meta.pools.reduce((a, p) => a + p.initCapacity, 0);
  const used = meta.pools.reduce((a, p) => a + Math.max(0, p.initCapacity - p.initFreeSpace), 0);
  return cap > 0 ? used / cap : 0;
}

/** The record of a new rebalance over `pools` (in configured order) measured as `caps`. */
export function planRebalance(id: string, now: number, pools: readonly { id: number; cmdline: string }[], caps: readonly (PoolCapacity | undefined)[]): RebalanceMeta {
  const measured = pools.map((p) => {
    const cap = caps[p.id];
    const total = cap?.usableTotal ?? 0;
    return { p, total, free: Math.max(0, total - usableUsed(cap)), fill: fillOf(cap) };
  });
  const capSum = measured.reduce((a, m) => a + m.total, 0);
  const usedSum = measured.reduce((a, m) => a + (m.total - m.free), 0);
  const mean = capSum > 0 ? usedSum / capSum : 0;
  const participating = measured.map((m) => m.total > 0 && m.fill > mean + PARTICIPATE_MARGIN);
  const any = participating.some(Boolean);
  // With no pool above the margin the rebalance completes at once. That is not an error:
  // `lastError` stays empty (clients such as the operator read a non-empty one as a problem)
  // and `participating: false` on every pool says why nothing moved.
  return {
    id,
    startedAt: now,
    stoppedAt: 0,
    stopPropagation: emptyStopPropagation(),
    pools: measured.map((m, i) => ({
      cmdline: m.p.cmdline,
      id: m.p.id,
      participating: participating[i]!,
      state: participating[i] ? 'started' : any ? 'none' : 'completed',
      stopping: false,
      initFreeSpace: m.free,
      initCapacity: m.total,
      lastError: null,
      warningCount: 0,
      warnings: [],
      progress: emptyProgress(),
    })),
  };
}
