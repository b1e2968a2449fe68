/**
 * The reconcile state machine (shared operator design §3), as one pure
 * function: `planReconcile(cluster, observation, context)` → actions, the
 * complete new status, events and when to look again.
 *
 * Every phase is idempotent and guarded by observation, and the operation in
 * flight is journaled in `status.operation` (written before its actions
 * run), so an operator that crashes at any point resumes where it was:
 * - "provision" applies objects (server-side apply is idempotent);
 * - "restart" deletes only pods whose launch hash differs from the target;
 * - "start rebalance" / "start decommission" first look at the server's
 *   status and adopt what already runs.
 * One disruptive operation at a time; a spec change that needs another waits
 * (`Reconciling`, reason `Queued`).
 */
import { rebalanceActive } from '../admin/types.ts';
import type { ConditionT, PoolStatus, SvcCluster, SvcClusterStatus } from '../crd/svccluster.ts';
import { pdbName, statefulSetName } from '../topology/names.ts';
import { launchConfig, poolExpression, sameExpression, shortHash } from '../topology/volumes.ts';
import { type ConditionInput, type Reason, setCondition } from './conditions.ts';
import type { Action, Observation, Plan, PlanContext } from './observation.ts';
import { endpoints, templateHash } from './render.ts';
import { parseQuantity } from './quantity.ts';
import { launchedPoolNames, validateSpec } from './validate.ts';
import { allReadyOn, applied, applySteadyState, Pass, podsOf, runningPools, specPool } from './plan/steps.ts';
import { addPools } from './plan/add-pools.ts';
import { cancelDecommission, removePool } from './plan/remove-pool.ts';
import { coordinatedRestartOp, rollingRestart } from './plan/restart.ts';
import { manualRebalance } from './plan/rebalance.ts';

export { CAPACITY_RETRY_MS, DEFAULT_READY_TIMEOUT_SECONDS, MAX_DRAIN_ATTEMPTS } from './plan/steps.ts';

