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
import { decommissionPhase, isDecommissionRunning, isInsufficientCapacity, isRebalanceRunning, isUnknownPool, rebalanceActive, rebalanceId, rebalanceOutcome } from '../admin/types.ts';
import type { ConditionT, LaunchConfigT, Operation, OperationPhase, OperationType, PoolSpec, PoolStatus, SvcCluster, SvcClusterStatus } from '../crd/svccluster.ts';
import { clusterDomain, consoleServiceName, pdbName, podName, statefulSetName } from '../topology/names.ts';
import { launchConfig, poolExpression, sameExpression, shortHash, volumeList } from '../topology/volumes.ts';
import { type ConditionInput, type Reason, setCondition } from './conditions.ts';
import type { Action, EventSpec, Observation, Plan, PlanContext, PodObs } from './observation.ts';
import { buildPdb, buildServiceAccount, buildServices, buildStatefulSet, endpoints, templateHash } from './render.ts';
import { parseQuantity } from './quantity.ts';
import { launchedPoolNames, validateSpec } from './validate.ts';

/** Automatic decommission retries (clear, then start again) before a failed drain needs a human. */
export const MAX_DRAIN_ATTEMPTS = 3;
/** How long to wait before retrying a decommission refused for capacity. */
export const CAPACITY_RETRY_MS = 10 * 60_000;
export const DEFAULT_READY_TIMEOUT_SECONDS = 600;

interface Stall {
  readonly reason: Reason;
  readonly message: string;
}

/** Mutable state of one planning pass. */
class Pass {
  readonly actions: Action[] = [];
  readonly events: EventSpec[] = [];
  status: SvcClusterStatus;
  stall: Stall | undefined;
  /** Why the cluster is not simply Ready (Reconciling reason). */
  progress: { reason: Reason; message: string } | undefined;
  degraded: { reason: Reason; message: string } | undefined;
  requeueMs: number;
  readonly domain: string;
  readonly c: SvcCluster;
  readonly obs: Observation;
  readonly ctx: PlanContext;

  constructor(c: SvcCluster, obs: Observation, ctx: PlanContext) {
    this.c = c;
    this.obs = obs;
    this.ctx = ctx;
    this.status = structuredClone(c.status ?? {});
    this.requeueMs = ctx.idleMs;
    this.domain = clusterDomain(c, ctx.clusterDomain);
  }

  get now(): string {
    return this.obs.now.toISOString();
  }

  event(type: 'Normal' | 'Warning', reason: string, message: string): void {
    this.events.push({ type, reason, message });
  }

  poll(): void {
    this.requeueMs = Math.min(this.requeueMs, this.ctx.pollMs);
  }

  poolStatus(name: string): PoolStatus | undefined {
    return this.status.pools?.find((p) => p.name === name);
  }

  setPool(name: string, patch: Partial<PoolStatus>): void {
    const pools = (this.status.pools ??= []);
    const i = pools.findIndex((p) => p.name === name);
    if (i >= 0) pools[i] = { ...pools[i]!, ...patch };
    else pools.push({ name, state: 'Pending', ...patch });
  }

  get op(): Operation | undefined {
    return this.status.operation;
  }

  startOp(type: OperationType, phase: OperationPhase, pools: string[], target?: LaunchConfigT): Operation {
    const op: Operation = { id: this.ctx.newId(), type, phase, attempt: 1, startedAt: this.now, phaseStartedAt: this.now, pools };
    if (target) op.target = target;
    if (this.c.metadata.generation !== undefined) op.observedGeneration = this.c.metadata.generation;
    this.status.operation = op;
    this.event('Normal', `${type}Started`, `${type} ${pools.join(', ')}`.trim());
    return op;
  }

  setPhase(phase: OperationPhase, message?: string): void {
    const op = this.status.operation!;
    op.phase = phase;
    op.phaseStartedAt = this.now;
    delete op.lastError;
    if (message !== undefined) op.message = message;
    else delete op.message;
  }

  endOp(reason: string, message: string): void {
    this.event('Normal', reason, message);
    delete this.status.operation;
  }

  phaseAgeMs(): number {
    const op = this.status.operation;
    return op ? this.obs.now.getTime() - Date.parse(op.phaseStartedAt) : 0;
  }

  readyTimeoutMs(): number {
    return (this.c.spec.restartPolicy?.readyTimeoutSeconds ?? DEFAULT_READY_TIMEOUT_SECONDS) * 1000;
  }
}

const specPool = (c: SvcCluster, name: string): PoolSpec | undefined => c.spec.pools.find((p) => p.name === name);

function podsOf(obs: Observation, pools: Iterable<string>): PodObs[] {
  const set = new Set(pools);
  return obs.pods.filter((p) => set.has(p.pool));
}

/** Pods of `pools` expected to exist: servers × pools, by name. */
function expectedPodNames(c: SvcCluster, pools: Iterable<string>): string[] {
  const out: string[] = [];
  for (const name of pools) {
    const p = specPool(c, name);
    if (!p) continue;
    for (let i = 0; i < p.servers; i++) out.push(podName(c.metadata.name, name, i));
  }
  return out;
}

/** Every expected pod exists, runs `hash` and is Ready. */
function allReadyOn(pass: Pass, pools: readonly string[], hash: string): { ok: boolean; waiting: string[] } {
  const byName = new Map(pass.obs.pods.map((p) => [p.name, p]));
  const waiting = expectedPodNames(pass.c, pools).filter((n) => {
    const p = byName.get(n);
    return !p || p.terminating || p.launchHash !== hash || !p.ready;
  });
  return { ok: waiting.length === 0, waiting };
}

