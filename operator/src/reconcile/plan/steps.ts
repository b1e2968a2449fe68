/**
 * One planning pass of the reconcile state machine (`../planner.ts`): the
 * mutable `Pass` and the steps every operation shares (children applied, pods
 * and PVCs checked, coordinated restarts and their rollback, the rebalance
 * step, new pools noted or discarded). Pure: no I/O, the observation is given.
 */
import { isDecommissionRunning, isRebalanceRunning, rebalanceActive, rebalanceId, rebalanceOutcome } from '../../admin/types.ts';
import type { LaunchConfigT, Operation, OperationPhase, OperationType, PoolSpec, PoolStatus, SvcCluster, SvcClusterStatus } from '../../crd/svccluster.ts';
import { clusterDomain, consoleServiceName, podName, statefulSetName } from '../../topology/names.ts';
import { poolExpression, sameExpression, volumeList } from '../../topology/volumes.ts';
import type { Reason } from '../conditions.ts';
import type { Action, EventSpec, Observation, PlanContext, PodObs } from '../observation.ts';
import { buildPdb, buildServiceAccount, buildServices, buildStatefulSet } from '../render.ts';

/** Automatic decommission retries (clear, then start again) before a failed drain needs a human. */
export const MAX_DRAIN_ATTEMPTS = 3;
/** How long to wait before retrying a decommission refused for capacity. */
export const CAPACITY_RETRY_MS = 10 * 60_000;
export const DEFAULT_READY_TIMEOUT_SECONDS = 600;

export interface Stall {
  readonly reason: Reason;
  readonly message: string;
}