function startNextOperation(pass: Pass): void {
  const c = pass.c;
  const launched = launchedPoolNames(c);
  const hasApplied = applied(pass) !== undefined;
  const removed = new Set((pass.status.pools ?? []).filter((p) => p.state === 'Removed').map((p) => p.name));

  // 1. Remove: the first pool whose intent is decommission and that still runs.
  const toRemove = c.spec.pools.find((p) => p.decommission === true && launched.has(p.name) && pass.poolStatus(p.name)?.state !== 'Detaching');
  const retry = c.metadata.annotations?.['svc.io/retry-decommission'];
  if (toRemove) {
    const sp = pass.poolStatus(toRemove.name)!;
    if ((sp.state === 'DrainFailed' || sp.state === 'DrainCanceled') && (retry === undefined || retry === sp.decommission?.retryToken)) {
      pass.stall = { reason: sp.state === 'DrainFailed' ? 'DecommissionFailed' : 'DecommissionCanceled', message: `decommission of ${toRemove.name} stopped (${sp.state}); annotate svc.io/retry-decommission to retry` };
      return;
    }
    const remaining = runningPools(pass).filter((p) => p.name !== toRemove.name);
    const target = launchConfig(c, remaining, pass.domain);
    pass.startOp('RemovePool', rebalanceActive(pass.obs.admin?.rebalance) ? 'StoppingRebalance' : 'StartingDecommission', [toRemove.name], target);
    if (retry !== undefined && sp.decommission) sp.decommission.retryToken = retry;
    removePool(pass);
    return;
  }
  // 2. Withdrawn intent on a pool whose drain stopped: clear the entry, keep the pool.
  const toRestore = c.spec.pools.find((p) => p.decommission !== true && ['DrainFailed', 'DrainCanceled'].includes(pass.poolStatus(p.name)?.state ?? ''));
  if (toRestore) {
    pass.startOp('CancelDecommission', 'Canceling', [toRestore.name]);
    cancelDecommission(pass);
    return;
  }
  const drainedKept = c.spec.pools.find((p) => p.decommission !== true && pass.poolStatus(p.name)?.state === 'Drained');
  if (drainedKept) {
    pass.stall = { reason: 'DecommissionCompleted', message: `pool ${drainedKept.name} finished draining and takes no new data; set decommission: true to remove it` };
    return;
  }
  // 3. Add: pools in the spec that never ran.
  const toAdd = c.spec.pools.filter((p) => !launched.has(p.name) && !removed.has(p.name) && p.decommission !== true);
  if (toAdd.length > 0) {
    const running = runningPools(pass);
    const target = launchConfig(c, [...running, ...toAdd], pass.domain);
    pass.startOp('AddPools', 'ProvisioningNewPools', toAdd.map((p) => p.name), target);
    addPools(pass, startNextOperation);
    return;
  }
  if (!hasApplied) return;
  // 4. Launch settings changed (parity, set width, image under Coordinated).
  const desired = launchConfig(c, runningPools(pass), pass.domain);
  if (desired.hash !== applied(pass)!.hash) {
    pass.startOp('CoordinatedRestart', 'RestartingCluster', [], desired);
    coordinatedRestartOp(pass);
    return;
  }
  // 5. Anything else in the pod template: rolling restart.
  const stale = pass.obs.pods.some((p) => {
    const sp = specPool(c, p.pool);
    return sp !== undefined && launched.has(p.pool) && p.templateHash !== undefined && p.templateHash !== templateHash(c, sp);
  });
  if (stale) {
    pass.startOp('RollingRestart', 'RollingPods', []);
    rollingRestart(pass);
    return;
  }
  // 6. A rebalance requested by changing spec.rebalance.requestId.
  const requestId = c.spec.rebalance?.requestId;
  if (requestId && requestId !== pass.status.rebalance?.requestId && runningPools(pass).length > 1) {
    pass.status.rebalance = { ...(pass.status.rebalance ?? {}), requestId };
    pass.startOp('Rebalance', 'StartingRebalance', []);
    manualRebalance(pass);
  }
}

function continueOperation(pass: Pass): void {
  switch (pass.op!.type) {
    case 'AddPools':
      return addPools(pass, startNextOperation);
    case 'RemovePool':
      return removePool(pass);
    case 'CancelDecommission':
      return cancelDecommission(pass);
    case 'CoordinatedRestart':
      return coordinatedRestartOp(pass);
    case 'RollingRestart':
      return rollingRestart(pass);
    case 'Rebalance':
      return manualRebalance(pass);
  }
}

// ------------------------------------------------------------- status

function refreshPoolStatus(pass: Pass): void {
  const c = pass.c;
  const launched = launchedPoolNames({ ...c, status: pass.status });
  for (const p of c.spec.pools) {
    const sp = pass.poolStatus(p.name);
    if (!sp) pass.setPool(p.name, { state: p.decommission === true ? 'Removed' : 'Pending' });
    const sts = pass.obs.statefulSets.find((s) => s.pool === p.name);
    const pods = podsOf(pass.obs, [p.name]);
    const patch: Partial<PoolStatus> = { statefulSet: statefulSetName(c.metadata.name, p.name) };
    if (sts) {
      patch.replicas = sts.replicas;
      patch.readyReplicas = pods.filter((x) => x.ready).length;
      patch.updatedReplicas = pods.filter((x) => x.launchHash === applied(pass)?.hash && x.templateHash === templateHash(c, p)).length;
    }
    if (launched.has(p.name) || pass.poolStatus(p.name)?.expression === undefined) {
      patch.expression = poolExpression(c, p, pass.domain);
      patch.expressionHash = shortHash(patch.expression);
    }
    if (pass.poolStatus(p.name)?.state !== 'Removed') pass.setPool(p.name, patch);
  }
  // Forget removed pools once their entry left the spec.
  pass.status.pools = (pass.status.pools ?? []).filter((sp) => specPool(c, sp.name) || sp.state !== 'Removed');
  const draining = pass.op && (pass.op.type === 'RemovePool' || pass.op.type === 'CancelDecommission') ? pass.op.pools ?? [] : [];
  for (const sp of pass.status.pools) {
    const admin = pass.obs.admin?.pools?.find((a) => sameExpression(a.cmdline, sp.expression));
    if (admin && launched.has(sp.name) && !draining.includes(sp.name)) sp.index = admin.id;
  }
}