function podProblems(pass: Pass, pools: readonly string[]): Stall | undefined {
  for (const pod of podsOf(pass.obs, pools)) {
    if (pod.waitingReason === 'ImagePullBackOff' || pod.waitingReason === 'ErrImagePull' || pod.waitingReason === 'InvalidImageName') {
      return { reason: 'ImagePullBackOff', message: `pod ${pod.name} cannot pull its image (${pod.waitingReason})` };
    }
  }
  // The scheduler may still find room (an autoscaler adds nodes): only after the timeout.
  const unschedulable = podsOf(pass.obs, pools).filter((p) => p.unschedulable === true);
  if (unschedulable.length > 0 && pass.phaseAgeMs() > pass.readyTimeoutMs()) {
    return { reason: 'Unschedulable', message: `pods not scheduled after ${Math.round(pass.phaseAgeMs() / 1000)}s: ${unschedulable.map((p) => p.name).join(', ')}` };
  }
  return undefined;
}

function pvcProblems(pass: Pass, pools: readonly string[]): Stall | undefined {
  const pending = pass.obs.pvcs.filter((v) => pools.includes(v.pool) && v.phase === 'Pending');
  if (pending.length > 0 && pass.phaseAgeMs() > pass.readyTimeoutMs()) {
    return { reason: 'PvcPending', message: `PVCs not bound after ${Math.round(pass.phaseAgeMs() / 1000)}s: ${pending.map((v) => v.name).join(', ')}` };
  }
  return undefined;
}

// ---------------------------------------------------------------- children

/** Applies every StatefulSet of `pools` with `launch`, the Services, PDB and ServiceAccount. */
function applyChildren(pass: Pass, pools: readonly { pool: PoolSpec; launch: LaunchConfigT; replicas?: number }[]): void {
  const c = pass.c;
  pass.actions.push({ kind: 'apply', object: buildServiceAccount(c) });
  for (const s of buildServices(c)) pass.actions.push({ kind: 'apply', object: s });
  if (c.spec.services?.console?.enabled === false) pass.actions.push({ kind: 'deleteService', name: consoleServiceName(c.metadata.name) });
  for (const { pool, launch, replicas } of pools) {
    pass.actions.push({ kind: 'apply', object: buildPdb(c, pool, launch) });
    // volumeClaimTemplates are immutable: an existing StatefulSet keeps the size it was created with (PVCs grow in place).
    const claimStorage = pass.obs.statefulSets.find((s) => s.pool === pool.name)?.storage;
    pass.actions.push({ kind: 'apply', object: buildStatefulSet(c, pool, launch, { replicas, claimStorage }) });
  }
}

function applied(pass: Pass): LaunchConfigT | undefined {
  return pass.status.launchConfig?.applied;
}

/** Pools in the applied configuration, in order. */
function runningPools(pass: Pass): PoolSpec[] {
  const exprs = volumeList(applied(pass)?.volumes);
  return exprs.map((e) => pass.c.spec.pools.find((p) => sameExpression(poolExpression(pass.c, p, pass.domain), e))).filter((p): p is PoolSpec => p !== undefined);
}

/** Idle upkeep: every running pool's StatefulSet with the *applied* launch settings (never the next ones early). */
function applySteadyState(pass: Pass): void {
  const launch = applied(pass);
  if (!launch) return;
  applyChildren(
    pass,
    runningPools(pass).map((pool) => ({ pool, launch })),
  );
}

// ------------------------------------------------------------- operations

/** Admin reads needed and missing: wait (the controller reads on the next pass). */
function needAdmin(pass: Pass): boolean {
  if (pass.obs.admin?.reachable) return true;
  pass.progress = { reason: 'WaitingForAdminApi', message: `waiting for a node to answer the admin API${pass.obs.admin?.error ? `: ${pass.obs.admin.error}` : ''}` };
  pass.poll();
  return false;
}

/** The controller recorded a successful `action` during the current phase. */
function doneInPhase(pass: Pass, action: string): boolean {
  const d = pass.op?.lastDone;
  return d !== undefined && d.action === action && Date.parse(d.at) >= Date.parse(pass.op!.phaseStartedAt);
}

function lastErrorIs(pass: Pass, action: string, pred: (e: { code: string; message: string }) => boolean): boolean {
  const e = pass.op?.lastError;
  return e !== undefined && e.action === action && pred(e);
}

