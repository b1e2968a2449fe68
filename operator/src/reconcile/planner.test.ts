/**
 * The planner, one test per state transition of the operator design's §3
 * tables (pool add 3.2, pool removal 3.3, cancel path, human-needed cases
 * 3.4), failure rows included. Each test builds the persisted status the
 * previous step would have written and asserts actions, status and requeue.
 */
import { describe, expect, it } from 'vitest';
import { adminPool, cluster, ctx, expr, later, NOW, observation, pool, podsFor, rebalance, stsFor } from '../../test/fixtures.ts';
import type { PoolSpec, SvcCluster } from '../crd/svccluster.ts';
import { getCondition } from './conditions.ts';
import type { Action, Observation, Plan } from './observation.ts';
import { CAPACITY_RETRY_MS, MAX_DRAIN_ATTEMPTS, planReconcile } from './planner.ts';

const C = ctx();

function plan(c: SvcCluster, o: Partial<Observation> = {}): Plan {
  return planReconcile(c, observation(o), ctx());
}

/** The cluster with the plan's status persisted (what the controller writes). */
function persisted(c: SvcCluster, p: Plan): SvcCluster {
  return { ...c, status: structuredClone(p.status) };
}

const kinds = (p: Plan) => p.actions.map((a) => a.kind);
const applied = (p: Plan, kind: string) => p.actions.filter((a): a is Extract<Action, { kind: 'apply' }> => a.kind === 'apply' && a.object.kind === kind).map((a) => a.object);
const adminCalls = (p: Plan) => p.actions.filter((a): a is Extract<Action, { kind: 'admin' }> => a.kind === 'admin');
const deletedPods = (p: Plan) => p.actions.filter((a): a is Extract<Action, { kind: 'deletePods' }> => a.kind === 'deletePods').flatMap((a) => a.names);
const cond = (p: Plan, t: Parameters<typeof getCondition>[1]) => getCondition(p.status.conditions, t);
function envOf(sts: object, name: string): string | undefined {
  const s = sts as { spec: { template: { spec: { containers: { env: { name: string; value?: string }[] }[] } } } };
  return s.spec.template.spec.containers[0]!.env.find((e) => e.name === name)?.value;
}

/** A one-pool cluster that finished provisioning: p0 Active, launch config applied. */
function established(pools: PoolSpec[] = [pool('p0')], over: Parameters<typeof cluster>[1] = {}): { c: SvcCluster; hash: string } {
  let c = cluster(pools, over);
  let p = plan(c);
  c = persisted(c, p);
  const hash = c.status!.operation!.target!.hash;
  const pods = pools.flatMap((x) => podsFor(c, x.name, hash));
  p = plan(c, { pods, statefulSets: pools.map((x) => stsFor(c, x.name, hash)), admin: { reachable: true, pools: pools.map((x, i) => adminPool(i, expr(c, x.name))) } });
  expect(p.status.operation).toBeUndefined();
  return { c: persisted(c, p), hash };
}

/** Edits the spec (new generation), keeping status. */
function edit(c: SvcCluster, pools: PoolSpec[], over: Parameters<typeof cluster>[1] = {}): SvcCluster {
  return { ...c, metadata: { ...c.metadata, generation: (c.metadata.generation ?? 1) + 1 }, spec: { ...c.spec, pools, ...over } };
}

describe('planner: PodDisruptionBudgets', () => {
  const deletedPdbs = (p: Plan) => p.actions.filter((a): a is Extract<Action, { kind: 'deletePdb' }> => a.kind === 'deletePdb').map((a) => a.name);

  it('keeps one budget per pool that has a StatefulSet; deletes the cluster-wide one of earlier releases and those of pools without a StatefulSet', () => {
    const { c, hash } = established([pool('p0'), pool('p1')]);
    const running = { pods: [...podsFor(c, 'p0', hash), ...podsFor(c, 'p1', hash)], statefulSets: [stsFor(c, 'p0', hash), stsFor(c, 'p1', hash)] };
    const p = plan(c, { ...running, pdbs: ['prod', 'prod-p0', 'prod-p1', 'prod-gone'], admin: { reachable: true, pools: [adminPool(0, expr(c, 'p0')), adminPool(1, expr(c, 'p1'))] } });
    expect(applied(p, 'PodDisruptionBudget').map((b) => b.metadata.name)).toEqual(['prod-p0', 'prod-p1']);
    expect(deletedPdbs(p)).toEqual(['prod', 'prod-gone']);
  });

  it('a paused cluster deletes nothing', () => {
    const { c } = established();
    expect(deletedPdbs(plan({ ...c, spec: { ...c.spec, paused: true } }, { pdbs: ['prod'] }))).toEqual([]);
  });
});

describe('planner: a new cluster', () => {
  it('provisions every pool at once with identical SVC_VOLUMES and waits for readiness (no restart)', () => {
    const c = cluster([pool('p0'), pool('p1', { servers: 2, volumesPerServer: 4 })]);
    const p = plan(c);
    expect(p.status.operation).toMatchObject({ type: 'AddPools', phase: 'ProvisioningNewPools', pools: ['p0', 'p1'] });
    const sts = applied(p, 'StatefulSet');
    expect(sts.map((s) => s.metadata.name)).toEqual(['prod-p0', 'prod-p1']);
    const volumes = sts.map((s) => envOf(s, 'SVC_VOLUMES'));
    expect(volumes[0]).toBe(volumes[1]);
    expect(volumes[0]).toBe(`${expr(c, 'p0')} ${expr(c, 'p1')}`);
    expect(applied(p, 'Service').map((s) => s.metadata.name)).toEqual(['prod-hl', 'prod', 'prod-console']);
    expect(applied(p, 'PodDisruptionBudget').map((b) => b.metadata.name)).toEqual(['prod-p0', 'prod-p1']);
    expect(deletedPods(p)).toEqual([]);
    expect(p.requeueAfterMs).toBe(C.pollMs);
    expect(cond(p, 'Ready')?.status).toBe('False');
    expect(cond(p, 'Reconciling')).toMatchObject({ status: 'True', reason: 'Provisioning' });
    expect(p.status.phase).toBe('Provisioning');
  });

  it('becomes Ready once every pod is ready and pools/list matches; no rebalance for a new cluster', () => {
    const { c } = established([pool('p0'), pool('p1')]);
    expect(c.status!.pools!.map((p) => [p.name, p.state, p.index])).toEqual([
      ['p0', 'Active', 0],
      ['p1', 'Active', 1],
    ]);
    expect(c.status!.launchConfig!.applied!.volumes).toBe(`${expr(c, 'p0')} ${expr(c, 'p1')}`);
    expect(getCondition(c.status!.conditions, 'Ready')).toMatchObject({ status: 'True', observedGeneration: 1 });
    expect(c.status!.observedGeneration).toBe(1);
    expect(c.status!.phase).toBe('Ready');
  });

  it('stalls with WaitingForQuorum when a new cluster does not become ready in time', () => {
    let c = cluster([pool('p0')]);
    c = persisted(c, plan(c));
    const hash = c.status!.operation!.target!.hash;
    const p = planReconcile(c, observation({ now: later(601_000), pods: podsFor(c, 'p0', hash, { ready: false }) }), C);
    expect(cond(p, 'Stalled')).toMatchObject({ status: 'True', reason: 'WaitingForQuorum' });
    expect(deletedPods(p)).toEqual([]);
  });
});