function phaseOf(pass: Pass): NonNullable<SvcClusterStatus['phase']> {
  if (pass.stall) return 'Stalled';
  const op = pass.op;
  if (op) {
    if (op.phase === 'Rebalancing' || op.phase === 'StartingRebalance') return 'Rebalancing';
    if (op.type === 'AddPools') return applied(pass) ? 'Expanding' : 'Provisioning';
    if (op.type === 'RemovePool' || op.type === 'CancelDecommission') return 'Decommissioning';
    return 'Restarting';
  }
  if (!applied(pass)) return 'Pending';
  if (pass.degraded) return 'Degraded';
  return 'Ready';
}

function writeConditions(pass: Pass): void {
  const gen = pass.c.metadata.generation;
  const now = pass.obs.now;
  let conds: ConditionT[] = pass.status.conditions ?? [];
  const set = (i: ConditionInput) => {
    conds = setCondition(conds, i, now, gen);
  };
  const op = pass.op;
  const stall = pass.stall;
  const specInvalid = stall && ['SpecInvalid', 'PoolRemovedWithoutDecommission', 'ParityExceedsNarrowestPool', 'SetLayoutUnsupported', 'LastActivePool', 'PvcShrinkUnsupported', 'CredentialsMissing'].includes(stall.reason);
  set(specInvalid ? { type: 'SpecValid', status: 'False', reason: stall.reason, message: stall.message } : { type: 'SpecValid', status: 'True', reason: 'AsExpected', message: 'the spec passes the server topology rules' });
  set(stall ? { type: 'Stalled', status: 'True', reason: stall.reason, message: stall.message } : { type: 'Stalled', status: 'False', reason: 'AsExpected', message: '' });

  const paused = pass.c.spec.paused === true;
  const busy = !stall && (op !== undefined || pass.progress !== undefined);
  if (paused) set({ type: 'Reconciling', status: 'False', reason: 'Paused', message: 'spec.paused is true: the operator does not act on this cluster' });
  else if (busy) {
    const reason = pass.progress?.reason ?? 'Queued';
    set({ type: 'Reconciling', status: 'True', reason, message: pass.progress?.message ?? `${op?.type ?? ''} ${op?.phase ?? ''}`.trim() });
  } else set({ type: 'Reconciling', status: 'False', reason: 'AsExpected', message: '' });

  const running = runningPools(pass).map((p) => p.name);
  const launch = applied(pass);
  const podsReady = launch !== undefined && running.length > 0 && allReadyOn(pass, running, launch.hash).ok;
  set(podsReady ? { type: 'PoolsReady', status: 'True', reason: 'AsExpected', message: `${running.length} pools ready` } : { type: 'PoolsReady', status: 'False', reason: 'PodsNotReady', message: 'not every pod of every running pool is ready' });

  const drain = op && (op.type === 'RemovePool' || op.type === 'CancelDecommission') && ['StartingDecommission', 'Draining', 'Canceling'].includes(op.phase);
  set(drain ? { type: 'DecommissionInProgress', status: 'True', reason: pass.progress?.reason ?? 'DecommissionActive', message: op.message ?? `draining ${op.pools?.join(', ')}` } : { type: 'DecommissionInProgress', status: 'False', reason: 'AsExpected', message: '' });
  const rebalancing = op && (op.phase === 'Rebalancing' || op.phase === 'StartingRebalance');
  set(rebalancing ? { type: 'RebalanceInProgress', status: 'True', reason: 'RebalanceRunning', message: op.message ?? 'rebalancing' } : { type: 'RebalanceInProgress', status: 'False', reason: 'AsExpected', message: '' });

  const failedDrain = (pass.status.pools ?? []).find((p) => p.state === 'DrainFailed');
  if (!pass.degraded && failedDrain) pass.degraded = { reason: 'DecommissionFailed', message: `the decommission of ${failedDrain.name} failed (objects stay readable where they are)` };
  const rbError = pass.status.rebalance?.lastError;
  if (!pass.degraded && rbError) pass.degraded = { reason: 'RebalanceFailed', message: `${rbError}; change spec.rebalance.requestId to run it again` };
  if (!pass.degraded && !op && launch && !podsReady) pass.degraded = { reason: 'PodsNotReady', message: 'some pods are not ready' };
  // spec.tls: the certificate the pods serve (absent without spec.tls)
  const tls = pass.obs.tls;
  if (pass.c.spec.tls && tls) {
    set(tls.ready ? { type: 'TlsReady', status: 'True', reason: 'AsExpected', message: tls.message } : { type: 'TlsReady', status: 'False', reason: tls.reason as Reason, message: tls.message });
    if (!tls.ready && !pass.degraded && launch) pass.degraded = { reason: tls.reason as Reason, message: tls.message };
  } else conds = conds.filter((x) => x.type !== 'TlsReady');
  set(pass.degraded ? { type: 'Degraded', status: 'True', reason: pass.degraded.reason, message: pass.degraded.message } : { type: 'Degraded', status: 'False', reason: 'AsExpected', message: '' });

  const ready = !stall && !op && !pass.progress && podsReady && !paused;
  const readyReason: Reason = stall ? stall.reason : paused ? 'Paused' : (pass.progress?.reason ?? (op ? 'Queued' : podsReady ? 'AsExpected' : 'PodsNotReady'));
  set({ type: 'Ready', status: ready ? 'True' : 'False', reason: ready ? 'AsExpected' : readyReason, message: ready ? 'the cluster serves S3 on every pod' : (stall?.message ?? pass.progress?.message ?? 'not ready') });
  pass.status.conditions = conds;
}

