/**
 * The real controller (real client-node, informers, server-side apply,
 * status subresource, events) against the in-process API server, with the
 * StatefulSet simulator for pods and the fake admin API for the nodes.
 * The same lifecycle with real `svc` processes is operator/test/e2e-process.test.ts.
 *
 * RBAC is enforced: the controller authenticates as the operator's
 * ServiceAccount, bound to exactly the Roles and ClusterRoles the Helm chart
 * renders. The last test fails on any grant the scenarios never used (so the
 * chart grants no more than the operator needs; rbac.test.ts shows a missing
 * verb fails with 403).
 */
import { CustomObjectsApi } from '@kubernetes/client-node';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminClient } from '../src/admin/client.ts';
import { getCondition } from '../src/reconcile/conditions.ts';
import { Controller } from '../src/runtime/controller.ts';
import { LeaderElector } from '../src/runtime/leader-election.ts';
import { checkInstalledCrd } from '../src/runtime/main.ts';
import { Kube } from '../src/kube/kube.ts';
import { ANNOTATION_LAUNCH_HASH, LEGACY_FINALIZER } from '../src/topology/names.ts';
import { serviceAccountUser } from './fake-apiserver/rbac.ts';
import { FakeAdminApi } from './fake-admin/fake-admin.ts';
import type { FakeApiServer } from './fake-apiserver/server.ts';
import type { Obj } from './fake-apiserver/store.ts';
import { Clusters, CREDENTIALS, installOperatorRbac, listOf, NS, OPERATOR_NS, OPERATOR_SA, startApiWithCrd } from './harness.ts';
import { FixedKubelet, StatefulSetSimulator } from './sim/statefulset-sim.ts';