/** RestartingCluster / RestartingWithoutPool: one step of a coordinated restart into `target` over `pools`. */
function coordinatedRestart(pass: Pass, pools: PoolSpec[], target: LaunchConfigT, extra: { pool: PoolSpec; launch: LaunchConfigT; replicas: number }[] = [], rollback = false): boolean {
  const names = pools.map((p) => p.name);
  const ready = allReadyOn(pass, names, target.hash);
  if (ready.ok) return true;
  const which = rollback ? 'previous' : 'new';
  // The template goes onto every StatefulSet right before the pods are
  // deleted (with OnDelete a pod that dies any other way would pick it up).
  applyChildren(pass, [...pools.map((pool) => ({ pool, launch: target })), ...extra]);
  const stale = podsOf(pass.obs, names).filter((p) => !p.terminating && p.launchHash !== target.hash);
  if (stale.length > 0) {
    pass.actions.push({ kind: 'deletePods', names: stale.map((p) => p.name) });
    pass.event('Normal', rollback ? 'RollingBack' : 'RestartingCluster', `restarting ${stale.length} pods together with SVC_VOLUMES=${target.volumes} (${which} configuration)`);
  }
  if (pass.phaseAgeMs() > pass.readyTimeoutMs()) {
    // Never delete pods again: restarting a degraded node does not help.
    pass.stall = { reason: 'WaitingForQuorum', message: `pods not ready on the ${which} configuration after ${Math.round(pass.phaseAgeMs() / 1000)}s: ${ready.waiting.join(', ')}` };
  } else {
    pass.progress = { reason: rollback ? 'RollingBack' : 'RestartingCluster', message: `waiting for ${ready.waiting.length} pods on the ${which} configuration: ${ready.waiting.slice(0, 8).join(', ')}` };
  }
  pass.poll();
  return false;
}

/** RollingBack: `pools` back onto the applied (previous) launch configuration, restarted together. */
function rollBackRestart(pass: Pass, pools: PoolSpec[], extra: { pool: PoolSpec; launch: LaunchConfigT; replicas: number }[] = []): boolean {
  return coordinatedRestart(pass, pools, applied(pass)!, extra, true);
}

/** A coordinated restart ran out of `restartPolicy.readyTimeoutSeconds` without every pod Ready on `hash`. */
function restartTimedOut(pass: Pass, pools: readonly string[], hash: string): { timedOut: boolean; waiting: string[] } {
  const ready = allReadyOn(pass, pools, hash);
  return { timedOut: !ready.ok && pass.phaseAgeMs() > pass.readyTimeoutMs(), waiting: ready.waiting };
}

/** VerifyingTopology: pools/list must list exactly `expected`, in order. */
function verifyTopology(pass: Pass, expected: string[]): boolean {
  if (!needAdmin(pass)) return false;
  const listed = [...(pass.obs.admin!.pools ?? [])].sort((a, b) => a.id - b.id).map((p) => p.cmdline);
  if (listed.join(' ') === expected.join(' ')) {
    for (const p of pass.obs.admin!.pools ?? []) {
      const sp = pass.status.pools?.find((s) => sameExpression(s.expression, p.cmdline));
      if (sp) sp.index = p.id;
    }
    return true;
  }
  pass.stall = { reason: 'TopologyMismatch', message: `pools/list reports [${listed.join(' ')}], expected [${expected.join(' ')}]` };
  pass.poll();
  return false;
}

function commitLaunch(pass: Pass, target: LaunchConfigT): void {
  pass.status.launchConfig = { ...(pass.status.launchConfig ?? {}), applied: target };
}

function rebalanceStep(pass: Pass): 'done' | 'wait' {
  const op = pass.op!;
  if (op.phase === 'StartingRebalance') {
    if (!needAdmin(pass)) return 'wait';
    const rb = pass.obs.admin!.rebalance;
    if (rebalanceActive(rb) || (op.rebalanceId !== undefined && rebalanceId(rb) === op.rebalanceId)) {
      // Adopt a running rebalance (ours, or one started by hand).
      op.rebalanceId = rebalanceId(rb) ?? op.rebalanceId;
      pass.status.rebalance = { id: op.rebalanceId, startedAt: pass.now, requestId: pass.c.spec.rebalance?.requestId ?? pass.status.rebalance?.requestId };
      pass.setPhase('Rebalancing');
      pass.event('Normal', 'RebalanceStarted', `rebalance ${op.rebalanceId ?? ''} running`);
    } else if (lastErrorIs(pass, 'rebalanceStart', isRebalanceRunning)) {
      // Someone started one between our read and our start: adopt it.
      op.rebalanceId = rebalanceId(rb);
      pass.setPhase('Rebalancing');
    } else if (lastErrorIs(pass, 'rebalanceStart', isDecommissionRunning)) {
      pass.progress = { reason: 'RebalanceStarting', message: 'waiting for a running decommission before rebalancing' };
      pass.poll();
      return 'wait';
    } else if (lastErrorIs(pass, 'rebalanceStart', (e) => e.code === 'NotImplemented')) {
      // The server cannot rebalance (one pool, or no rebalance support): the
      // pools joined and the data is safe; surface it instead of waiting forever.
      const why = op.lastError!.message;
      pass.status.rebalance = { ...(pass.status.rebalance ?? {}), finishedAt: pass.now, lastError: `rebalance not started: ${why}` };
      pass.event('Warning', 'RebalanceFailed', `rebalance not started: ${why}`);
      return 'done';
    } else {
      pass.actions.push({ kind: 'admin', call: 'rebalanceStart' });
      pass.progress = { reason: 'RebalanceStarting', message: 'starting rebalance' };
      pass.poll();
      return 'wait';
    }
  }
  // Rebalancing
  if (!needAdmin(pass)) return 'wait';
  const rb = pass.obs.admin!.rebalance;
  if (!rb) return 'done';
  const outcome = rebalanceOutcome(rb);
  if (!outcome.done) {
    const bytes = rb.pools.reduce((n, p) => n + (p.progress?.bytes ?? 0), 0);
    op.message = `rebalance ${rebalanceId(rb) ?? ''}: ${bytes} bytes moved`;
    pass.progress = { reason: 'RebalanceRunning', message: op.message };
    pass.poll();
    return 'wait';
  }
  pass.status.rebalance = { ...(pass.status.rebalance ?? {}), id: rebalanceId(rb), finishedAt: pass.now, lastError: outcome.errors.join('; ') };
  if (outcome.errors.length > 0) pass.event('Warning', 'RebalanceFailed', outcome.errors.join('; '));
  else pass.event('Normal', 'RebalanceCompleted', `rebalance ${rebalanceId(rb) ?? ''} completed`);
  return 'done';
}