function summarize(pass: Pass): void {
  const s = pass.status;
  s.observedGeneration = pass.c.metadata.generation;
  s.phase = phaseOf(pass);
  const desired = pass.c.spec.pools.filter((p) => p.decommission !== true).length;
  const active = (s.pools ?? []).filter((p) => p.state === 'Active').length;
  s.poolsSummary = `${active}/${desired}`;
  s.endpoints = endpoints(pass.c, pass.domain);
  const pods = pass.obs.pods;
  s.health = { ...(s.health ?? {}), readyNodes: pods.filter((p) => p.ready).length, totalNodes: pods.length };
  const running = runningPools(pass);
  if (running.length > 0 || pass.c.spec.pools.length > 0) {
    const target = running.length > 0 ? running : pass.c.spec.pools.filter((p) => p.decommission !== true);
    s.launchConfig = { ...(s.launchConfig ?? {}), desiredHash: launchConfig(pass.c, target, pass.domain).hash };
  }
  if (pass.stall) pass.requeueMs = Math.min(pass.requeueMs, pass.ctx.stalledMs);
  // A certificate the operator renews itself: look again when it is due (a missing one: soon).
  const tls = pass.obs.tls;
  if (tls?.renewAtMs !== undefined) pass.requeueMs = Math.min(pass.requeueMs, Math.max(1_000, tls.renewAtMs - pass.obs.now.getTime()));
  else if (tls && !tls.ready) pass.requeueMs = Math.min(pass.requeueMs, 5_000);
}

// ------------------------------------------------------------- entry