/** Events are recorded right after the status write: wait for them (bounded). */
async function eventReasons(api: FakeApiServer, want: string[]): Promise<void> {
  const end = Date.now() + 10_000;
  let have: unknown[] = [];
  while (Date.now() < end) {
    have = listOf(api, '', 'v1', 'events').map((e) => e['reason']);
    if (want.every((w) => have.includes(w))) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  expect(have).toEqual(expect.arrayContaining(want));
}

const log = pino({ level: process.env['SVC_TEST_LOG'] ?? 'silent' });

const spec = (pools: { name: string; servers?: number; volumesPerServer?: number; decommission?: boolean }[]) => ({
  image: 'svc-node:test',
  credentials: { secretName: 'prod-root' },
  pools: pools.map((p) => ({ servers: 2, volumesPerServer: 2, volumeClaimTemplate: { resources: { requests: { storage: '1Gi' } } }, ...p })),
});

describe('controller against the in-process API server', () => {
  let api: FakeApiServer;
  let sim: StatefulSetSimulator;
  let kubelet: FixedKubelet;
  let admin: FakeAdminApi;
  let clusters: Clusters;
  let controller: Controller;
  let token: string;
  const operatorKube = () => new Kube(api.kubeConfig(token));

  const startController = () => {
    const c = new Controller({
      kube: operatorKube(),
      log,
      clusterDomain: 'cluster.local',
      pollMs: 100,
      idleMs: 30_000,
      stalledMs: 500,
      concurrency: 2,
      adminFactory: (_endpoints, creds) => new AdminClient({ endpoints: [admin.url], credentials: creds }),
    });
    return c.start().then(() => c);
  };

  /** The fake nodes run whatever SVC_VOLUMES every running pod agrees on. */
  const syncAdminToPods = () => {
    const pods = listOf(api, '', 'v1', 'pods').filter((p) => (p['status'] as { phase?: string })?.phase === 'Running');
    const vols = new Set(pods.map((p) => ((p['spec'] as { containers: { env: { name: string; value: string }[] }[] }).containers[0]!.env.find((e) => e.name === 'SVC_VOLUMES')?.value ?? '')));
    if (vols.size === 1) {
      const v = [...vols][0]!.split(' ');
      if (v.join(' ') !== admin.pools.join(' ')) admin.setPools(v);
    }
  };

  beforeAll(async () => {
    api = await startApiWithCrd();
    token = installOperatorRbac(api);
    kubelet = new FixedKubelet();
    // A pod is ready only once every running pod agrees on SVC_VOLUMES (as nodes wait for their peers).
    kubelet.readiness = (pod) => {
      syncAdminToPods();
      const mine = (pod['spec'] as { containers: { env: { name: string; value: string }[] }[] }).containers[0]!.env.find((e) => e.name === 'SVC_VOLUMES')?.value;
      return admin.pools.join(' ') === mine;
    };
    sim = new StatefulSetSimulator(api, kubelet, { probeMs: 50 });
    admin = await FakeAdminApi.start({ pools: [], credentials: CREDENTIALS, bytesPerSecond: 400 });
    clusters = new Clusters(api);
    controller = await startController();
  });

  afterAll(async () => {
    controller?.stop();
    await sim?.stop();
    await admin?.close();
    await api?.close();
  });

  it('at start-up, as the operator process does: the installed CRD revision checked, the leader-election Lease taken and renewed', async () => {
    expect(await checkInstalledCrd(operatorKube())).toBeUndefined();
    const elector = new LeaderElector({ identity: 'ops-0', client: operatorKube().leaseClient(OPERATOR_NS, 'svc-operator'), onStartedLeading: () => undefined, onStoppedLeading: () => undefined, timers: { setTimeout: () => 0, clearTimeout: () => undefined } });
    await elector.tick();
    await elector.tick();
    expect(elector.leading).toBe(true);
    await elector.stop();
  });

  it('a new SvcCluster becomes Ready: StatefulSet, Services, one PDB per pool with owner references, no finalizer, events', async () => {
    await clusters.create('prod', spec([{ name: 'p0' }]));
    const c = await clusters.waitReady('prod');
    expect(c.metadata.finalizers ?? []).toEqual([]);
    expect(c.status!.phase).toBe('Ready');
    expect(c.status!.pools!.map((p) => [p.name, p.state, p.index])).toEqual([['p0', 'Active', 0]]);
    expect(getCondition(c.status!.conditions, 'Stalled')?.status).toBe('False');
    const sts = listOf(api, 'apps', 'v1', 'statefulsets');
    expect(sts.map((s) => s.metadata.name)).toEqual(['prod-p0']);
    expect(sts[0]!.metadata.ownerReferences![0]).toMatchObject({ kind: 'SvcCluster', name: 'prod', uid: c.metadata.uid, controller: true });
    expect(listOf(api, '', 'v1', 'services').map((s) => s.metadata.name).sort()).toEqual(['prod', 'prod-console', 'prod-hl']);
    expect(listOf(api, 'policy', 'v1', 'poddisruptionbudgets').map((b) => [b.metadata.name, (b['spec'] as { maxUnavailable: number }).maxUnavailable])).toEqual([['prod-p0', 0]]);
    // One field manager owns what the operator applies.
    expect(Object.keys(api.store.managersOf(api.store.find('apps', 'v1', 'statefulsets')!, 'storage', 'prod-p0'))).toContain('svc-operator');
    await eventReasons(api, ['AddPoolsStarted', 'PoolAdded']);
  });

  it('an invalid edit is refused at admission by the CRD rules (immutable pool geometry)', async () => {
    await expect(clusters.editSpec('prod', (s) => ({ ...s, pools: [{ ...s.pools[0]!, servers: 3 }] }))).rejects.toSatisfy((e: unknown) => (e as { code?: number }).code === 422);
  });

  it('adding a pool: provision → coordinated restart of every pod → topology verified → rebalance → Ready', async () => {
    const before = listOf(api, '', 'v1', 'pods').map((p) => p.metadata.uid);
    await clusters.editSpec('prod', (s) => ({ ...s, pools: [...s.pools, { name: 'p1', servers: 2, volumesPerServer: 2, volumeClaimTemplate: { resources: { requests: { storage: '1Gi' } } } }] }));
    await clusters.waitFor('prod', 'the AddPools operation', (c) => c.status?.operation?.type === 'AddPools');
    const c = await clusters.waitFor('prod', 'pool p1 Active and the operation done', (x) => x.status?.operation === undefined && x.status?.pools?.find((p) => p.name === 'p1')?.state === 'Active');
    await clusters.waitReady('prod');
    const pods = listOf(api, '', 'v1', 'pods');
    expect(pods).toHaveLength(4);
    expect(new Set(pods.map((p) => p.metadata.annotations![ANNOTATION_LAUNCH_HASH]))).toEqual(new Set([c.status!.launchConfig!.applied!.hash]));
    // p0's pods were restarted (new uids), with every pool's expression.
    expect(pods.filter((p) => before.includes(p.metadata.uid))).toEqual([]);
    expect(admin.requests.filter((r) => r.startsWith('POST /svc/admin/v3/rebalance/start'))).toHaveLength(1);
    expect(c.status!.rebalance?.finishedAt).toBeTruthy();
    expect(c.status!.launchConfig!.applied!.volumes.split(' ')).toHaveLength(2);
  });

  it('decommission: drain → operator killed mid-drain resumes → restart without the pool → clear → StatefulSet gone, PVCs kept', async () => {
    await clusters.editSpec('prod', (s) => ({ ...s, pools: s.pools.map((p) => (p.name === 'p0' ? { ...p, decommission: true } : p)) }));
    await clusters.waitFor('prod', 'the drain', (c) => c.status?.operation?.phase === 'Draining');
    controller.stop();
    await new Promise((r) => setTimeout(r, 300));
    controller = await startController();
    const c = await clusters.waitFor('prod', 'p0 removed', (x) => x.status?.pools?.find((p) => p.name === 'p0')?.state === 'Removed' && x.status?.operation === undefined, 90_000);
    expect(c.status!.launchConfig!.applied!.volumes.split(' ')).toHaveLength(1);
    expect(listOf(api, 'apps', 'v1', 'statefulsets').map((s) => s.metadata.name)).toEqual(['prod-p1']);
    expect(listOf(api, '', 'v1', 'persistentvolumeclaims').filter((v) => v.metadata.name.includes('prod-p0'))).toHaveLength(4);
    const calls = admin.requests.map((r) => r.split('?')[0]);
    expect(calls).toEqual(expect.arrayContaining(['POST /svc/admin/v3/pools/decommission', 'POST /svc/admin/v3/pools/clear']));
    expect(admin.requests.filter((r) => r.startsWith('POST /svc/admin/v3/pools/decommission'))).toHaveLength(1);
    await clusters.waitReady('prod');
    await eventReasons(api, ['DecommissionStarted', 'DecommissionCompleted', 'PoolRemoved', 'PvcRetained']);
    // The entry may now leave the list; the status forgets it.
    await clusters.editSpec('prod', (s) => ({ ...s, pools: s.pools.filter((p) => p.name !== 'p0') }));
    const after = await clusters.waitReady('prod');
    expect(after.status!.pools!.map((p) => p.name)).toEqual(['p1']);
  });

  it('a pool dropped from the list while it holds data is refused with Stalled, and nothing is deleted', async () => {
    await clusters.editSpec('prod', (s) => ({ ...s, pools: [...s.pools, { name: 'p2', servers: 2, volumesPerServer: 2, volumeClaimTemplate: { resources: { requests: { storage: '1Gi' } } } }] }));
    await clusters.waitFor('prod', 'p2 Active', (x) => x.status?.pools?.find((p) => p.name === 'p2')?.state === 'Active' && !x.status.operation, 60_000);
    await clusters.editSpec('prod', (s) => ({ ...s, pools: s.pools.filter((p) => p.name !== 'p2') }));
    const c = await clusters.waitFor('prod', 'Stalled', (x) => getCondition(x.status?.conditions, 'Stalled')?.status === 'True' && x.status?.observedGeneration === x.metadata.generation);
    expect(getCondition(c.status!.conditions, 'Stalled')!.reason).toBe('PoolRemovedWithoutDecommission');
    expect(getCondition(c.status!.conditions, 'Ready')!.status).toBe('False');
    expect(listOf(api, 'apps', 'v1', 'statefulsets').map((s) => s.metadata.name)).toContain('prod-p2');
    // Restoring the entry clears the stall.
    await clusters.editSpec('prod', (s) => ({ ...s, pools: [...s.pools, { name: 'p2', servers: 2, volumesPerServer: 2, volumeClaimTemplate: { resources: { requests: { storage: '1Gi' } } } }] }));
    await clusters.waitReady('prod');
  });

  it('a watch that drops or an API error does not stop the controller (informers restart)', async () => {
    api.dropWatches();
    api.failNext(/PATCH .*statefulsets/, 500, 2);
    await clusters.editSpec('prod', (s) => ({ ...s, services: { console: { enabled: false } } }));
    await clusters.waitFor('prod', 'the console Service deleted', () => !listOf(api, '', 'v1', 'services').some((s) => s.metadata.name === 'prod-console'), 30_000);
    await clusters.waitReady('prod');
    expect(api.requests.filter((r) => r.startsWith('GET') && r.includes('watch=true')).length).toBeGreaterThan(4);
  });

  it('drive size grows: the PVCs are expanded in place after the StorageClass is checked', async () => {
    api.store.create(api.store.find('storage.k8s.io', 'v1', 'storageclasses')!, undefined, { metadata: { name: 'expandable' }, provisioner: 'fake', allowVolumeExpansion: true });
    const g0 = { name: 'g0', servers: 2, volumesPerServer: 2, volumeClaimTemplate: { storageClassName: 'expandable', resources: { requests: { storage: '1Gi' } } } };
    await clusters.editSpec('prod', (s) => ({ ...s, pools: [...s.pools, g0] }));
    await clusters.waitFor('prod', 'g0 Active', (x) => x.status?.pools?.find((p) => p.name === 'g0')?.state === 'Active' && !x.status.operation, 60_000);
    await clusters.editSpec('prod', (s) => ({ ...s, pools: s.pools.map((p) => (p.name === 'g0' ? { ...p, volumeClaimTemplate: { ...p.volumeClaimTemplate, resources: { requests: { storage: '2Gi' } } } } : p)) }));
    const end = Date.now() + 20_000;
    const sizes = () => listOf(api, '', 'v1', 'persistentvolumeclaims').filter((v) => v.metadata.name.includes('prod-g0')).map((v) => (v['spec'] as { resources: { requests: { storage: string } } }).resources.requests.storage);
    while (Date.now() < end && !sizes().every((x) => x === '2Gi')) await new Promise((r) => setTimeout(r, 100));
    expect(sizes()).toEqual(['2Gi', '2Gi', '2Gi', '2Gi']);
  });

  it('a new pool removed before it ever joined: its StatefulSet and PVCs are deleted (pvcRetention: Delete)', async () => {
    await clusters.editSpec('prod', (s) => ({ ...s, storage: { pvcRetention: 'Delete' } }));
    await clusters.waitReady('prod');
    sim.pendingClaims = (claim) => claim.includes('prod-g1');
    await clusters.editSpec('prod', (s) => ({ ...s, pools: [...s.pools, { name: 'g1', servers: 2, volumesPerServer: 2, volumeClaimTemplate: { resources: { requests: { storage: '1Gi' } } } }] }));
    await clusters.waitFor('prod', 'g1 provisioning', (c) => c.status?.operation?.phase === 'ProvisioningNewPools');
    // Its claims never bind, so the scheduler never places its pods: the pool cannot have formed.
    const scheduled = (o: { [k: string]: unknown }) => (o['status'] as { conditions?: { type: string; status: string }[] } | undefined)?.conditions?.find((x) => x.type === 'PodScheduled')?.status;
    // (the simulated StatefulSet controller makes them in its own time: under load later than any fixed wait)
    await expect
      .poll(() => listOf(api, '', 'v1', 'pods').filter((p) => p.metadata.name.startsWith('prod-g1-')).map(scheduled), { timeout: 30_000, interval: 100 })
      .toEqual(['False', 'False']);
    // ... and they have no node, so deleting them needs no kubelet (no Terminating phase)
    expect(listOf(api, '', 'v1', 'pods').filter((p) => p.metadata.name.startsWith('prod-g1-')).map((p) => (p['spec'] as { nodeName?: string }).nodeName)).toEqual([undefined, undefined]);
    await clusters.editSpec('prod', (s) => ({ ...s, pools: s.pools.filter((p) => p.name !== 'g1') }));
    await clusters.waitReady('prod');
    const end = Date.now() + 20_000;
    const left = () => [...listOf(api, 'apps', 'v1', 'statefulsets'), ...listOf(api, '', 'v1', 'persistentvolumeclaims'), ...listOf(api, 'policy', 'v1', 'poddisruptionbudgets')].filter((o) => o.metadata.name.includes('prod-g1'));
    while (Date.now() < end && left().length > 0) await new Promise((r) => setTimeout(r, 100));
    expect(left()).toEqual([]);
    sim.pendingClaims = () => false;
    await clusters.editSpec('prod', (s) => ({ ...s, storage: { pvcRetention: 'Retain' } }));
    // four waits of up to a minute each: under CI load the 60 s file default cut it off before
    // any wait could say which state it was stuck in
  }, 180_000);

  it('a cluster an earlier release gave svc.io/finalizer loses it, so deleting it never waits for the operator', async () => {
    await api.kubeConfig().makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
      group: 'svc.io',
      version: 'v1alpha1',
      namespace: NS,
      plural: 'svcclusters',
      // Paused: the operator touches nothing but the finalizer (this test's fake nodes serve one cluster).
      body: { apiVersion: 'svc.io/v1alpha1', kind: 'SvcCluster', metadata: { name: 'legacy', namespace: NS, finalizers: [LEGACY_FINALIZER] }, spec: { ...spec([{ name: 'l0' }]), paused: true } },
    });
    await clusters.waitFor('legacy', 'the legacy finalizer removed', (c) => !(c.metadata.finalizers ?? []).includes(LEGACY_FINALIZER));
    controller.stop();
    await clusters.delete('legacy');
    await clusters.waitFor('legacy', 'gone', () => false, 2_000).catch(() => undefined);
    expect(listOf(api, 'svc.io', 'v1alpha1', 'svcclusters').map((c) => c.metadata.name)).not.toContain('legacy');
    controller = await startController();
  });

  it('spec.tls under the chart\'s RBAC: generated (the operator keeps a CA and issues the certificate Secret) and cert-manager (a Certificate applied)', async () => {
    const custom = api.kubeConfig().makeApiClient(CustomObjectsApi);
    // cert-manager's Certificate kind, as its CRD serves it (schema left open here).
    await api.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'certificates.cert-manager.io' },
      spec: {
        group: 'cert-manager.io',
        scope: 'Namespaced',
        names: { kind: 'Certificate', plural: 'certificates', singular: 'certificate', listKind: 'CertificateList' },
        versions: [{ name: 'v1', served: true, storage: true, subresources: { status: {} }, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
      },
    });
    // Paused: only spec.tls is acted on (this test's fake nodes serve one cluster).
    const create = (name: string, tls: Record<string, unknown>) =>
      custom.createNamespacedCustomObject({ group: 'svc.io', version: 'v1alpha1', namespace: NS, plural: 'svcclusters', body: { apiVersion: 'svc.io/v1alpha1', kind: 'SvcCluster', metadata: { name, namespace: NS }, spec: { ...spec([{ name: 'x0' }]), paused: true, tls } } });
    await create('tls-gen', { generated: {} });
    await create('tls-cm', { certManager: { issuerRef: { name: 'ca-issuer', kind: 'ClusterIssuer' } } });
    const end = Date.now() + 20_000;
    const secrets = () => listOf(api, '', 'v1', 'secrets').map((x) => x.metadata.name);
    const certs = () => listOf(api, 'cert-manager.io', 'v1', 'certificates').map((x) => x.metadata.name);
    while (Date.now() < end && !(secrets().includes('tls-gen-tls') && secrets().includes('tls-gen-tls-ca') && certs().includes('tls-cm-tls'))) await new Promise((r) => setTimeout(r, 100));
    expect(secrets()).toEqual(expect.arrayContaining(['tls-gen-tls', 'tls-gen-tls-ca']));
    expect(certs()).toEqual(['tls-cm-tls']);
    // Renewal re-applies the issued Secret (patch), as at the end of its lifetime.
    const tlsSecret = () => api.store.get(api.store.find('', 'v1', 'secrets')!, NS, 'tls-gen-tls');
    const before = tlsSecret().metadata.resourceVersion;
    await clusters.editSpec('tls-gen', (s) => ({ ...s, tls: { generated: {}, extraNames: ['s3.example.test'] } }));
    while (Date.now() < end + 10_000 && tlsSecret().metadata.resourceVersion === before) await new Promise((r) => setTimeout(r, 100));
    expect(tlsSecret().metadata.resourceVersion).not.toBe(before);
    for (const n of ['tls-gen', 'tls-cm']) await clusters.delete(n);
  });

  it('spec.iam under the chart\'s RBAC: the declared sources are read; a missing one is reported and nothing is applied (identity.test.ts applies them to a real server)', async () => {
    await clusters.editSpec('prod', (s) => ({ ...s, iam: { policies: [{ name: 'read-data', configMap: { name: 'no-such-policies', key: 'read.json' } }], users: [{ secretName: 'no-such-user' }] } }));
    const c = await clusters.waitFor('prod', 'IdentitySourceMissing', (x) => getCondition(x.status?.conditions, 'IdentitySynced')?.reason === 'IdentitySourceMissing', 20_000);
    expect(getCondition(c.status?.conditions, 'IdentitySynced')).toMatchObject({ status: 'False', message: expect.stringContaining('no-such-policies') });
    expect(c.status?.identity).toBeUndefined();
    await clusters.editSpec('prod', (s) => {
      const { iam: _iam, ...rest } = s;
      return rest;
    });
  });

  it('a template edit rolls one pod at a time through graceful termination: the next goes only when the last is back and Ready', async () => {
    // Pods stay Terminating while their containers stop (as on a real cluster, where the API
    // server keeps a bound pod until its kubelet confirms); while one does, every other pod must
    // be there, not terminating and Ready when the operator deletes the next.
    kubelet.stopDelayMs = 400;
    // Image changes roll (the default restarts every pod together, as a version change needs).
    await clusters.editSpec('prod', (s) => ({ ...s, restartPolicy: { imageChange: 'Rolling' } }));
    await clusters.waitReady('prod');
    const podType = api.store.find('', 'v1', 'pods')!;
    const ours = () => api.store.list(podType, NS).filter((p) => p.metadata.name.startsWith('prod-'));
    const ready = (p: Obj) => (p['status'] as { conditions?: { type: string; status: string }[] } | undefined)?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True') === true;
    const before = ours().map((p) => p.metadata.name).sort();
    const terminated: string[] = [];
    const violations: string[] = [];
    let sawTerminating = false;
    const unsubscribe = api.store.onEvent((e) => {
      if (e.typeKey !== '/pods' || e.type !== 'MODIFIED' || !e.object.metadata.deletionTimestamp || !e.object.metadata.name.startsWith('prod-')) return;
      if (terminated.includes(e.object.metadata.uid!)) return;
      terminated.push(e.object.metadata.uid!);
      sawTerminating = true;
      const others = ours().filter((p) => p.metadata.name !== e.object.metadata.name);
      const missing = before.filter((n) => n !== e.object.metadata.name && !others.some((p) => p.metadata.name === n));
      const busy = others.filter((p) => p.metadata.deletionTimestamp || !ready(p)).map((p) => p.metadata.name);
      if (missing.length > 0 || busy.length > 0) violations.push(`${e.object.metadata.name} deleted while ${[...missing.map((m) => `${m} absent`), ...busy.map((b) => `${b} terminating or not Ready`)].join(', ')}`);
    });
    try {
      await clusters.editSpec('prod', (s) => ({ ...s, image: 'svc-node:test-rolled' }));
      const image = (p: Obj) => (p['spec'] as { containers: { image: string }[] }).containers[0]!.image;
      const end = Date.now() + 60_000;
      while (Date.now() < end && !(ours().length === before.length && ours().every((p) => image(p) === 'svc-node:test-rolled' && ready(p) && !p.metadata.deletionTimestamp))) await new Promise((r) => setTimeout(r, 100));
      expect(ours().map((p) => [p.metadata.name, image(p), ready(p)]).sort()).toEqual(before.map((n) => [n, 'svc-node:test-rolled', true]));
      await eventReasons(api, ['RollingRestartCompleted']);
    } finally {
      unsubscribe();
      kubelet.stopDelayMs = 0;
    }
    expect(sawTerminating).toBe(true);
    expect(terminated).toHaveLength(before.length);
    expect(violations).toEqual([]);
  });

  it('deleting the SvcCluster: nothing waits for the operator; children are garbage-collected; PVCs are kept', async () => {
    await clusters.delete('prod');
    const end = Date.now() + 20_000;
    while (Date.now() < end && (listOf(api, 'svc.io', 'v1alpha1', 'svcclusters').length > 0 || listOf(api, 'apps', 'v1', 'statefulsets').length > 0)) await new Promise((r) => setTimeout(r, 100));
    expect(listOf(api, 'svc.io', 'v1alpha1', 'svcclusters')).toEqual([]);
    expect(listOf(api, 'apps', 'v1', 'statefulsets')).toEqual([]);
    expect(listOf(api, '', 'v1', 'services').filter((s: Obj) => s.metadata.name.startsWith('prod'))).toEqual([]);
    expect(listOf(api, '', 'v1', 'persistentvolumeclaims').filter((v) => v.metadata.name.includes('prod-')).length).toBeGreaterThan(0);
  });

  it('RBAC: every grant the chart gives the operator was used by these scenarios, and nothing was refused', () => {
    const user = serviceAccountUser(OPERATOR_NS, OPERATOR_SA);
    const used = api.rbac!.used.get(user.name) ?? new Set<string>();
    const granted = api.rbac!.grants(user, [NS, OPERATOR_NS]).map((g) => `${g.role}: ${g.verb} ${g.resource}${g.apiGroup ? `.${g.apiGroup}` : ''}`);
    expect(api.rbac!.denied).toEqual([]);
    expect(granted.filter((g) => !used.has(g))).toEqual([]);
    expect(granted.length).toBeGreaterThan(20);
  });
});