/**
 * The server may already have formed with the new pools: pools/list listed
 * one of them in some pass of this operation (its index is recorded in
 * `status.pools[]`), or a pod on the new launch configuration is Ready (a
 * node turns Ready only once it reaches quorum on its configured pools).
 * Either way the new pools' drives may carry `format.json` and hold objects.
 */
function newPoolsMayHaveFormed(pass: Pass, newNames: readonly string[], target: LaunchConfigT): boolean {
  return newNames.some((n) => pass.poolStatus(n)?.index !== undefined) || pass.obs.pods.some((p) => p.launchHash === target.hash && p.ready);
}

/** Records the server index of every new pool pools/list lists: the sticky "the server has seen it" mark. */
function noteListedPools(pass: Pass, newNames: readonly string[]): void {
  for (const n of newNames) {
    const p = specPool(pass.c, n);
    const expr = p ? poolExpression(pass.c, p, pass.domain) : pass.poolStatus(n)?.expression;
    const entry = expr === undefined ? undefined : pass.obs.admin?.pools?.find((a) => sameExpression(a.cmdline, expr));
    if (entry) pass.setPool(n, { index: entry.id });
  }
}

/** Drops never-listed new pools that left the spec: their StatefulSet always, their PVCs when `deletePvcs`. */
function discardNewPools(pass: Pass, gone: readonly string[], deletePvcs: boolean): void {
  const c = pass.c;
  for (const n of gone) {
    pass.actions.push({ kind: 'deleteStatefulSet', name: statefulSetName(c.metadata.name, n) });
    if (deletePvcs) pass.actions.push({ kind: 'deletePvcs', pool: n });
    pass.status.pools = pass.status.pools?.filter((p) => p.name !== n);
  }
  const what = deletePvcs ? 'its StatefulSet and PVCs were deleted' : 'its StatefulSet was deleted, its PVCs kept (storage.pvcRetention: Retain)';
  pass.endOp('PoolAddCanceled', `pool ${gone.join(', ')} left the spec before it joined; ${what}`);
}

/**
 * RolledBack: the operation waits, stalled, for a human. Any spec edit (a
 * new generation: a fixed image, a longer `restartPolicy.readyTimeoutSeconds`,
 * ...) lets `retry` run; the generation to wait past is kept in
 * `operation.observedGeneration`, set when the rollback finished.
 */
function rolledBack(pass: Pass, retry: () => void): void {
  const op = pass.op!;
  const gen = pass.c.metadata.generation;
  if (gen !== undefined && op.observedGeneration !== undefined && gen > op.observedGeneration) {
    pass.event('Normal', 'RetryingAfterRollback', `spec changed (generation ${gen}): trying ${op.type} ${op.pools?.join(', ') ?? ''} again`);
    retry();
    return;
  }
  pass.stall = { reason: 'RolledBack', message: op.message ?? `${op.type} rolled back` };
}

function finishRollback(pass: Pass, message: string): void {
  const op = pass.op!;
  pass.setPhase('RolledBack', message);
  if (pass.c.metadata.generation !== undefined) op.observedGeneration = pass.c.metadata.generation;
  pass.event('Warning', 'RolledBack', message);
  pass.stall = { reason: 'RolledBack', message };
}