describe('planner: pool add (§3.2)', () => {
  it('row 0 Validating: parity above half the narrowest pool stalls and touches nothing', () => {
    const { c } = established([pool('p0', { servers: 4, volumesPerServer: 4 })], { erasure: { standardParity: 4 } });
    const next = edit(c, [...c.spec.pools, pool('p1', { servers: 2, volumesPerServer: 2 })]);
    const p = plan(next);
    expect(p.actions).toEqual([]);
    expect(p.status.operation).toBeUndefined();
    expect(cond(p, 'Stalled')).toMatchObject({ status: 'True', reason: 'ParityExceedsNarrowestPool' });
    expect(cond(p, 'SpecValid')).toMatchObject({ status: 'False', reason: 'ParityExceedsNarrowestPool' });
    expect(cond(p, 'Ready')?.status).toBe('False');
    expect(p.events.some((e) => e.type === 'Warning' && e.reason === 'ParityExceedsNarrowestPool')).toBe(true);
  });

  it('row 0 Validating: a set width the server cannot derive stalls (SetLayoutUnsupported)', () => {
    const { c } = established();
    const p = plan(edit(c, [...c.spec.pools, pool('p1', { servers: 17, volumesPerServer: 1 })]));
    expect(cond(p, 'Stalled')?.reason).toBe('SetLayoutUnsupported');
    expect(p.actions).toEqual([]);
  });

  it('row 1 ProvisioningNewPools: creates the new StatefulSet on the new arguments, leaves existing pods alone', () => {
    const { c, hash } = established();
    const next = edit(c, [...c.spec.pools, pool('p1')]);
    const p = plan(next, { pods: podsFor(c, 'p0', hash), statefulSets: [stsFor(c, 'p0', hash)] });
    expect(p.status.operation).toMatchObject({ type: 'AddPools', phase: 'ProvisioningNewPools', pools: ['p1'] });
    const [p0, p1] = applied(p, 'StatefulSet');
    expect(envOf(p0!, 'SVC_VOLUMES')).toBe(expr(c, 'p0'));
    expect(envOf(p1!, 'SVC_VOLUMES')).toBe(`${expr(next, 'p0')} ${expr(next, 'p1')}`);
    expect(deletedPods(p)).toEqual([]);
    expect(p.status.pools!.find((x) => x.name === 'p1')!.state).toBe('Provisioning');
    expect(p.status.phase).toBe('Expanding');
  });

  it('row 1 failure: PVCs still Pending after the timeout stall with PvcPending', () => {
    const { c, hash } = established();
    const next = persisted(edit(c, [...c.spec.pools, pool('p1')]), plan(edit(c, [...c.spec.pools, pool('p1')])));
    const p = planReconcile(next, observation({ now: later(601_000), pods: podsFor(c, 'p0', hash), pvcs: [{ name: 'data-0-prod-p1-0', pool: 'p1', phase: 'Pending' }] }), C);
    expect(cond(p, 'Stalled')).toMatchObject({ status: 'True', reason: 'PvcPending' });
    expect(deletedPods(p)).toEqual([]);
  });

  it('row 1 failure: an image that cannot be pulled stalls with ImagePullBackOff', () => {
    const { c, hash } = established();
    const e = edit(c, [...c.spec.pools, pool('p1')]);
    const next = persisted(e, plan(e));
    const target = next.status!.operation!.target!.hash;
    const p = plan(next, { pods: [...podsFor(c, 'p0', hash), ...podsFor(next, 'p1', target, { running: false, ready: false, waitingReason: 'ImagePullBackOff' })] });
    expect(cond(p, 'Stalled')?.reason).toBe('ImagePullBackOff');
  });

  it('row 1 failure: new pods the scheduler cannot place stall with Unschedulable, only after the timeout', () => {
    const { c, hash } = established();
    const e = edit(c, [...c.spec.pools, pool('p1')]);
    const next = persisted(e, plan(e));
    const pods = [...podsFor(c, 'p0', hash), ...podsFor(next, 'p1', next.status!.operation!.target!.hash, { running: false, ready: false, unschedulable: true })];
    expect(cond(plan(next, { pods }), 'Stalled')?.status).toBe('False');
    const p = planReconcile(next, observation({ now: later(601_000), pods }), C);
    expect(cond(p, 'Stalled')).toMatchObject({ status: 'True', reason: 'Unschedulable' });
    expect(p.status.operation!.phase).toBe('ProvisioningNewPools');
    expect(deletedPods(p)).toEqual([]);
  });

  it('row 1 failure: new pods that never run (crash loop) stall with PodsNotRunning after the timeout, naming the cause', () => {
    const { c, hash } = established();
    const e = edit(c, [...c.spec.pools, pool('p1')]);
    const next = persisted(e, plan(e));
    const pods = [...podsFor(c, 'p0', hash), ...podsFor(next, 'p1', next.status!.operation!.target!.hash, { running: false, ready: false, waitingReason: 'CrashLoopBackOff' })];
    const p = planReconcile(next, observation({ now: later(601_000), pods }), C);
    expect(cond(p, 'Stalled')).toMatchObject({ status: 'True', reason: 'PodsNotRunning' });
    expect(cond(p, 'Stalled')!.message).toContain('prod-p1-0 (CrashLoopBackOff)');
    expect(p.status.operation!.phase).toBe('ProvisioningNewPools');
    expect(deletedPods(p)).toEqual([]);
  });

  it('row 1 → 2: new pods running (not ready) start the coordinated restart: template first, then every stale pod at once', () => {
    const { c, hash } = established();
    const e = edit(c, [...c.spec.pools, pool('p1')]);
    const next = persisted(e, plan(e));
    const target = next.status!.operation!.target!;
    const p = plan(next, { pods: [...podsFor(c, 'p0', hash), ...podsFor(next, 'p1', target.hash, { ready: false })] });
    expect(p.status.operation!.phase).toBe('RestartingCluster');
    const sts = applied(p, 'StatefulSet');
    expect(sts.map((s) => envOf(s, 'SVC_VOLUMES'))).toEqual([target.volumes, target.volumes]);
    expect(deletedPods(p).sort()).toEqual(['prod-p0-0', 'prod-p0-1', 'prod-p0-2', 'prod-p0-3']);
    const lastApply = p.actions.map((a) => a.kind).lastIndexOf('apply');
    expect(p.actions.findIndex((a) => a.kind === 'deletePods')).toBeGreaterThan(lastApply);
    expect(p.status.pools!.find((x) => x.name === 'p1')!.state).toBe('Joining');
  });

  /** An expansion of p0 by p1 in phase RestartingCluster. */
  function restarting() {
    const { c, hash } = established();
    const e = edit(c, [...c.spec.pools, pool('p1')]);
    let next = persisted(e, plan(e));
    const target = next.status!.operation!.target!;
    next = persisted(next, plan(next, { pods: [...podsFor(c, 'p0', hash), ...podsFor(next, 'p1', target.hash, { ready: false })] }));
    return { c: next, old: hash, target };
  }

  it('row 2 resumed after a crash: deletes only pods still on the old configuration', () => {
    const { c, old, target } = restarting();
    const pods = [...podsFor(c, 'p0', target.hash, { ready: false }).slice(0, 2), ...podsFor(c, 'p0', old).slice(2), ...podsFor(c, 'p1', target.hash, { ready: false })];
    pods[2] = { ...pods[2]!, terminating: true };
    const p = plan(c, { pods });
    expect(deletedPods(p)).toEqual(['prod-p0-3']);
    expect(cond(p, 'Reconciling')).toMatchObject({ status: 'True', reason: 'RestartingCluster' });
  });

  /** `restarting()` after a pass in which pools/list (from a node on the new arguments) listed p1. */
  function listedByServer() {
    const { c, old, target } = restarting();
    const pods = [...podsFor(c, 'p0', target.hash, { ready: false }), ...podsFor(c, 'p1', target.hash, { ready: false })];
    const p = planReconcile(c, observation({ now: later(30_000), pods, admin: { reachable: true, pools: [adminPool(0, expr(c, 'p0')), adminPool(1, expr(c, 'p1'))] } }), C);
    expect(p.status.pools!.find((x) => x.name === 'p1')!.index).toBe(1);
    return { c: persisted(c, p), old, target, pods };
  }

  it('row 2 failure: not ready after readyTimeoutSeconds once the server listed the new pool stalls with WaitingForQuorum, no rollback, no pod deleted again', () => {
    const { c, target, pods } = listedByServer();
    const p = planReconcile(c, observation({ now: later(601_000), pods }), C);
    expect(cond(p, 'Stalled')).toMatchObject({ status: 'True', reason: 'WaitingForQuorum' });
    expect(cond(p, 'Stalled')!.message).toContain('no automatic rollback');
    expect(cond(p, 'Reconciling')?.status).toBe('False');
    expect(deletedPods(p)).toEqual([]);
    expect(p.status.operation!.phase).toBe('RestartingCluster');
    // The StatefulSets keep the new arguments: nothing goes back.
    expect(applied(p, 'StatefulSet').map((s) => envOf(s, 'SVC_VOLUMES'))).toEqual([target.volumes, target.volumes]);
  });

  it('row 2 failure: a pod Ready on the new arguments means the cluster formed: stall, no rollback', () => {
    const { c, target } = restarting();
    const pods = [...podsFor(c, 'p0', target.hash, { ready: false }), ...podsFor(c, 'p1', target.hash, { ready: false })];
    pods[0] = { ...pods[0]!, ready: true };
    const p = planReconcile(c, observation({ now: later(601_000), pods }), C);
    expect(cond(p, 'Stalled')?.reason).toBe('WaitingForQuorum');
    expect(p.status.operation!.phase).toBe('RestartingCluster');
    expect(deletedPods(p)).toEqual([]);
  });

  it('row 2 failure, rollback: timed out and the server never listed the new pool restarts the existing pools on the old arguments and parks the new pool', () => {
    const { c, old, target } = restarting();
    const pods = [...podsFor(c, 'p0', target.hash, { ready: false }), ...podsFor(c, 'p1', target.hash, { ready: false })];
    const p = planReconcile(c, observation({ now: later(601_000), pods, admin: { reachable: false, error: 'connect ECONNREFUSED' } }), C);
    expect(p.status.operation).toMatchObject({ type: 'AddPools', phase: 'RollingBack', target });
    const sts = applied(p, 'StatefulSet');
    const p0 = sts.find((s) => s.metadata.name === 'prod-p0')!;
    const p1 = sts.find((s) => s.metadata.name === 'prod-p1')!;
    expect(envOf(p0, 'SVC_VOLUMES')).toBe(expr(c, 'p0'));
    expect((p1 as unknown as { spec: { replicas: number } }).spec.replicas).toBe(0);
    // The existing pods on the new arguments restart together, once; the new pool's PVCs stay.
    expect(deletedPods(p).sort()).toEqual(['prod-p0-0', 'prod-p0-1', 'prod-p0-2', 'prod-p0-3']);
    expect(kinds(p)).not.toContain('deletePvcs');
    expect(kinds(p)).not.toContain('deleteStatefulSet');
    expect(p.status.launchConfig!.applied!.hash).toBe(old);
    expect(p.events.some((e) => e.type === 'Warning' && e.reason === 'RollingBack')).toBe(true);
    expect(cond(p, 'Reconciling')).toMatchObject({ status: 'True', reason: 'RollingBack' });
    expect(cond(p, 'Stalled')?.status).toBe('False');
  });

  /** A rollback of the p1 expansion, in phase RollingBack (decided at +601 s). */
  function rollingBack() {
    const { c, old, target } = restarting();
    const pods = [...podsFor(c, 'p0', target.hash, { ready: false }), ...podsFor(c, 'p1', target.hash, { ready: false })];
    const next = persisted(c, planReconcile(c, observation({ now: later(601_000), pods }), C));
    expect(next.status!.operation!.phase).toBe('RollingBack');
    return { c: next, old, target };
  }

  it('rollback: existing pods Ready on the old arguments end it in RolledBack, stalled for a human, the new pool Pending', () => {
    const { c, old } = rollingBack();
    const p = planReconcile(c, observation({ now: later(700_000), pods: podsFor(c, 'p0', old) }), C);
    expect(p.status.operation).toMatchObject({ type: 'AddPools', phase: 'RolledBack', observedGeneration: 2 });
    expect(cond(p, 'Stalled')).toMatchObject({ status: 'True', reason: 'RolledBack' });
    expect(cond(p, 'SpecValid')?.status).toBe('True');
    expect(cond(p, 'Ready')?.status).toBe('False');
    expect(p.status.pools!.find((x) => x.name === 'p1')!.state).toBe('Pending');
    expect(p.status.launchConfig!.applied!.hash).toBe(old);
    expect(deletedPods(p)).toEqual([]);
    // Stays there, touching nothing, while the spec is unchanged.
    const again = planReconcile(persisted(c, p), observation({ now: later(2_000_000), pods: podsFor(c, 'p0', old) }), C);
    expect(again.actions).toEqual([]);
    expect(cond(again, 'Stalled')?.reason).toBe('RolledBack');
    expect(again.status.operation!.phase).toBe('RolledBack');
  });

  function rolledBackCluster() {
    const { c, old } = rollingBack();
    return { c: persisted(c, planReconcile(c, observation({ now: later(700_000), pods: podsFor(c, 'p0', old) }), C)), old };
  }

  it('rollback failure: the old arguments not Ready in time either stalls with WaitingForQuorum and deletes nothing more', () => {
    const { c, old } = rollingBack();
    const p = planReconcile(c, observation({ now: later(601_000 + 601_000), pods: podsFor(c, 'p0', old, { ready: false }) }), C);
    expect(cond(p, 'Stalled')).toMatchObject({ status: 'True', reason: 'WaitingForQuorum' });
    expect(cond(p, 'Stalled')!.message).toContain('previous configuration');
    expect(p.status.operation!.phase).toBe('RollingBack');
    expect(deletedPods(p)).toEqual([]);
  });

  it('rollback: a spec edit (new generation) starts the expansion again from provisioning', () => {
    const { c, old } = rolledBackCluster();
    const e = edit(c, c.spec.pools, { restartPolicy: { readyTimeoutSeconds: 1200 } });
    const p = planReconcile(e, observation({ now: later(800_000), pods: podsFor(c, 'p0', old) }), C);
    expect(p.status.operation).toMatchObject({ type: 'AddPools', phase: 'ProvisioningNewPools', pools: ['p1'] });
    expect(p.status.operation!.startedAt).toBe(later(800_000).toISOString());
    const p1 = applied(p, 'StatefulSet').find((s) => s.metadata.name === 'prod-p1')!;
    expect((p1 as unknown as { spec: { replicas: number } }).spec.replicas).toBe(4);
    expect(p.events.map((x) => x.reason)).toEqual(expect.arrayContaining(['RetryingAfterRollback', 'AddPoolsStarted']));
    expect(cond(p, 'Stalled')?.status).toBe('False');
  });

  it('rollback: removing the pool from the spec deletes its StatefulSet and keeps its PVCs (Retain), Delete removes them', () => {
    const { c, old } = rolledBackCluster();
    const p = planReconcile(edit(c, [pool('p0')]), observation({ now: later(800_000), pods: podsFor(c, 'p0', old), statefulSets: [stsFor(c, 'p0', old), stsFor(c, 'p1')] }), C);
    expect(p.actions).toContainEqual({ kind: 'deleteStatefulSet', name: 'prod-p1' });
    expect(kinds(p)).not.toContain('deletePvcs');
    expect(p.status.operation).toBeUndefined();
    expect(p.status.pools!.map((x) => x.name)).toEqual(['p0']);
    expect(cond(p, 'Ready')?.status).toBe('True');
    const del = planReconcile(edit(c, [pool('p0')], { storage: { pvcRetention: 'Delete' } }), observation({ now: later(800_000), pods: podsFor(c, 'p0', old) }), C);
    expect(del.actions).toEqual(expect.arrayContaining([{ kind: 'deleteStatefulSet', name: 'prod-p1' }, { kind: 'deletePvcs', pool: 'p1' }]));
  });

  it('row 2: a new pool removed from the spec during the restart (never listed) rolls back first, then is deleted', () => {
    const { c, old, target } = restarting();
    const gone = edit(c, [pool('p0')]);
    const pods = [...podsFor(c, 'p0', target.hash, { ready: false }), ...podsFor(c, 'p1', target.hash, { ready: false })];
    let p = plan(gone, { pods, statefulSets: [stsFor(c, 'p0', target.hash), stsFor(c, 'p1', target.hash)] });
    expect(p.status.operation!.phase).toBe('RollingBack');
    expect(envOf(applied(p, 'StatefulSet').find((s) => s.metadata.name === 'prod-p0')!, 'SVC_VOLUMES')).toBe(expr(c, 'p0'));
    expect(deletedPods(p).sort()).toEqual(['prod-p0-0', 'prod-p0-1', 'prod-p0-2', 'prod-p0-3']);
    expect(p.actions).toContainEqual({ kind: 'deleteStatefulSet', name: 'prod-p1' });
    expect(kinds(p)).not.toContain('deletePvcs');
    p = planReconcile(persisted(gone, p), observation({ now: later(60_000), pods: podsFor(c, 'p0', old) }), C);
    expect(p.status.operation).toBeUndefined();
    expect(p.events.map((x) => x.reason)).toContain('PoolAddCanceled');
    expect(p.status.pools!.map((x) => x.name)).toEqual(['p0']);
  });

  it('a new pool the server listed is never deleted when it leaves the spec: PoolRemovedWithoutDecommission', () => {
    const { c, pods } = listedByServer();
    const p = plan(edit(c, [pool('p0')]), { pods });
    expect(cond(p, 'Stalled')?.reason).toBe('PoolRemovedWithoutDecommission');
    expect(kinds(p)).not.toContain('deleteStatefulSet');
    expect(kinds(p)).not.toContain('deletePvcs');
    expect(deletedPods(p)).toEqual([]);
  });

  it('row 3 failure: pools/list disagreeing with the render stalls with TopologyMismatch', () => {
    const { c, target } = restarting();
    const pods = [...podsFor(c, 'p0', target.hash), ...podsFor(c, 'p1', target.hash)];
    const p = plan(c, { pods, admin: { reachable: true, pools: [adminPool(0, expr(c, 'p0'))] } });
    expect(p.status.operation!.phase).toBe('VerifyingTopology');
    expect(cond(p, 'Stalled')).toMatchObject({ status: 'True', reason: 'TopologyMismatch' });
    expect(p.status.launchConfig!.applied!.hash).not.toBe(target.hash);
  });

  it('row 3 waits (no stall) while no node answers the admin API', () => {
    const { c, target } = restarting();
    const pods = [...podsFor(c, 'p0', target.hash), ...podsFor(c, 'p1', target.hash)];
    const p = plan(c, { pods, admin: { reachable: false, error: 'connect ECONNREFUSED' } });
    expect(cond(p, 'Stalled')?.status).toBe('False');
    expect(cond(p, 'Reconciling')?.reason).toBe('WaitingForAdminApi');
  });

  it('rows 3 → 4 → 5: verified topology commits the launch config, marks the pool Active and starts the rebalance', () => {
    const { c, target } = restarting();
    const pods = [...podsFor(c, 'p0', target.hash), ...podsFor(c, 'p1', target.hash)];
    const p = plan(c, { pods, admin: { reachable: true, pools: [adminPool(0, expr(c, 'p0')), adminPool(1, expr(c, 'p1'))] } });
    expect(p.status.launchConfig!.applied).toEqual(target);
    expect(p.status.pools!.map((x) => [x.name, x.state, x.index])).toEqual([
      ['p0', 'Active', 0],
      ['p1', 'Active', 1],
    ]);
    expect(p.status.operation!.phase).toBe('StartingRebalance');
    expect(adminCalls(p)).toEqual([{ kind: 'admin', call: 'rebalanceStart' }]);
    expect(p.status.phase).toBe('Rebalancing');
  });

  it('row 4 with onExpansion: Manual completes at Joined without a rebalance', () => {
    const { c: base, hash } = established();
    const e = edit(base, [...base.spec.pools, pool('p1')], { rebalance: { onExpansion: 'Manual' } });
    let c = persisted(e, plan(e));
    const target = c.status!.operation!.target!;
    c = persisted(c, plan(c, { pods: [...podsFor(base, 'p0', hash), ...podsFor(c, 'p1', target.hash, { ready: false })] }));
    const p = plan(c, { pods: [...podsFor(c, 'p0', target.hash), ...podsFor(c, 'p1', target.hash)], admin: { reachable: true, pools: [adminPool(0, expr(c, 'p0')), adminPool(1, expr(c, 'p1'))] } });
    expect(p.status.operation).toBeUndefined();
    expect(adminCalls(p)).toEqual([]);
    expect(p.events.map((x) => x.reason)).toContain('PoolAdded');
  });

  function rebalancing(rb: ReturnType<typeof rebalance> | undefined, lastError?: { action: string; code: string; message: string }) {
    const { c, target } = restarting();
    const pods = [...podsFor(c, 'p0', target.hash), ...podsFor(c, 'p1', target.hash)];
    const admin = { reachable: true, pools: [adminPool(0, expr(c, 'p0')), adminPool(1, expr(c, 'p1'))] };
    let next = persisted(c, plan(c, { pods, admin }));
    if (lastError) next = { ...next, status: { ...next.status, operation: { ...next.status!.operation!, lastError: { ...lastError, at: NOW.toISOString() } } } };
    return plan(next, { pods, admin: { ...admin, rebalance: rb } });
  }

  it('row 5: a rebalance already running is adopted, not started twice', () => {
    const p = rebalancing(rebalance('Started'));
    expect(p.status.operation!.phase).toBe('Rebalancing');
    expect(p.status.operation!.rebalanceId).toBe('rb-1');
    expect(adminCalls(p)).toEqual([]);
    expect(cond(p, 'RebalanceInProgress')?.status).toBe('True');
  });

  it('row 5 failure: "cannot start rebalance while decommission is in progress" waits without retrying at once', () => {
    const p = rebalancing(undefined, { action: 'rebalanceStart', code: 'XMinioRebalanceNotAllowed', message: 'cannot start rebalance while decommission is in progress' });
    expect(adminCalls(p)).toEqual([]);
    expect(p.status.operation!.phase).toBe('StartingRebalance');
    expect(p.requeueAfterMs).toBe(C.pollMs);
  });

  it('row 5: "rebalance is already in progress" from our start adopts the running rebalance', () => {
    const p = rebalancing(rebalance('Completed', { id: 'rb-9' }), { action: 'rebalanceStart', code: 'XMinioAdminRebalanceAlreadyStarted', message: 'rebalance is already in progress' });
    expect(adminCalls(p)).toEqual([]);
    expect(p.status.operation?.phase ?? 'done').not.toBe('StartingRebalance');
  });

  it('row 5 failure: a server that cannot rebalance (NotImplemented) completes the operation with Degraded=True RebalanceFailed', () => {
    const p = rebalancing(undefined, { action: 'rebalanceStart', code: 'NotImplemented', message: 'the rebalance worker is not built' });
    expect(p.status.operation).toBeUndefined();
    expect(cond(p, 'Degraded')).toMatchObject({ status: 'True', reason: 'RebalanceFailed' });
    expect(p.status.rebalance!.lastError).toContain('not built');
  });

  it('row 5 polling: an active rebalance keeps the operation in flight with progress', () => {
    const { c, target } = restarting();
    const pods = [...podsFor(c, 'p0', target.hash), ...podsFor(c, 'p1', target.hash)];
    const admin = { reachable: true, pools: [adminPool(0, expr(c, 'p0')), adminPool(1, expr(c, 'p1'))] };
    let next = persisted(c, plan(c, { pods, admin }));
    next = persisted(next, plan(next, { pods, admin: { ...admin, rebalance: rebalance('Started') } }));
    const p = plan(next, { pods, admin: { ...admin, rebalance: rebalance('Started', { pools: [{ id: 0, status: 'Completed' }, { id: 1, status: 'Started', stopping: true }] }) } });
    expect(p.status.operation!.phase).toBe('Rebalancing');
    expect(cond(p, 'Ready')?.status).toBe('False');
  });

  it('row 5 failure: a failed rebalance completes the operation with Degraded=True RebalanceFailed', () => {
    const { c, target } = restarting();
    const pods = [...podsFor(c, 'p0', target.hash), ...podsFor(c, 'p1', target.hash)];
    const admin = { reachable: true, pools: [adminPool(0, expr(c, 'p0')), adminPool(1, expr(c, 'p1'))] };
    let next = persisted(c, plan(c, { pods, admin }));
    next = persisted(next, plan(next, { pods, admin: { ...admin, rebalance: rebalance('Started') } }));
    const p = plan(next, { pods, admin: { ...admin, rebalance: rebalance('Failed', { pools: [{ id: 0, status: 'Failed', lastError: 'disk gone' }, { id: 1, status: 'None' }] }) } });
    expect(p.status.operation).toBeUndefined();
    expect(cond(p, 'Degraded')).toMatchObject({ status: 'True', reason: 'RebalanceFailed' });
    expect(p.status.rebalance!.lastError).toContain('disk gone');
    expect(p.events.some((e) => e.reason === 'RebalanceFailed')).toBe(true);
  });

  it('row 6 Completed: a finished rebalance clears the operation and the cluster is Ready', () => {
    const { c, target } = restarting();
    const pods = [...podsFor(c, 'p0', target.hash), ...podsFor(c, 'p1', target.hash)];
    const admin = { reachable: true, pools: [adminPool(0, expr(c, 'p0')), adminPool(1, expr(c, 'p1'))] };
    let next = persisted(c, plan(c, { pods, admin }));
    next = persisted(next, plan(next, { pods, admin: { ...admin, rebalance: rebalance('Started') } }));
    const p = plan(next, { pods, admin: { ...admin, rebalance: rebalance('Completed') } });
    expect(p.status.operation).toBeUndefined();
    expect(p.events.map((e) => e.reason)).toContain('PoolAdded');
    expect(cond(p, 'Ready')).toMatchObject({ status: 'True', observedGeneration: 2 });
    expect(cond(p, 'Reconciling')?.status).toBe('False');
    expect(p.status.poolsSummary).toBe('2/2');
    expect(p.requeueAfterMs).toBe(C.idleMs);
  });

  it('a second spec change during an operation waits: Reconciling Queued, the operation target unchanged', () => {
    const { c, target } = restarting();
    const p = plan(edit(c, [...c.spec.pools, pool('p2')]), { pods: [...podsFor(c, 'p0', target.hash, { ready: false })] });
    expect(p.status.operation!.target).toEqual(target);
    expect(p.status.operation!.pools).toEqual(['p1']);
  });

  it('a new pool removed from the spec while provisioning is deleted with its PVCs (it never held data)', () => {
    const { c, hash } = established();
    const e = edit(c, [...c.spec.pools, pool('p1')]);
    const next = persisted(e, plan(e));
    const p = plan(edit(next, [pool('p0')]), { pods: podsFor(c, 'p0', hash) });
    expect(p.actions).toEqual(expect.arrayContaining([{ kind: 'deleteStatefulSet', name: 'prod-p1' }, { kind: 'deletePvcs', pool: 'p1' }]));
    expect(p.status.operation).toBeUndefined();
    expect(p.status.pools!.map((x) => x.name)).toEqual(['p0']);
  });
});

