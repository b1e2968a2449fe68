/**
 * Which pools take new writes, derived from the persisted records alone
 * (`pool.bin`, `rebalance.bin`), so every node computes the same answer
 * from the same records and a restarted node restores it before serving:
 *
 * - a pool with a decommission entry in any state (queued, active,
 *   completed, failed, canceled) is closed: no new objects, no new uploads,
 *   no new delete markers; a write of a key living there is `SlowDown`.
 *   Failed and canceled pools stay closed ("blocked") until the entry is
 *   cleared, so a pool an operator meant to remove never fills up again;
 * - a pool taking part in a running rebalance (state `started`, not
 *   stopping) is fenced: new keys go to the other pools, keys living there
 *   still take writes in place (the mover re-reads them under their lock);
 * - every other pool is open.
 *
 * Pure, plus `applyAdmission` which sets it on a node's pools.
 */
import { type PoolMeta, projectPoolMeta } from '../../object/records/pool-meta.ts';
import type { RebalanceMeta } from '../../object/records/rebalance-meta.ts';

export interface PoolAdmissionPlan {
  pool: number;
  admitting: boolean;
  /** `decommission` or `rebalance` when not admitting. */
  reason?: 'decommission' | 'rebalance';
  /** Closed to new keys only. */
  existingKeys?: boolean;
}

export function admissionPlan(cmdlines: readonly string[], poolMeta: PoolMeta | undefined, rebalance: RebalanceMeta | undefined): PoolAdmissionPlan[] {
  const configured = projectPoolMeta(poolMeta, cmdlines).pools;
  return configured.map((p): PoolAdmissionPlan => {
    if (p.decommission !== null) return { pool: p.id, admitting: false, reason: 'decommission' };
    const r = rebalance?.pools.find((e) => e.cmdline === p.cmdline);
    if (r !== undefined && r.participating && r.state === 'started' && !r.stopping) return { pool: p.id, admitting: false, reason: 'rebalance', existingKeys: true };
    return { pool: p.id, admitting: true };
  });
}

/** The part of the object layer admission is applied to. */
export interface AdmissionTarget {
  setPoolAdmission(pool: number, admitting: boolean, reason?: string, opts?: { existingKeys?: boolean }): void;
  poolAdmission(): readonly { pool: number; admitting: boolean; reason?: string; existingKeys?: boolean }[];
}

/** Sets `plan` on `target`; returns the pools whose admission changed. */
export function applyAdmission(target: AdmissionTarget, plan: readonly PoolAdmissionPlan[]): PoolAdmissionPlan[] {
  const now = target.poolAdmission();
  const changed: PoolAdmissionPlan[] = [];
  for (const p of plan) {
    const cur = now[p.pool];
    if (cur !== undefined && cur.admitting === p.admitting && (cur.reason ?? undefined) === p.reason && (cur.existingKeys ?? false) === (p.existingKeys ?? false)) continue;
    target.setPoolAdmission(p.pool, p.admitting, p.reason, p.existingKeys ? { existingKeys: true } : {});
    changed.push(p);
  }
  return changed;
}