function addPools(pass: Pass): void {
  const op = pass.op!;
  const c = pass.c;
  const target = op.target!;
  const newNames = op.pools ?? [];
  noteListedPools(pass, newNames);
  const gone = newNames.filter((n) => !specPool(c, n));
  if (gone.length > 0) {
    const formed = newPoolsMayHaveFormed(pass, gone, target);
    if (op.phase === 'ProvisioningNewPools' && !formed) {
      // Only the new pool ever ran the new arguments, alone: it never held data.
      discardNewPools(pass, gone, true);
      return;
    }
    if (op.phase === 'RolledBack') {
      // Never listed (else no rollback), but existing pods did run the new
      // arguments for a while: keep the PVCs unless the cluster says Delete.
      discardNewPools(pass, gone, c.spec.storage?.pvcRetention === 'Delete');
      return;
    }
    if (op.phase === 'RestartingCluster' && !formed) {
      // Existing pods may already run the new arguments: bring them back first.
      pass.setPhase('RollingBack', `pool ${gone.join(', ')} left the spec before it joined; restarting the cluster on the previous configuration`);
      pass.event('Warning', 'RollingBack', pass.op!.message!);
    } else if (op.phase !== 'RollingBack') {
      pass.stall = { reason: 'PoolRemovedWithoutDecommission', message: `pool ${gone.join(', ')} left the spec after the server formed with it (it may hold data); put it back, then decommission it to remove it` };
      return;
    }
  }
  const targetPools = volumeList(target.volumes)
    .map((e) => c.spec.pools.find((p) => sameExpression(poolExpression(c, p, pass.domain), e)))
    .filter((p): p is PoolSpec => p !== undefined);
  const existing = targetPools.filter((p) => !newNames.includes(p.name));
  const newPools = targetPools.filter((p) => newNames.includes(p.name));
  const fresh = existing.length === 0;

  if (op.phase === 'ProvisioningNewPools') {
    for (const n of newNames) pass.setPool(n, { state: 'Provisioning', statefulSet: statefulSetName(c.metadata.name, n), expression: poolExpression(c, specPool(c, n)!, pass.domain) });
    // New pools start on the new arguments; existing pools keep the applied ones.
    applyChildren(pass, [
      ...existing.map((pool) => ({ pool, launch: applied(pass)! })),
      ...newPools.map((pool) => ({ pool, launch: target })),
    ]);
    pass.stall = podProblems(pass, newNames) ?? pvcProblems(pass, newNames);
    if (fresh) {
      // A new cluster: nothing runs yet, so no restart is needed; wait for quorum.
      const ready = allReadyOn(pass, newNames, target.hash);
      if (!ready.ok) {
        if (!pass.stall && pass.phaseAgeMs() > pass.readyTimeoutMs()) pass.stall = { reason: 'WaitingForQuorum', message: `pods not ready after ${Math.round(pass.phaseAgeMs() / 1000)}s: ${ready.waiting.join(', ')}` };
        pass.progress = { reason: 'Provisioning', message: `waiting for ${ready.waiting.length} pods to become ready` };
        pass.poll();
        return;
      }
      pass.setPhase('VerifyingTopology');
    } else {
      // Running and live, not Ready: they wait for peers on the old arguments.
      const expected = expectedPodNames(c, newNames);
      const byName = new Map(pass.obs.pods.map((p) => [p.name, p]));
      const notRunning = expected.filter((n) => !byName.get(n)?.running || byName.get(n)?.launchHash !== target.hash);
      if (notRunning.length > 0) {
        if (!pass.stall && pass.phaseAgeMs() > pass.readyTimeoutMs()) {
          // Any other cause (a crash loop, a start-up refusal): name it from the container's waiting reason.
          const why = notRunning.map((n) => `${n}${byName.get(n)?.waitingReason ? ` (${byName.get(n)!.waitingReason})` : ''}`);
          pass.stall = { reason: 'PodsNotRunning', message: `new pods not running after ${Math.round(pass.phaseAgeMs() / 1000)}s: ${why.join(', ')}; the running cluster is unaffected` };
        }
        pass.progress = { reason: 'ProvisioningPool', message: `provisioning ${newNames.join(', ')}: waiting for ${notRunning.join(', ')}` };
        pass.poll();
        return;
      }
      pass.setPhase('RestartingCluster');
      for (const n of newNames) pass.setPool(n, { state: 'Joining' });
    }
  }
  if (op.phase === 'RestartingCluster') {
    // Rollback of step 2 (design §3.2): automatic only while the server has
    // never formed with the new pools. Then nothing can have been written to
    // them, and the previous arguments (status.launchConfig.applied) are a
    // configuration every existing drive already served under. Once the
    // server has listed a new pool (or a node turned Ready on the new
    // arguments) its drives may carry format.json and objects: a rollback
    // would hide them, so the operation stays stalled for a human instead.
    const late = restartTimedOut(pass, targetPools.map((p) => p.name), target.hash);
    if (late.timedOut && !newPoolsMayHaveFormed(pass, newNames, target)) {
      const why = `pods not ready on the new configuration after ${Math.round(pass.phaseAgeMs() / 1000)}s (${late.waiting.slice(0, 8).join(', ')}) and the server never listed ${newNames.join(', ')}: restarting the cluster on the previous configuration`;
      pass.setPhase('RollingBack', why);
      pass.event('Warning', 'RollingBack', why);
    } else {
      if (!coordinatedRestart(pass, targetPools, target)) {
        if (pass.stall?.reason === 'WaitingForQuorum') pass.stall = { ...pass.stall, message: `${pass.stall.message}; the server has formed with ${newNames.join(', ')}, so there is no automatic rollback` };
        return;
      }
      pass.setPhase('VerifyingTopology');
    }
  }
  if (op.phase === 'RollingBack') {
    // Existing pools back on the applied arguments (pods not on them restart
    // together, once: this is a known-good configuration, not a retry of the
    // failed one); new pools parked at zero replicas, their PVCs kept.
    const message = op.message;
    const parked = newPools.map((pool) => ({ pool, launch: target, replicas: 0 }));
    for (const n of gone) if (pass.obs.statefulSets.some((s) => s.pool === n)) pass.actions.push({ kind: 'deleteStatefulSet', name: statefulSetName(c.metadata.name, n) });
    if (!rollBackRestart(pass, existing, parked)) return;
    if (gone.length > 0) {
      discardNewPools(pass, gone, c.spec.storage?.pvcRetention === 'Delete');
      return;
    }
    for (const n of newNames) pass.setPool(n, { state: 'Pending' });
    finishRollback(pass, `${message ?? 'pool add failed'}; rolled back: the cluster runs its previous pools again and ${newNames.join(', ')} is parked at zero replicas. Fix the cause, then edit the spec to try again, or remove the pool`);
    return;
  }
  if (op.phase === 'RolledBack') {
    rolledBack(pass, () => {
      delete pass.status.operation;
      startNextOperation(pass);
    });
    return;
  }
  if (op.phase === 'VerifyingTopology') {
    if (!verifyTopology(pass, volumeList(target.volumes))) return;
    commitLaunch(pass, target);
    for (const n of newNames) pass.setPool(n, { state: 'Active' });
    const auto = (c.spec.rebalance?.onExpansion ?? 'Auto') === 'Auto';
    if (!fresh && auto && targetPools.length > 1) pass.setPhase('StartingRebalance');
    else {
      pass.endOp('PoolAdded', `pools ${newNames.join(', ')} joined`);
      return;
    }
  }
  if (op.phase === 'StartingRebalance' || op.phase === 'Rebalancing') {
    if (rebalanceStep(pass) === 'wait') return;
    pass.endOp('PoolAdded', `pools ${newNames.join(', ')} joined and the rebalance finished`);
  }
}