describe('planner: pool removal (§3.3)', () => {
  function twoPools() {
    return established([pool('p0'), pool('p1')]);
  }
  const adminFor = (c: SvcCluster, info: Parameters<typeof adminPool>[2] = {}, rb?: ReturnType<typeof rebalance>) => ({
    reachable: true,
    pools: [adminPool(0, expr(c, 'p0'), info), adminPool(1, expr(c, 'p1'))],
    rebalance: rb,
  });
  function decommissioning(): { c: SvcCluster; hash: string } {
    const { c, hash } = twoPools();
    return { c: edit(c, [pool('p0', { decommission: true }), pool('p1')]), hash };
  }
  const allPods = (c: SvcCluster, hash: string) => [...podsFor(c, 'p0', hash), ...podsFor(c, 'p1', hash)];

  it('row 0 Preflight failure: every pool marked decommission stalls with LastActivePool', () => {
    const { c, hash } = twoPools();
    const p = plan(edit(c, [pool('p0', { decommission: true }), pool('p1', { decommission: true })]), { pods: allPods(c, hash), admin: adminFor(c) });
    expect(cond(p, 'Stalled')?.reason).toBe('LastActivePool');
    expect(p.actions).toEqual([]);
  });

  it('row 0 Preflight failure: a pool pools/list does not know stalls with TopologyMismatch', () => {
    const { c, hash } = decommissioning();
    const p = plan(c, { pods: allPods(c, hash), admin: { reachable: true, pools: [adminPool(0, expr(c, 'p1'))] } });
    expect(cond(p, 'Stalled')?.reason).toBe('TopologyMismatch');
    expect(adminCalls(p)).toEqual([]);
  });

  it('row 1 StoppingRebalance: a running rebalance is stopped first', () => {
    const { c, hash } = decommissioning();
    const p = plan(c, { pods: allPods(c, hash), admin: adminFor(c, {}, rebalance('Started')) });
    expect(p.status.operation).toMatchObject({ type: 'RemovePool', phase: 'StoppingRebalance', pools: ['p0'] });
    expect(adminCalls(p)).toEqual([{ kind: 'admin', call: 'rebalanceStop' }]);
  });

  it('row 1 → 2: a rebalance still stopping is waited for; once none is active or stopping the decommission starts', () => {
    const { c, hash } = decommissioning();
    const next = persisted(c, plan(c, { pods: allPods(c, hash), admin: adminFor(c, {}, rebalance('Started')) }));
    const stopping = plan(next, { pods: allPods(c, hash), admin: adminFor(c, {}, rebalance('Started', { pools: [{ id: 0, status: 'Stopped' }, { id: 1, status: 'Started', stopping: true }] })) });
    expect(stopping.status.operation!.phase).toBe('StoppingRebalance');
    expect(adminCalls(stopping).map((a) => a.call)).not.toContain('decommissionStart');
    const p = plan(persisted(next, stopping), { pods: allPods(c, hash), admin: adminFor(c, {}, rebalance('Stopped')) });
    expect(p.status.operation!.phase).toBe('StartingDecommission');
    expect(adminCalls(p)).toEqual([{ kind: 'admin', call: 'decommissionStart', pool: expr(c, 'p0') }]);
  });

  it('row 1 failure: a refused stop is retried (no stall)', () => {
    const { c, hash } = decommissioning();
    const next = persisted(c, plan(c, { pods: allPods(c, hash), admin: adminFor(c, {}, rebalance('Started')) }));
    next.status!.operation!.lastError = { action: 'rebalanceStop', code: 'InternalError', message: 'peer unreachable', at: NOW.toISOString() };
    const p = plan(next, { pods: allPods(c, hash), admin: adminFor(c, {}, rebalance('Started')) });
    expect(adminCalls(p)).toEqual([{ kind: 'admin', call: 'rebalanceStop' }]);
    expect(p.status.operation!.phase).toBe('StoppingRebalance');
    expect(cond(p, 'Stalled')?.status).toBe('False');
    expect(p.requeueAfterMs).toBe(C.pollMs);
  });

  it('row 2 failure: a rebalance conflict (started between our read and our start) goes back to 1, stops it, then starts the drain', () => {
    const { c, hash } = decommissioning();
    let next = persisted(c, plan(c, { pods: allPods(c, hash), admin: adminFor(c) }));
    expect(next.status!.operation!.phase).toBe('StartingDecommission');
    // The server's refusal (code and text of the node's admission rule).
    next.status!.operation!.lastError = {
      action: 'decommissionStart',
      code: 'XSvcAdminRebalanceAlreadyStarted',
      message: 'cannot start decommission while a rebalance is in progress; stop it first (svc rebalance stop)',
      at: NOW.toISOString(),
    };
    const running = adminFor(c, {}, rebalance('Started'));
    let p = plan(next, { pods: allPods(c, hash), admin: running });
    expect(p.status.operation!.phase).toBe('StoppingRebalance');
    expect(p.status.operation!.lastError).toBeUndefined();
    expect(adminCalls(p)).toEqual([]);
    next = persisted(next, p);
    p = plan(next, { pods: allPods(c, hash), admin: running });
    expect(adminCalls(p)).toEqual([{ kind: 'admin', call: 'rebalanceStop' }]);
    p = plan(persisted(next, p), { pods: allPods(c, hash), admin: adminFor(c, {}, rebalance('Stopped')) });
    expect(p.status.operation!.phase).toBe('StartingDecommission');
    expect(adminCalls(p)).toEqual([{ kind: 'admin', call: 'decommissionStart', pool: expr(c, 'p0') }]);
  });

  it('row 2 Draining: starts the decommission by exact expression (never by-id) and records the pool index', () => {
    const { c, hash } = decommissioning();
    const p = plan(c, { pods: allPods(c, hash), admin: adminFor(c) });
    expect(p.status.operation).toMatchObject({ type: 'RemovePool', phase: 'StartingDecommission' });
    expect(adminCalls(p)).toEqual([{ kind: 'admin', call: 'decommissionStart', pool: expr(c, 'p0') }]);
    const p0 = p.status.pools!.find((x) => x.name === 'p0')!;
    expect(p0.index).toBe(0);
    expect(p0.state).toBe('Draining');
    expect(p.status.operation!.target!.volumes).toBe(expr(c, 'p1'));
  });

  it('row 2 failure: insufficient target capacity stalls and retries after 10 minutes', () => {
    const { c, hash } = decommissioning();
    let next = persisted(c, plan(c, { pods: allPods(c, hash), admin: adminFor(c) }));
    next.status!.operation!.lastError = { action: 'decommissionStart', code: 'XMinioDecommissionNotAllowed', message: 'insufficient target pool capacity', at: NOW.toISOString() };
    const p = plan(next, { pods: allPods(c, hash), admin: adminFor(c) });
    expect(cond(p, 'Stalled')?.reason).toBe('InsufficientTargetCapacity');
    expect(adminCalls(p)).toEqual([]);
    expect(p.requeueAfterMs).toBeLessThanOrEqual(CAPACITY_RETRY_MS);
    next = persisted(next, p);
    const retry = planReconcile(next, observation({ now: later(CAPACITY_RETRY_MS + 1), pods: allPods(c, hash), admin: adminFor(c) }), C);
    expect(adminCalls(retry)).toEqual([{ kind: 'admin', call: 'decommissionStart', pool: expr(c, 'p0') }]);
  });

  it('row 2: a decommission already queued or active for the target is adopted', () => {
    const { c, hash } = decommissioning();
    const p = plan(c, { pods: allPods(c, hash), admin: adminFor(c, { startTime: NOW.toISOString() }) });
    expect(adminCalls(p)).toEqual([]);
    expect(p.status.operation!.phase).toBe('Draining');
    expect(cond(p, 'DecommissionInProgress')?.status).toBe('True');
  });

  function draining() {
    const { c, hash } = decommissioning();
    const next = persisted(c, plan(c, { pods: allPods(c, hash), admin: adminFor(c, { startTime: NOW.toISOString() }) }));
    return { c: next, hash };
  }

  it('row 3 poll: copies decommissionInfo progress into status', () => {
    const { c, hash } = draining();
    const p = plan(c, { pods: allPods(c, hash), admin: adminFor(c, { startTime: NOW.toISOString(), objectsDecommissioned: 7, bytesDecommissioned: 700 }) });
    expect(p.status.pools!.find((x) => x.name === 'p0')!.decommission).toMatchObject({ phase: 'Active', objectsDecommissioned: 7, bytesDecommissioned: 700 });
    expect(p.status.operation!.message).toContain('7 objects');
    expect(p.requeueAfterMs).toBe(C.pollMs);
  });

  it('row 3 failure: a failed drain is cleared and retried, then stalls after the last attempt', () => {
    const d = draining();
    let c = d.c;
    const hash = d.hash;
    for (let attempt = 1; attempt < MAX_DRAIN_ATTEMPTS; attempt++) {
      const p = plan(c, { pods: allPods(c, hash), admin: adminFor(c, { failed: true, objectsDecommissionedFailed: 2 }) });
      expect(adminCalls(p)).toEqual([{ kind: 'admin', call: 'decommissionClear', pool: expr(c, 'p0') }]);
      expect(p.status.operation!.attempt).toBe(attempt + 1);
      expect(p.events.some((e) => e.reason === 'DecommissionFailed')).toBe(true);
      c = persisted(c, p);
      c = persisted(c, plan(c, { pods: allPods(c, hash), admin: adminFor(c, { startTime: NOW.toISOString() }) }));
    }
    const p = plan(c, { pods: allPods(c, hash), admin: adminFor(c, { failed: true }) });
    expect(cond(p, 'Stalled')?.reason).toBe('DecommissionFailed');
    expect(p.status.pools!.find((x) => x.name === 'p0')!.state).toBe('DrainFailed');
    expect(adminCalls(p)).toEqual([]);
    expect(p.status.operation).toBeUndefined();
  });

  it('row 3 failure: a drain canceled outside the operator stalls as DrainCanceled', () => {
    const { c, hash } = draining();
    const p = plan(c, { pods: allPods(c, hash), admin: adminFor(c, { canceled: true }) });
    expect(cond(p, 'Stalled')?.reason).toBe('DecommissionCanceled');
    expect(p.status.pools!.find((x) => x.name === 'p0')!.state).toBe('DrainCanceled');
    expect(p.status.operation).toBeUndefined();
    // Still stalled on the next pass: nothing restarts the drain by itself.
    const again = plan(persisted(c, p), { pods: allPods(c, hash), admin: adminFor(c, { canceled: true }) });
    expect(cond(again, 'Stalled')?.reason).toBe('DecommissionCanceled');
    expect(again.actions).toEqual([]);
  });

  it('row 3: after DrainCanceled, decommission: false clears the entry and returns the pool to Active', () => {
    const { c, hash } = draining();
    const canceled = persisted(c, plan(c, { pods: allPods(c, hash), admin: adminFor(c, { canceled: true }) }));
    const back = edit(canceled, [pool('p0'), pool('p1')]);
    let p = plan(back, { pods: allPods(c, hash), admin: adminFor(c, { canceled: true }) });
    expect(p.status.operation).toMatchObject({ type: 'CancelDecommission', phase: 'Clearing' });
    expect(adminCalls(p)).toEqual([{ kind: 'admin', call: 'decommissionClear', pool: expr(c, 'p0') }]);
    p = plan(persisted(back, p), { pods: allPods(c, hash), admin: adminFor(c) });
    expect(p.status.operation).toBeUndefined();
    expect(p.status.pools!.find((x) => x.name === 'p0')!.state).toBe('Active');
  });

  it('row 3: after DecommissionFailed, a new svc.io/retry-decommission value clears and restarts the drain', () => {
    const d = draining();
    let c = d.c;
    const hash = d.hash;
    for (let attempt = 1; attempt <= MAX_DRAIN_ATTEMPTS; attempt++) {
      c = persisted(c, plan(c, { pods: allPods(c, hash), admin: adminFor(c, { failed: true }) }));
      if (attempt < MAX_DRAIN_ATTEMPTS) c = persisted(c, plan(c, { pods: allPods(c, hash), admin: adminFor(c, { startTime: NOW.toISOString() }) }));
    }
    expect(c.status!.pools!.find((x) => x.name === 'p0')!.state).toBe('DrainFailed');
    // The stall outlives the operation: nothing retries until a human says so.
    const stalled = plan(c, { pods: allPods(c, hash), admin: adminFor(c, { failed: true }) });
    expect(cond(stalled, 'Stalled')?.reason).toBe('DecommissionFailed');
    expect(cond(stalled, 'Degraded')).toMatchObject({ status: 'True', reason: 'DecommissionFailed' });
    expect(stalled.actions).toEqual([]);
    const retry = { ...c, metadata: { ...c.metadata, annotations: { 'svc.io/retry-decommission': 'try-2' } } };
    const p = plan(retry, { pods: allPods(c, hash), admin: adminFor(c, { failed: true }) });
    expect(p.status.operation).toMatchObject({ type: 'RemovePool', phase: 'StartingDecommission', attempt: 1 });
    expect(adminCalls(p)).toEqual([{ kind: 'admin', call: 'decommissionClear', pool: expr(c, 'p0') }]);
    expect(p.status.pools!.find((x) => x.name === 'p0')!.decommission!.retryToken).toBe('try-2');
  });

  it('row 4 failure: a completed drain whose pool index moved is never removed', () => {
    const { c, hash } = draining();
    const p = plan(c, { pods: allPods(c, hash), admin: { reachable: true, pools: [adminPool(1, expr(c, 'p0'), { complete: true }), adminPool(0, expr(c, 'p1'))] } });
    expect(cond(p, 'Stalled')?.reason).toBe('TopologyMismatch');
    expect(kinds(p)).not.toContain('deletePods');
    expect(kinds(p)).not.toContain('deleteStatefulSet');
  });

  it('rows 4 → 5: a verified complete drain restarts the remaining pools without it and scales it to zero', () => {
    const { c, hash } = draining();
    const p = plan(c, { pods: allPods(c, hash), admin: adminFor(c, { complete: true, startTime: NOW.toISOString() }) });
    expect(p.status.operation!.phase).toBe('RestartingWithoutPool');
    const sts = applied(p, 'StatefulSet');
    const p1 = sts.find((s) => s.metadata.name === 'prod-p1')!;
    const p0 = sts.find((s) => s.metadata.name === 'prod-p0')!;
    expect(envOf(p1, 'SVC_VOLUMES')).toBe(expr(c, 'p1'));
    expect((p0 as unknown as { spec: { replicas: number } }).spec.replicas).toBe(0);
    // The drained pool is scaled to zero (its pods must not run on with the old arguments); the rest restart together.
    expect(deletedPods(p).sort()).toEqual(['prod-p1-0', 'prod-p1-1', 'prod-p1-2', 'prod-p1-3']);
    expect(p.status.pools!.find((x) => x.name === 'p0')!.state).toBe('Drained');
  });

  function restartedWithout() {
    const { c, hash } = draining();
    const next = persisted(c, plan(c, { pods: allPods(c, hash), admin: adminFor(c, { complete: true, startTime: NOW.toISOString() }) }));
    return { c: next, target: next.status!.operation!.target! };
  }

  it('row 5 failure: a restart that took effect but is not Ready in time stalls with WaitingForQuorum, no rollback, no pod deleted again', () => {
    const { c, target } = restartedWithout();
    const p = planReconcile(c, observation({ now: later(601_000), pods: podsFor(c, 'p1', target.hash, { ready: false }) }), C);
    expect(cond(p, 'Stalled')).toMatchObject({ status: 'True', reason: 'WaitingForQuorum' });
    expect(p.status.operation!.phase).toBe('RestartingWithoutPool');
    expect(deletedPods(p)).toEqual([]);
    const p0 = applied(p, 'StatefulSet').find((s) => s.metadata.name === 'prod-p0')!;
    expect((p0 as unknown as { spec: { replicas: number } }).spec.replicas).toBe(0);
  });

  it('row 5 failure: one remaining pod restarted is enough to rule out the rollback', () => {
    const { c, target } = restartedWithout();
    const old = c.status!.launchConfig!.applied!.hash;
    const pods = [...podsFor(c, 'p1', old).slice(1), ...podsFor(c, 'p1', target.hash, { ready: false }).slice(0, 1)];
    const p = planReconcile(c, observation({ now: later(601_000), pods }), C);
    expect(cond(p, 'Stalled')?.reason).toBe('WaitingForQuorum');
    expect(p.status.operation!.phase).toBe('RestartingWithoutPool');
  });

  it('row 5 rollback: no remaining pod restarted within the timeout puts the old configuration back without deleting a pod', () => {
    const { c, target } = restartedWithout();
    const old = c.status!.launchConfig!.applied!;
    const p = planReconcile(c, observation({ now: later(601_000), pods: podsFor(c, 'p1', old.hash) }), C);
    expect(p.status.operation).toMatchObject({ type: 'RemovePool', phase: 'RollingBack', target });
    const sts = applied(p, 'StatefulSet');
    const p0 = sts.find((s) => s.metadata.name === 'prod-p0')!;
    const p1 = sts.find((s) => s.metadata.name === 'prod-p1')!;
    expect(envOf(p1, 'SVC_VOLUMES')).toBe(old.volumes);
    expect(envOf(p0, 'SVC_VOLUMES')).toBe(old.volumes);
    expect((p0 as unknown as { spec: { replicas: number } }).spec.replicas).toBe(4);
    expect(deletedPods(p)).toEqual([]);
    expect(kinds(p)).not.toContain('admin');
    expect(p.events.some((e) => e.type === 'Warning' && e.reason === 'RollingBack')).toBe(true);
    expect(cond(p, 'Reconciling')?.reason).toBe('RollingBack');
  });

  it('row 5 rollback → RolledBack stall (pool Drained); a spec edit re-verifies the drain (row 4) before restarting again', () => {
    const { c } = restartedWithout();
    const old = c.status!.launchConfig!.applied!;
    let next = persisted(c, planReconcile(c, observation({ now: later(601_000), pods: podsFor(c, 'p1', old.hash) }), C));
    let p = planReconcile(next, observation({ now: later(700_000), pods: allPods(c, old.hash) }), C);
    expect(p.status.operation!.phase).toBe('RolledBack');
    expect(cond(p, 'Stalled')).toMatchObject({ status: 'True', reason: 'RolledBack' });
    expect(p.status.pools!.find((x) => x.name === 'p0')!.state).toBe('Drained');
    expect(p.status.launchConfig!.applied).toEqual(old);
    next = edit(persisted(next, p), next.spec.pools, { restartPolicy: { readyTimeoutSeconds: 1200 } });
    p = planReconcile(next, observation({ now: later(800_000), pods: allPods(c, old.hash), admin: adminFor(c, { complete: true, startTime: NOW.toISOString() }) }), C);
    expect(p.status.operation!.phase).toBe('Draining');
    expect(deletedPods(p)).toEqual([]);
    p = planReconcile(persisted(next, p), observation({ now: later(810_000), pods: allPods(c, old.hash), admin: adminFor(c, { complete: true, startTime: NOW.toISOString() }) }), C);
    expect(p.status.operation!.phase).toBe('RestartingWithoutPool');
    expect(deletedPods(p).sort()).toEqual(['prod-p1-0', 'prod-p1-1', 'prod-p1-2', 'prod-p1-3']);
  });

  it('rows 5 → 6 → 7: once the remaining pods are ready, pools/list is verified and the entry cleared', () => {
    const { c, target } = restartedWithout();
    const p = plan(c, { pods: podsFor(c, 'p1', target.hash), admin: { reachable: true, pools: [adminPool(0, expr(c, 'p1'))] } });
    expect(p.status.launchConfig!.applied!.volumes).toBe(expr(c, 'p1'));
    expect(p.status.operation!.phase).toBe('Clearing');
    expect(adminCalls(p)).toEqual([{ kind: 'admin', call: 'decommissionClear', pool: expr(c, 'p0') }]);
    expect(p.status.pools!.find((x) => x.name === 'p0')!.state).toBe('Detaching');
  });

  it('row 6 failure: pools/list still listing the removed pool stalls with TopologyMismatch', () => {
    const { c, target } = restartedWithout();
    const p = plan(c, { pods: podsFor(c, 'p1', target.hash), admin: adminFor(c) });
    expect(cond(p, 'Stalled')?.reason).toBe('TopologyMismatch');
    expect(adminCalls(p)).toEqual([]);
  });

  function clearing() {
    const { c, target } = restartedWithout();
    return { c: persisted(c, plan(c, { pods: podsFor(c, 'p1', target.hash), admin: { reachable: true, pools: [adminPool(0, expr(c, 'p1'))] } })), target };
  }

  it('row 7: "unknown pool" from clear counts as already cleared', () => {
    const { c, target } = clearing();
    c.status!.operation!.lastError = { action: 'decommissionClear', code: 'InvalidArgument', message: 'specified pool not found', at: NOW.toISOString() };
    const p = plan(c, { pods: podsFor(c, 'p1', target.hash), statefulSets: [stsFor(c, 'p0'), stsFor(c, 'p1')], admin: { reachable: true, pools: [adminPool(0, expr(c, 'p1'))] } });
    expect(p.status.operation!.phase).toBe('DeletingWorkload');
    expect(p.actions).toContainEqual({ kind: 'deleteStatefulSet', name: 'prod-p0' });
  });

  it('row 7 failure: another clear error is retried', () => {
    const { c, target } = clearing();
    c.status!.operation!.lastError = { action: 'decommissionClear', code: 'InternalError', message: 'boom', at: NOW.toISOString() };
    const p = plan(c, { pods: podsFor(c, 'p1', target.hash), admin: { reachable: true, pools: [adminPool(0, expr(c, 'p1'))] } });
    expect(adminCalls(p)).toEqual([{ kind: 'admin', call: 'decommissionClear', pool: expr(c, 'p0') }]);
  });

  it('rows 8 → 9: the StatefulSet is deleted, PVCs kept (Retain), the pool ends Removed', () => {
    const { c, target } = clearing();
    c.status!.operation!.lastDone = { action: 'decommissionClear', at: later(1).toISOString() };
    const obs = { pods: podsFor(c, 'p1', target.hash), admin: { reachable: true, pools: [adminPool(0, expr(c, 'p1'))] } };
    let p = planReconcile(c, observation({ ...obs, now: later(2), statefulSets: [stsFor(c, 'p0'), stsFor(c, 'p1')], pvcs: [{ name: 'data-0-prod-p0-0', pool: 'p0', phase: 'Bound' }] }), C);
    expect(p.actions).toContainEqual({ kind: 'deleteStatefulSet', name: 'prod-p0' });
    expect(kinds(p)).not.toContain('deletePvcs');
    const next = persisted(c, p);
    p = planReconcile(next, observation({ ...obs, now: later(3), statefulSets: [stsFor(c, 'p1')], pvcs: [{ name: 'data-0-prod-p0-0', pool: 'p0', phase: 'Bound' }] }), C);
    expect(p.status.operation).toBeUndefined();
    expect(p.status.pools!.find((x) => x.name === 'p0')!.state).toBe('Removed');
    expect(p.events.map((e) => e.reason)).toEqual(expect.arrayContaining(['PvcRetained', 'PoolRemoved']));
    expect(cond(p, 'Ready')?.status).toBe('True');
    expect(p.status.poolsSummary).toBe('1/1');
    // The user may now delete the entry; the status forgets the pool.
    const gone = plan(edit(persisted(next, p), [pool('p1')]), obs);
    expect(gone.status.pools!.map((x) => x.name)).toEqual(['p1']);
    expect(cond(gone, 'Stalled')?.status).toBe('False');
  });

  it('row 8 with pvcRetention: Delete deletes the pool PVCs too', () => {
    const { c, target } = clearing();
    const withDelete = { ...c, spec: { ...c.spec, storage: { pvcRetention: 'Delete' as const } } };
    withDelete.status!.operation!.lastDone = { action: 'decommissionClear', at: later(1).toISOString() };
    const p = planReconcile(withDelete, observation({ now: later(2), pods: podsFor(c, 'p1', target.hash), statefulSets: [stsFor(c, 'p0')], admin: { reachable: true, pools: [adminPool(0, expr(c, 'p1'))] } }), C);
    expect(p.actions).toEqual(expect.arrayContaining([{ kind: 'deleteStatefulSet', name: 'prod-p0' }, { kind: 'deletePvcs', pool: 'p0' }]));
  });

  it('cancel path: decommission: false during the drain cancels, clears and returns the pool to Active', () => {
    const { c, hash } = draining();
    const back = edit(c, [pool('p0'), pool('p1')]);
    let p = plan(back, { pods: allPods(c, hash), admin: adminFor(c, { startTime: NOW.toISOString() }) });
    expect(p.status.operation).toMatchObject({ type: 'CancelDecommission', phase: 'Canceling' });
    expect(adminCalls(p)).toEqual([{ kind: 'admin', call: 'decommissionCancel', pool: expr(c, 'p0') }]);
    expect(p.events.some((e) => /stay/.test(e.message))).toBe(true);
    let next = persisted(back, p);
    p = plan(next, { pods: allPods(c, hash), admin: adminFor(c, { canceled: true }) });
    expect(p.status.operation!.phase).toBe('Clearing');
    expect(adminCalls(p)).toEqual([{ kind: 'admin', call: 'decommissionClear', pool: expr(c, 'p0') }]);
    next = persisted(next, p);
    p = plan(next, { pods: allPods(c, hash), admin: adminFor(c) });
    expect(p.status.operation).toBeUndefined();
    expect(p.status.pools!.find((x) => x.name === 'p0')!.state).toBe('Active');
    expect(cond(p, 'Ready')?.status).toBe('True');
  });
});