export function planReconcile(c: SvcCluster, obs: Observation, ctx: PlanContext): Plan {
  const pass = new Pass(c, obs, ctx);
  refreshPoolStatus(pass);
  if (c.spec.paused === true) {
    writeConditions(pass);
    summarize(pass);
    return finish(pass);
  }
  const claimOf = (pool: string) => obs.statefulSets.find((s) => s.pool === pool);
  const issues = validateSpec(c, ctx.clusterDomain, claimOf);
  if (obs.credentialsProblem) issues.unshift({ reason: 'CredentialsMissing', message: obs.credentialsProblem });
  // A drain in flight keeps going even if an unrelated edit is invalid; nothing else starts.
  if (issues.length > 0 && !(pass.op && ['Draining', 'Canceling'].includes(pass.op.phase) && !obs.credentialsProblem)) {
    pass.stall = { reason: issues[0]!.reason, message: issues.map((i) => i.message).join('; ') };
    pass.event('Warning', issues[0]!.reason, pass.stall.message);
  } else if (pass.op) {
    continueOperation(pass);
  } else {
    startNextOperation(pass);
  }
  if (!pass.op && !pass.stall) applySteadyState(pass);
  if (pass.op && pass.op.lastError && !pass.stall) {
    pass.progress ??= { reason: 'Queued', message: `retrying after ${pass.op.lastError.action} failed: ${pass.op.lastError.message}` };
  }
  // Pool expansion of PVCs: grow in place, never shrink (shrink is a SpecInvalid stall above).
  if (!pass.stall) {
    for (const p of c.spec.pools) {
      const want = p.volumeClaimTemplate.resources.requests.storage;
      const have = obs.pvcs.filter((v) => v.pool === p.name && v.storage !== undefined && parseQuantity(v.storage) < parseQuantity(want));
      if (have.length > 0 && launchedPoolNames({ ...c, status: pass.status }).has(p.name)) pass.actions.push({ kind: 'expandPvcs', pool: p.name, storage: want });
    }
  }
  writeConditions(pass);
  summarize(pass);
  return finish(pass);
}

/** When a pass advanced through several phases, only the last apply of each object stays (at its last position). */
function dedupeApplies(actions: Action[]): Action[] {
  const key = (a: Action) => (a.kind === 'apply' ? `${a.object.kind}/${a.object.metadata.name}` : undefined);
  const last = new Map<string, number>();
  actions.forEach((a, i) => {
    const k = key(a);
    if (k) last.set(k, i);
  });
  return actions.filter((a, i) => {
    const k = key(a);
    return k === undefined || last.get(k) === i;
  });
}

/**
 * PodDisruptionBudgets of pools that have no StatefulSet any more (removed,
 * or never joined and discarded) go, and so does the cluster-wide one of
 * earlier releases; a paused or stalled cluster keeps what it has.
 */
function pruneBudgets(pass: Pass): void {
  if (pass.c.spec.paused === true || pass.stall) return;
  const deleted = new Set(pass.actions.flatMap((a) => (a.kind === 'deleteStatefulSet' ? [a.name] : [])));
  const keep = new Set<string>();
  for (const s of pass.obs.statefulSets) if (!deleted.has(s.name)) keep.add(pdbName(pass.c.metadata.name, s.pool));
  for (const a of pass.actions) if (a.kind === 'apply' && a.object.kind === 'PodDisruptionBudget') keep.add(a.object.metadata.name);
  for (const b of pass.obs.pdbs ?? []) if (!keep.has(b)) pass.actions.push({ kind: 'deletePdb', name: b });
}

function finish(pass: Pass): Plan {
  pruneBudgets(pass);
  return { actions: dedupeApplies(pass.actions), status: pass.status, requeueAfterMs: pass.requeueMs, events: pass.events };
}

/** Status equality that ignores nothing: the controller writes status only when this is false. */
export function statusEqual(a: SvcClusterStatus | undefined, b: SvcClusterStatus | undefined): boolean {
  return JSON.stringify(a ?? {}) === JSON.stringify(b ?? {});
}