function decommissionInfoOf(pass: Pass, expr: string) {
  const entry = pass.obs.admin?.pools?.find((p) => sameExpression(p.cmdline, expr));
  return entry ? { entry, phase: decommissionPhase(entry.decommissionInfo) } : undefined;
}

function copyDecommission(pass: Pass, name: string, expr: string): void {
  const found = decommissionInfoOf(pass, expr);
  if (!found || found.phase === 'None') return;
  const i = found.entry.decommissionInfo!;
  const prev = pass.poolStatus(name)?.decommission;
  const d: NonNullable<PoolStatus['decommission']> = { phase: found.phase };
  if (i.startTime && !i.startTime.startsWith('0001-')) d.startTime = i.startTime;
  for (const k of ['objectsDecommissioned', 'objectsDecommissionedFailed', 'bytesDecommissioned', 'bytesDecommissionedFailed', 'totalSize', 'currentSize'] as const) {
    if (typeof i[k] === 'number') d[k] = i[k];
  }
  d.attempts = pass.op?.attempt ?? prev?.attempts ?? 1;
  if (prev?.retryToken !== undefined) d.retryToken = prev.retryToken;
  // The recorded index is kept: it is re-verified before anything is removed.
  pass.setPool(name, { decommission: d });
}

function removePool(pass: Pass): void {
  const op = pass.op!;
  const c = pass.c;
  const name = op.pools![0]!;
  const pool = specPool(c, name);
  const sp = pass.poolStatus(name);
  const expr = sp?.expression ?? (pool ? poolExpression(c, pool, pass.domain) : '');
  const target = op.target!;

  // Intent withdrawn before the drain completed: cancel instead.
  if (pool && pool.decommission !== true && (op.phase === 'StoppingRebalance' || op.phase === 'StartingDecommission' || op.phase === 'Draining')) {
    op.type = 'CancelDecommission';
    pass.setPhase('Canceling');
    pass.event('Normal', 'DecommissionCancelRequested', `decommission of ${name} withdrawn; canceling (objects already moved stay where they are)`);
    cancelDecommission(pass);
    return;
  }

  if (op.phase === 'StoppingRebalance') {
    if (!needAdmin(pass)) return;
    if (rebalanceActive(pass.obs.admin!.rebalance)) {
      pass.actions.push({ kind: 'admin', call: 'rebalanceStop' });
      pass.progress = { reason: 'RebalanceStopping', message: 'stopping the rebalance before the decommission' };
      pass.poll();
      return;
    }
    pass.setPhase('StartingDecommission');
  }
  if (op.phase === 'StartingDecommission') {
    if (!needAdmin(pass)) return;
    const found = decommissionInfoOf(pass, expr);
    if (!found) {
      pass.stall = { reason: 'TopologyMismatch', message: `pools/list does not list ${expr}` };
      pass.poll();
      return;
    }
    pass.setPool(name, { index: found.entry.id, expressionHash: shortHash(expr) });
    if (found.phase === 'Queued' || found.phase === 'Active' || found.phase === 'Completed') {
      pass.setPool(name, { state: 'Draining' });
      pass.setPhase('Draining', 'objects are moving to the remaining pools; new uploads to this pool get SlowDown');
      pass.event('Normal', 'DecommissionStarted', `draining pool ${name} (${expr}); staged uploads to it get SlowDown until it is removed`);
    } else if (found.phase === 'Failed' || found.phase === 'Canceled') {
      // A stale terminal entry (an earlier attempt, or the CLI): clear it, then start.
      pass.actions.push({ kind: 'admin', call: 'decommissionClear', pool: expr });
      pass.poll();
      return;
    } else if (lastErrorIs(pass, 'decommissionStart', isInsufficientCapacity) && Date.parse(op.lastError!.at) + CAPACITY_RETRY_MS > pass.obs.now.getTime()) {
      pass.stall = { reason: 'InsufficientTargetCapacity', message: `${op.lastError!.message}: add a pool or free space; retrying every ${CAPACITY_RETRY_MS / 60_000} min` };
      pass.requeueMs = Math.min(pass.requeueMs, CAPACITY_RETRY_MS);
      return;
    } else if (lastErrorIs(pass, 'decommissionStart', (e) => /rebalance/i.test(e.message))) {
      pass.setPhase('StoppingRebalance');
      pass.poll();
      return;
    } else {
      pass.actions.push({ kind: 'admin', call: 'decommissionStart', pool: expr });
      pass.setPool(name, { state: 'Draining' });
      pass.progress = { reason: 'DecommissionQueued', message: `starting decommission of ${name}` };
      pass.poll();
      return;
    }
  }
  if (op.phase === 'Draining') {
    if (!needAdmin(pass)) return;
    copyDecommission(pass, name, expr);
    const found = decommissionInfoOf(pass, expr);
    const phase = found?.phase ?? 'None';
    if (phase === 'Queued' || phase === 'Active') {
      const d = pass.poolStatus(name)?.decommission;
      op.message = `draining ${name}: ${d?.objectsDecommissioned ?? 0} objects, ${d?.bytesDecommissioned ?? 0} bytes moved`;
      pass.progress = { reason: phase === 'Queued' ? 'DecommissionQueued' : 'DecommissionActive', message: op.message };
      pass.poll();
      return;
    }
    if (phase === 'Failed') {
      pass.setPool(name, { state: 'DrainFailed' });
      if (op.attempt < MAX_DRAIN_ATTEMPTS) {
        pass.event('Warning', 'DecommissionFailed', `decommission of ${name} failed (attempt ${op.attempt}); clearing and retrying`);
        op.attempt += 1;
        pass.setPhase('StartingDecommission');
        pass.actions.push({ kind: 'admin', call: 'decommissionClear', pool: expr });
        pass.poll();
        return;
      }
      pass.stall = {
        reason: 'DecommissionFailed',
        message: `decommission of ${name} failed ${op.attempt} times (${found?.entry.decommissionInfo?.objectsDecommissionedFailed ?? 0} objects failed); annotate svc.io/retry-decommission to retry`,
      };
      // The operation ends here; the pool state (DrainFailed) carries the stall,
      // and the next pass reads the retry annotation or the withdrawn intent.
      delete pass.status.operation;
      return;
    }
    if (phase === 'Canceled') {
      // Canceled by someone else (the CLI): wait for the intent to change.
      pass.setPool(name, { state: 'DrainCanceled' });
      pass.stall = { reason: 'DecommissionCanceled', message: `decommission of ${name} was canceled outside the operator; set decommission: false to keep the pool, or annotate svc.io/retry-decommission to drain it again` };
      delete pass.status.operation;
      return;
    }
    if (phase === 'None') {
      pass.stall = { reason: 'TopologyMismatch', message: `the server reports no decommission for ${expr}` };
      pass.poll();
      return;
    }
    // Completed: re-verify identity right before anything destructive.
    if (found!.entry.id !== sp?.index) {
      pass.stall = { reason: 'TopologyMismatch', message: `${expr} completed its drain but now has pool index ${found!.entry.id}, recorded ${sp?.index}; refusing to remove it` };
      return;
    }
    pass.setPool(name, { state: 'Drained' });
    pass.event('Normal', 'DecommissionCompleted', `pool ${name} drained`);
    pass.setPhase('RestartingWithoutPool');
  }
  const remaining = volumeList(target.volumes)
    .map((e) => c.spec.pools.find((p) => sameExpression(poolExpression(c, p, pass.domain), e)))
    .filter((p): p is PoolSpec => p !== undefined);
  if (op.phase === 'RestartingWithoutPool') {
    // Rollback of step 5 (design §3.3) is allowed only before any remaining
    // pod has restarted: every remaining pod still exists on the applied
    // arguments, so the restart never took effect (the pod deletes or the
    // template apply kept failing). Going back then deletes no pod: the
    // templates return to the applied arguments (with OnDelete a pod that
    // dies later must not come back on the new ones while its peers run the
    // old) and the drained pool returns at full size (the running servers
    // still list it). Once a remaining pod restarted, the nodes disagree on
    // the endpoint list and no automatic direction is safe: stay stalled.
    const names = remaining.map((p) => p.name);
    const old = applied(pass)!;
    const late = restartTimedOut(pass, names, target.hash);
    const byName = new Map(pass.obs.pods.map((p) => [p.name, p]));
    const noneRestarted = expectedPodNames(c, names).every((n) => {
      const p = byName.get(n);
      return p !== undefined && !p.terminating && p.launchHash === old.hash;
    });
    if (late.timedOut && noneRestarted) {
      const why = `the restart without ${name} did not take effect within ${Math.round(pass.phaseAgeMs() / 1000)}s (no remaining pod restarted): putting the previous configuration back`;
      pass.setPhase('RollingBack', why);
      pass.event('Warning', 'RollingBack', why);
    } else {
      // The drained pool's pods must not run on with the old arguments.
      const extra = pool ? [{ pool, launch: old, replicas: 0 }] : [];
      if (!coordinatedRestart(pass, remaining, target, extra)) return;
      commitLaunch(pass, target);
      pass.setPool(name, { state: 'Detaching' });
      pass.setPhase('VerifyingTopology');
    }
  }
  if (op.phase === 'RollingBack') {
    const message = op.message;
    if (!rollBackRestart(pass, runningPools(pass))) return;
    pass.setPool(name, { state: 'Drained' });
    finishRollback(pass, `${message ?? 'restart without the pool failed'}; rolled back: every pool, ${name} included, runs the previous configuration. Fix the cause (pod deletes, StatefulSet updates), then edit the spec to try again`);
    return;
  }
  if (op.phase === 'RolledBack') {
    // The retry starts again at step 4: the drain is verified before anything restarts.
    rolledBack(pass, () => {
      pass.setPhase('Draining');
      pass.poll();
    });
    return;
  }
  if (op.phase === 'VerifyingTopology') {
    if (!verifyTopology(pass, volumeList(target.volumes))) return;
    pass.setPhase('Clearing');
  }
  if (op.phase === 'Clearing') {
    if (!doneInPhase(pass, 'decommissionClear') && !lastErrorIs(pass, 'decommissionClear', isUnknownPool)) {
      if (!needAdmin(pass)) return;
      pass.actions.push({ kind: 'admin', call: 'decommissionClear', pool: expr });
      pass.poll();
      return;
    }
    pass.setPhase('DeletingWorkload');
  }
  if (op.phase === 'DeletingWorkload') {
    const sts = pass.obs.statefulSets.find((s) => s.pool === name);
    const deletePvcs = c.spec.storage?.pvcRetention === 'Delete';
    if (sts) {
      pass.actions.push({ kind: 'deleteStatefulSet', name: sts.name });
      if (deletePvcs) pass.actions.push({ kind: 'deletePvcs', pool: name });
      pass.poll();
      return;
    }
    if (deletePvcs && pass.obs.pvcs.some((v) => v.pool === name)) {
      pass.actions.push({ kind: 'deletePvcs', pool: name });
      pass.poll();
      return;
    }
    pass.setPool(name, { state: 'Removed', replicas: 0, readyReplicas: 0, updatedReplicas: 0 });
    if (!deletePvcs) pass.event('Normal', 'PvcRetained', `PVCs of pool ${name} were kept (storage.pvcRetention: Retain)`);
    pass.endOp('PoolRemoved', `pool ${name} was drained and removed; its entry may now be deleted from spec.pools`);
  }
}