describe('planner: cancel path (§3.3) edge cases', () => {
  const adminFor = (c: SvcCluster, info: Parameters<typeof adminPool>[2] = {}) => ({ reachable: true, pools: [adminPool(0, expr(c, 'p0'), info), adminPool(1, expr(c, 'p1'))] });
  function withdrawn(info: Parameters<typeof adminPool>[2]) {
    const { c, hash } = established([pool('p0'), pool('p1')]);
    const dec = edit(c, [pool('p0', { decommission: true }), pool('p1')]);
    const pods = [...podsFor(c, 'p0', hash), ...podsFor(c, 'p1', hash)];
    const drainingC = persisted(dec, plan(dec, { pods, admin: adminFor(c, info) }));
    expect(drainingC.status!.operation!.phase).toBe('Draining');
    return { c: edit(drainingC, [pool('p0'), pool('p1')]), pods };
  }

  it('a queued entry whose cancel was refused is canceled again until the server takes it', () => {
    const queued = { queued: true, startTime: NOW.toISOString() };
    const { c, pods } = withdrawn(queued);
    let p = plan(c, { pods, admin: adminFor(c, queued) });
    expect(adminCalls(p)).toEqual([{ kind: 'admin', call: 'decommissionCancel', pool: expr(c, 'p0') }]);
    const next = persisted(c, p);
    next.status!.operation!.lastError = { action: 'decommissionCancel', code: 'XSvcDecommissionNotAllowed', message: 'cannot cancel a queued decommission', at: NOW.toISOString() };
    p = plan(next, { pods, admin: adminFor(c, { startTime: NOW.toISOString() }) });
    expect(adminCalls(p)).toEqual([{ kind: 'admin', call: 'decommissionCancel', pool: expr(c, 'p0') }]);
    expect(p.status.operation!.phase).toBe('Canceling');
    expect(cond(p, 'Stalled')?.status).toBe('False');
  });

  it('a drain that completed before the cancel keeps the pool Drained and stalls (DecommissionCompleted); decommission: true resumes the removal', () => {
    const { c, pods } = withdrawn({ startTime: NOW.toISOString() });
    const complete = adminFor(c, { complete: true, startTime: NOW.toISOString() });
    let p = plan(c, { pods, admin: complete });
    expect(cond(p, 'Stalled')?.reason).toBe('DecommissionCompleted');
    expect(p.status.pools!.find((x) => x.name === 'p0')!.state).toBe('Drained');
    expect(p.status.operation).toBeUndefined();
    expect(adminCalls(p)).toEqual([]);
    expect(deletedPods(p)).toEqual([]);
    let next = persisted(c, p);
    p = plan(next, { pods, admin: complete });
    expect(cond(p, 'Stalled')?.reason).toBe('DecommissionCompleted');
    expect(p.actions).toEqual([]);
    // Intent back to decommission: the completed entry is adopted and verified again (row 4), then the restart without it.
    next = edit(persisted(next, p), [pool('p0', { decommission: true }), pool('p1')]);
    p = plan(next, { pods, admin: complete });
    expect(p.status.operation).toMatchObject({ type: 'RemovePool', phase: 'RestartingWithoutPool' });
    expect(adminCalls(p)).toEqual([]);
    expect(deletedPods(p).sort()).toEqual(['prod-p1-0', 'prod-p1-1', 'prod-p1-2', 'prod-p1-3']);
  });
});