/** Mutable state of one planning pass. */
export class Pass {
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

export const specPool = (c: SvcCluster, name: string): PoolSpec | undefined => c.spec.pools.find((p) => p.name === name);

export function podsOf(obs: Observation, pools: Iterable<string>): PodObs[] {
  const set = new Set(pools);
  return obs.pods.filter((p) => set.has(p.pool));
}

/** Pods of `pools` expected to exist: servers × pools, by name. */
export function expectedPodNames(c: SvcCluster, pools: Iterable<string>): string[] {
  const out: string[] = [];
  for (const name of pools) {
    const p = specPool(c, name);
    if (!p) continue;
    for (let i = 0; i < p.servers; i++) out.push(podName(c.metadata.name, name, i));
  }
  return out;
}

/** Every expected pod exists, runs `hash` and is Ready. */
export function allReadyOn(pass: Pass, pools: readonly string[], hash: string): { ok: boolean; waiting: string[] } {
  const byName = new Map(pass.obs.pods.map((p) => [p.name, p]));
  const waiting = expectedPodNames(pass.c, pools).filter((n) => {
    const p = byName.get(n);
    return !p || p.terminating || p.launchHash !== hash || !p.ready;
  });
  return { ok: waiting.length === 0, waiting };
}

export function podProblems(pass: Pass, pools: readonly string[]): Stall | undefined {
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

export function pvcProblems(pass: Pass, pools: readonly string[]): Stall | undefined {
  const pending = pass.obs.pvcs.filter((v) => pools.includes(v.pool) && v.phase === 'Pending');
  if (pending.length > 0 && pass.phaseAgeMs() > pass.readyTimeoutMs()) {
    return { reason: 'PvcPending', message: `PVCs not bound after ${Math.round(pass.phaseAgeMs() / 1000)}s: ${pending.map((v) => v.name).join(', ')}` };
  }
  return undefined;
}

// ---------------------------------------------------------------- children

/** Applies every StatefulSet of `pools` with `launch`, the Services, PDB and ServiceAccount. */
export function applyChildren(pass: Pass, pools: readonly { pool: PoolSpec; launch: LaunchConfigT; replicas?: number }[]): void {
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

export function applied(pass: Pass): LaunchConfigT | undefined {
  return pass.status.launchConfig?.applied;
}

/** Pools in the applied configuration, in order. */
export function runningPools(pass: Pass): PoolSpec[] {
  const exprs = volumeList(applied(pass)?.volumes);
  return exprs.map((e) => pass.c.spec.pools.find((p) => sameExpression(poolExpression(pass.c, p, pass.domain), e))).filter((p): p is PoolSpec => p !== undefined);
}

/** Idle upkeep: every running pool's StatefulSet with the *applied* launch settings (never the next ones early). */
export function applySteadyState(pass: Pass): void {
  const launch = applied(pass);
  if (!launch) return;
  applyChildren(
    pass,
    runningPools(pass).map((pool) => ({ pool, launch })),
  );
}

// ------------------------------------------------------------- operations

/** Admin reads needed and missing: wait (the controller reads on the next pass). */
export function needAdmin(pass: Pass): boolean {
  if (pass.obs.admin?.reachable) return true;
  pass.progress = { reason: 'WaitingForAdminApi', message: `waiting for a node to answer the admin API${pass.obs.admin?.error ? `: ${pass.obs.admin.error}` : ''}` };
  pass.poll();
  return false;
}

/** The controller recorded a successful `action` during the current phase. */
export function doneInPhase(pass: Pass, action: string): boolean {
  const d = pass.op?.lastDone;
  return d !== undefined && d.action === action && Date.parse(d.at) >= Date.parse(pass.op!.phaseStartedAt);
}

export function lastErrorIs(pass: Pass, action: string, pred: (e: { code: string; message: string }) => boolean): boolean {
  const e = pass.op?.lastError;
  return e !== undefined && e.action === action && pred(e);
}

/** RestartingCluster / RestartingWithoutPool: one step of a coordinated restart into `target` over `pools`. */
export function coordinatedRestart(pass: Pass, pools: PoolSpec[], target: LaunchConfigT, extra: { pool: PoolSpec; launch: LaunchConfigT; replicas: number }[] = [], rollback = false): boolean {
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
export function rollBackRestart(pass: Pass, pools: PoolSpec[], extra: { pool: PoolSpec; launch: LaunchConfigT; replicas: number }[] = []): boolean {
  return coordinatedRestart(pass, pools, applied(pass)!, extra, true);
}

/** A coordinated restart ran out of `restartPolicy.readyTimeoutSeconds` without every pod Ready on `hash`. */
export function restartTimedOut(pass: Pass, pools: readonly string[], hash: string): { timedOut: boolean; waiting: string[] } {
  const ready = allReadyOn(pass, pools, hash);
  return { timedOut: !ready.ok && pass.phaseAgeMs() > pass.readyTimeoutMs(), waiting: ready.waiting };
}

/** VerifyingTopology: pools/list must list exactly `expected`, in order. */
export function verifyTopology(pass: Pass, expected: string[]): boolean {
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

export function commitLaunch(pass: Pass, target: LaunchConfigT): void {
  pass.status.launchConfig = { ...(pass.status.launchConfig ?? {}), applied: target };
}

export function rebalanceStep(pass: Pass): 'done' | 'wait' {
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
export function newPoolsMayHaveFormed(pass: Pass, newNames: readonly string[], target: LaunchConfigT): boolean {
  return newNames.some((n) => pass.poolStatus(n)?.index !== undefined) || pass.obs.pods.some((p) => p.launchHash === target.hash && p.ready);
}

/** Records the server index of every new pool pools/list lists: the sticky "the server has seen it" mark. */
export function noteListedPools(pass: Pass, newNames: readonly string[]): void {
  for (const n of newNames) {
    const p = specPool(pass.c, n);
    const expr = p ? poolExpression(pass.c, p, pass.domain) : pass.poolStatus(n)?.expression;
    const entry = expr === undefined ? undefined : pass.obs.admin?.pools?.find((a) => sameExpression(a.cmdline, expr));
    if (entry) pass.setPool(n, { index: entry.id });
  }
}

/** Drops never-listed new pools that left the spec: their StatefulSet always, their PVCs when `deletePvcs`. */
export function discardNewPools(pass: Pass, gone: readonly string[], deletePvcs: boolean): void {
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
export function rolledBack(pass: Pass, retry: () => void): void {
  const op = pass.op!;
  const gen = pass.c.metadata.generation;
  if (gen !== undefined && op.observedGeneration !== undefined && gen > op.observedGeneration) {
    pass.event('Normal', 'RetryingAfterRollback', `spec changed (generation ${gen}): trying ${op.type} ${op.pools?.join(', ') ?? ''} again`);
    retry();
    return;
  }
  pass.stall = { reason: 'RolledBack', message: op.message ?? `${op.type} rolled back` };
}

export function finishRollback(pass: Pass, message: string): void {
  const op = pass.op!;
  pass.setPhase('RolledBack', message);
  if (pass.c.metadata.generation !== undefined) op.observedGeneration = pass.c.metadata.generation;
  pass.event('Warning', 'RolledBack', message);
  pass.stall = { reason: 'RolledBack', message };
}