function cancelDecommission(pass: Pass): void {
  const op = pass.op!;
  const name = op.pools![0]!;
  const sp = pass.poolStatus(name);
  const expr = sp?.expression ?? '';
  if (!needAdmin(pass)) return;
  const phase = decommissionInfoOf(pass, expr)?.phase ?? 'None';
  if (op.phase === 'Canceling') {
    if (phase === 'Queued' || phase === 'Active') {
      pass.actions.push({ kind: 'admin', call: 'decommissionCancel', pool: expr });
      pass.progress = { reason: 'DecommissionActive', message: `canceling the decommission of ${name}` };
      pass.poll();
      return;
    }
    pass.setPhase('Clearing');
  }
  if (op.phase === 'Clearing') {
    if ((phase === 'Canceled' || phase === 'Failed') && !doneInPhase(pass, 'decommissionClear')) {
      pass.actions.push({ kind: 'admin', call: 'decommissionClear', pool: expr });
      pass.poll();
      return;
    }
    if (phase === 'Completed') {
      // Finished before the cancel arrived: it holds no data now; keep it as drained.
      // A completed entry cannot be cleared while the pool is configured: the
      // operation ends, and the pool state (Drained) keeps the stall until
      // the intent is decommission again (then the removal resumes at step 4).
      pass.setPool(name, { state: 'Drained' });
      pass.stall = { reason: 'DecommissionCompleted', message: `pool ${name} finished draining before the cancel; set decommission: true to remove it` };
      delete pass.status.operation;
      return;
    }
    pass.setPool(name, { state: 'Active', decommission: undefined });
    pass.endOp('DecommissionCanceled', `decommission of ${name} canceled; objects already moved stay in their new pools`);
  }
}