describe('planner: what needs a human (§3.4) and other changes', () => {
  it('a pool removed from the list while it holds data is refused, nothing is deleted', () => {
    const { c, hash } = established([pool('p0'), pool('p1')]);
    const p = plan(edit(c, [pool('p1')]), { pods: [...podsFor(c, 'p0', hash), ...podsFor(c, 'p1', hash)] });
    expect(cond(p, 'Stalled')).toMatchObject({ status: 'True', reason: 'PoolRemovedWithoutDecommission' });
    expect(p.actions).toEqual([]);
    expect(p.status.phase).toBe('Stalled');
  });

  it('changing the geometry of a running pool is refused (immutable, also enforced by CEL)', () => {
    const { c } = established();
    const p = plan(edit(c, [pool('p0', { servers: 8 })]));
    expect(cond(p, 'SpecValid')).toMatchObject({ status: 'False', reason: 'SpecInvalid' });
    expect(p.actions).toEqual([]);
  });

  it('shrinking a volume claim is refused; growing expands the PVCs in place', () => {
    const { c, hash } = established();
    const shrink = plan(edit(c, [pool('p0', { volumeClaimTemplate: { resources: { requests: { storage: '5Gi' } } } })]), { statefulSets: [stsFor(c, 'p0', hash)] });
    expect(cond(shrink, 'Stalled')?.reason).toBe('PvcShrinkUnsupported');
    const grown = edit(c, [pool('p0', { volumeClaimTemplate: { resources: { requests: { storage: '20Gi' } } } })]);
    const p = plan(grown, { pods: podsFor(grown, 'p0', hash), statefulSets: [stsFor(c, 'p0', hash)], pvcs: [{ name: 'data-0-prod-p0-0', pool: 'p0', phase: 'Bound', storage: '10Gi' }] });
    expect(p.actions).toContainEqual({ kind: 'expandPvcs', pool: 'p0', storage: '20Gi' });
    const sts = applied(p, 'StatefulSet')[0] as unknown as { spec: { volumeClaimTemplates: { spec: { resources: { requests: { storage: string } } } }[] } };
    expect(sts.spec.volumeClaimTemplates[0]!.spec.resources.requests.storage).toBe('10Gi');
  });

  it('changing the StorageClass of a running pool is refused when admission let it through (VCTs are immutable)', () => {
    const { c, hash } = established();
    const p = plan(edit(c, [pool('p0', { volumeClaimTemplate: { storageClassName: 'fast', resources: { requests: { storage: '10Gi' } } } })]), { pods: podsFor(c, 'p0', hash), statefulSets: [stsFor(c, 'p0', hash)] });
    expect(cond(p, 'SpecValid')).toMatchObject({ status: 'False', reason: 'SpecInvalid' });
    expect(cond(p, 'Stalled')!.message).toContain('storageClassName');
    expect(p.actions).toEqual([]);
  });

  it('validateSpec re-checks what admission checks where it may have been bypassed: setDriveCount against what runs, credentials.secretName against the pods\' Secret', () => {
    const { c, hash } = established([pool('p0', { servers: 4, volumesPerServer: 4 })]);
    const pinned = plan(edit(c, c.spec.pools, { erasure: { setDriveCount: 8 } }), { pods: podsFor(c, 'p0', hash), statefulSets: [stsFor(c, 'p0', hash)] });
    expect(cond(pinned, 'SpecValid')).toMatchObject({ status: 'False', reason: 'SpecInvalid' });
    expect(cond(pinned, 'Stalled')!.message).toContain('setDriveCount');
    expect(pinned.actions).toEqual([]);
    const renamed = plan(edit(c, c.spec.pools, { credentials: { secretName: 'other-root' } }), { pods: podsFor(c, 'p0', hash), statefulSets: [{ ...stsFor(c, 'p0', hash), credentialsSecret: 'prod-root' }] });
    expect(cond(renamed, 'SpecValid')).toMatchObject({ status: 'False', reason: 'SpecInvalid' });
    expect(cond(renamed, 'Stalled')!.message).toContain('credentials.secretName');
    // The server's own rules on a layout admission would refuse too (1 server x 17 drives).
    const odd = plan(cluster([pool('p0', { servers: 1, volumesPerServer: 17 })]));
    expect(cond(odd, 'Stalled')).toMatchObject({ status: 'True', reason: 'SetLayoutUnsupported' });
    expect(odd.actions).toEqual([]);
  });

  it('a coordinated restart (parity) not Ready in time stalls with WaitingForQuorum and deletes nothing again', () => {
    const { c, hash } = established([pool('p0')]);
    const e = edit(c, [pool('p0')], { erasure: { standardParity: 3 } });
    const next = persisted(e, plan(e, { pods: podsFor(c, 'p0', hash) }));
    const p = planReconcile(next, observation({ now: later(601_000), pods: podsFor(c, 'p0', next.status!.operation!.target!.hash, { ready: false }) }), C);
    expect(cond(p, 'Stalled')?.reason).toBe('WaitingForQuorum');
    expect(p.status.operation!.phase).toBe('RestartingCluster');
    expect(deletedPods(p)).toEqual([]);
  });

  it('a missing credentials Secret stalls with CredentialsMissing', () => {
    const p = plan(cluster([pool('p0')]), { credentialsProblem: 'Secret storage/prod-root not found' });
    expect(cond(p, 'Stalled')?.reason).toBe('CredentialsMissing');
    expect(p.actions).toEqual([]);
  });

  it('paused: true acts on nothing and says so', () => {
    const { c } = established();
    const p = plan(edit(c, [pool('p0'), pool('p1')], { paused: true }));
    expect(p.actions).toEqual([]);
    expect(cond(p, 'Reconciling')).toMatchObject({ status: 'False', reason: 'Paused' });
    expect(cond(p, 'Ready')?.status).toBe('False');
  });

  it('a parity change is a coordinated restart: all pods at once, then verify', () => {
    const { c, hash } = established([pool('p0')]);
    const e = edit(c, [pool('p0')], { erasure: { standardParity: 3 } });
    const p = plan(e, { pods: podsFor(c, 'p0', hash) });
    expect(p.status.operation).toMatchObject({ type: 'CoordinatedRestart', phase: 'RestartingCluster' });
    expect(envOf(applied(p, 'StatefulSet')[0]!, 'SVC_STORAGE_CLASS_STANDARD')).toBe('EC:3');
    expect(deletedPods(p)).toHaveLength(4);
  });

  it('an image change under imageChange: Coordinated restarts every pod together', () => {
    const { c, hash } = established([pool('p0')]);
    const p = plan(edit(c, [pool('p0')], { image: 'svc-node:1.1.0' }), { pods: podsFor(c, 'p0', hash) });
    expect(p.status.operation!.type).toBe('CoordinatedRestart');
    expect(deletedPods(p)).toHaveLength(4);
  });

  it('a resources change is a rolling restart: one pod at a time, next only when all are ready', () => {
    const { c, hash } = established([pool('p0')]);
    const e = edit(c, [pool('p0', { resources: { requests: { cpu: '2' } } })]);
    let p = plan(e, { pods: podsFor(c, 'p0', hash) });
    expect(p.status.operation!.type).toBe('RollingRestart');
    expect(deletedPods(p)).toEqual(['prod-p0-0']);
    const next = persisted(e, p);
    const pods = podsFor(c, 'p0', hash);
    pods[0] = { ...podsFor(e, 'p0', hash)[0]!, ready: false };
    p = plan(next, { pods });
    expect(deletedPods(p)).toEqual([]);
    pods[0] = { ...pods[0]!, ready: true };
    p = plan(persisted(next, p), { pods });
    expect(deletedPods(p)).toEqual(['prod-p0-1']);
  });

  it('a changed spec.rebalance.requestId runs a rebalance once', () => {
    const { c, hash } = established([pool('p0'), pool('p1')]);
    const e = edit(c, c.spec.pools, { rebalance: { requestId: 'now-1' } });
    const admin = { reachable: true, pools: [adminPool(0, expr(c, 'p0')), adminPool(1, expr(c, 'p1'))] };
    const pods = [...podsFor(c, 'p0', hash), ...podsFor(c, 'p1', hash)];
    const p = plan(e, { pods, admin });
    expect(p.status.operation).toMatchObject({ type: 'Rebalance', phase: 'StartingRebalance' });
    expect(adminCalls(p)).toEqual([{ kind: 'admin', call: 'rebalanceStart' }]);
    const done = plan(persisted(e, p), { pods, admin: { ...admin, rebalance: rebalance('Completed', { id: 'rb-2' }) } });
    expect(done.status.operation?.type).toBe('Rebalance');
  });

  it('a console disabled in the spec loses its Service', () => {
    const { c, hash } = established();
    const p = plan(edit(c, c.spec.pools, { services: { console: { enabled: false } } }), { pods: podsFor(c, 'p0', hash) });
    expect(p.actions).toContainEqual({ kind: 'deleteService', name: 'prod-console' });
    expect(applied(p, 'Service').map((s) => s.metadata.name)).toEqual(['prod-hl', 'prod']);
  });

  it('idle: re-applies children with the applied launch settings only, and requeues slowly', () => {
    const { c, hash } = established();
    const p = plan(c, { pods: podsFor(c, 'p0', hash), statefulSets: [stsFor(c, 'p0', hash)] });
    expect(kinds(p).every((k) => k === 'apply')).toBe(true);
    expect(deletedPods(p)).toEqual([]);
    expect(p.requeueAfterMs).toBe(C.idleMs);
    expect(cond(p, 'Ready')?.status).toBe('True');
  });

  it('a pod that lost readiness while idle makes the cluster Degraded and not Ready, without restarts', () => {
    const { c, hash } = established();
    const pods = podsFor(c, 'p0', hash);
    pods[1] = { ...pods[1]!, ready: false };
    const p = plan(c, { pods });
    expect(cond(p, 'Ready')).toMatchObject({ status: 'False', reason: 'PodsNotReady' });
    expect(cond(p, 'Degraded')?.status).toBe('True');
    expect(deletedPods(p)).toEqual([]);
  });
});