function coordinatedRestartOp(pass: Pass): void {
  const op = pass.op!;
  const target = op.target!;
  const pools = runningPools(pass);
  if (op.phase === 'RestartingCluster') {
    if (!coordinatedRestart(pass, pools, target)) return;
    pass.setPhase('VerifyingTopology');
  }
  if (!verifyTopology(pass, volumeList(target.volumes))) return;
  commitLaunch(pass, target);
  pass.endOp('ClusterRestarted', 'all pods run the new launch configuration');
}

/** One pod at a time, cluster-wide; the next only when every pod is Ready again. */
function rollingRestart(pass: Pass): void {
  const launch = applied(pass)!;
  const pools = runningPools(pass);
  applyChildren(
    pass,
    pools.map((pool) => ({ pool, launch })),
  );
  const want = new Map(pools.map((p) => [p.name, templateHash(pass.c, p)]));
  const pods = podsOf(pass.obs, want.keys());
  const allReady = allReadyOn(pass, [...want.keys()], launch.hash);
  const stale = pods.filter((p) => p.templateHash !== want.get(p.pool));
  if (stale.length === 0 && allReady.ok) {
    pass.endOp('RollingRestartCompleted', 'every pod runs the new template');
    return;
  }
  if (allReady.ok && stale.length > 0 && !pods.some((p) => p.terminating)) {
    pass.actions.push({ kind: 'deletePods', names: [stale[0]!.name] });
    pass.op!.pod = stale[0]!.name;
    pass.op!.phaseStartedAt = pass.now;
  } else if (pass.phaseAgeMs() > pass.readyTimeoutMs()) {
    pass.stall = { reason: 'WaitingForQuorum', message: `pod ${pass.op!.pod ?? ''} not ready after ${Math.round(pass.phaseAgeMs() / 1000)}s` };
  }
  pass.progress = { reason: 'RollingRestart', message: `${stale.length} pods left to restart` };
  pass.poll();
}

function manualRebalance(pass: Pass): void {
  if (rebalanceStep(pass) === 'wait') return;
  pass.endOp('RebalanceFinished', 'requested rebalance finished');
}

// ------------------------------------------------------------- triggers

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
    addPools(pass);
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
      return addPools(pass);
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