describe('planner: spec.tls', () => {
  const tls = { generated: {} };
  it('TlsReady follows the certificate; a missing one degrades an applied cluster; renewal time sets the requeue', () => {
    const { c, hash } = established([pool('p0')], { tls });
    const pods = podsFor(c, 'p0', hash);
    const sts = [stsFor(c, 'p0', hash)];
    const adminObs = { reachable: true, pools: [adminPool(0, expr(c, 'p0'))] };
    const renewAtMs = NOW.getTime() + 60_000;
    const ok = plan(c, { pods, statefulSets: sts, admin: adminObs, tls: { ready: true, reason: 'AsExpected', message: 'serving', ca: 'PEM', renewAtMs } });
    expect(cond(ok, 'TlsReady')).toMatchObject({ status: 'True', reason: 'AsExpected' });
    expect(cond(ok, 'Ready')?.status).toBe('True');
    expect(ok.requeueAfterMs).toBe(60_000);
    const missing = plan(c, { pods, statefulSets: sts, admin: adminObs, tls: { ready: false, reason: 'TlsSecretMissing', message: 'Secret storage/prod-tls not found' } });
    expect(cond(missing, 'TlsReady')).toMatchObject({ status: 'False', reason: 'TlsSecretMissing', message: 'Secret storage/prod-tls not found' });
    expect(cond(missing, 'Degraded')).toMatchObject({ status: 'True', reason: 'TlsSecretMissing' });
    expect(missing.requeueAfterMs).toBeLessThanOrEqual(5_000);
    // https endpoints everywhere
    expect(expr(c, 'p0')).toMatch(/^https:\/\//);
  });

  it('switching TLS on is one coordinated restart (the pool keeps its identity across the scheme change)', () => {
    const { c } = established([pool('p0')]);
    const on = edit(c, c.spec.pools, { tls });
    const p = plan(on, { pods: podsFor(c, 'p0', c.status!.launchConfig!.applied!.hash), statefulSets: [stsFor(c, 'p0', c.status!.launchConfig!.applied!.hash)] });
    expect(p.status.operation).toMatchObject({ type: 'CoordinatedRestart' });
    expect(p.status.operation!.target!.volumes).toMatch(/^https:\/\/prod-p0-/);
    expect(p.status.pools!.map((x) => [x.name, x.state])).toEqual([['p0', 'Active']]);
    expect(cond(plan(c), 'TlsReady')).toBeUndefined();
  });
});
