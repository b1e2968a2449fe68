/**
 * A real `kubectl` against the in-process API server (TLS, RBAC on), a
 * cluster made by the real controller:
 *
 * - `kubectl get svcc` prints the CRD's printer columns (server-side
 *   printing), `-o wide` the priority-1 ones;
 * - with the operator stopped, `kubectl delete svccluster` completes (no
 *   finalizer waits for the operator), the StatefulSets and Services go with
 *   their owner, the PVCs stay.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Controller } from '../src/runtime/controller.ts';
import { FakeAdminApi } from './fake-admin/fake-admin.ts';
import type { FakeApiServer } from './fake-apiserver/server.ts';
import { Clusters, CREDENTIALS, installOperatorRbac, listOf, NS, startApiWithCrd, testController } from './harness.ts';
import { FixedKubelet, StatefulSetSimulator } from './sim/statefulset-sim.ts';
import { kubectlAsync } from './tools.ts';

describe('kubectl against the in-process API server', () => {
  const base = mkdtempSync(join(tmpdir(), 'svc-kubectl-'));
  let api: FakeApiServer;
  let sim: StatefulSetSimulator;
  let admin: FakeAdminApi;
  let controller: Controller;
  let kubeconfig: string;
  const kubectl = (args: string[]) => kubectlAsync([...args, '--kubeconfig', kubeconfig, '--cache-dir', join(base, 'cache')]);

  beforeAll(async () => {
    api = await startApiWithCrd({ tls: true });
    const token = installOperatorRbac(api);
    kubeconfig = join(base, 'kubeconfig');
    writeFileSync(kubeconfig, api.kubeConfigYaml());
    admin = await FakeAdminApi.start({ pools: [], credentials: CREDENTIALS, bytesPerSecond: 10_000 });
    const kubelet = new FixedKubelet();
    kubelet.readiness = (pod) => {
      const vols = (pod['spec'] as { containers: { env: { name: string; value: string }[] }[] }).containers[0]!.env.find((e) => e.name === 'SVC_VOLUMES')!.value;
      if (admin.pools.join(' ') !== vols) admin.setPools(vols.split(' '));
      return true;
    };
    sim = new StatefulSetSimulator(api, kubelet, { probeMs: 50 });
    controller = testController(api, token, admin, { log: pino({ level: 'silent' }) });
    await controller.start();
    const clusters = new Clusters(api);
    await clusters.create('prod', { image: 'svc-node:test', credentials: { secretName: 'prod-root' }, pools: [{ name: 'p0', servers: 2, volumesPerServer: 2, volumeClaimTemplate: { resources: { requests: { storage: '1Gi' } } } }] });
    await clusters.waitReady('prod', 30_000);
  }, 120_000);

  afterAll(async () => {
    controller?.stop();
    await sim?.stop();
    await admin?.close();
    await api?.close();
    rmSync(base, { recursive: true, force: true });
  });

  it('kubectl get svcc shows the printer columns; -o wide adds the operation', async () => {
    const r = await kubectl(['get', 'svcc', '-n', NS]);
    expect(r.code, r.out).toBe(0);
    const [header, row] = r.out.trim().split('\n');
    expect(header!.split(/\s{2,}/)).toEqual(['NAME', 'PHASE', 'READY', 'POOLS', 'AGE']);
    expect(row!.split(/\s{2,}/).slice(0, 4)).toEqual(['prod', 'Ready', 'True', '1/1']);
    const wide = await kubectl(['get', 'svccluster', 'prod', '-n', NS, '-o', 'wide']);
    expect(wide.code, wide.out).toBe(0);
    expect(wide.out.split('\n')[0]).toMatch(/OPERATION/);
  });

  it('with the operator stopped, kubectl delete svccluster completes; workloads go with it, PVCs stay', async () => {
    controller.stop();
    const pvcs = listOf(api, '', 'v1', 'persistentvolumeclaims').map((v) => v.metadata.name);
    expect(pvcs).toHaveLength(4);
    const r = await kubectl(['delete', 'svccluster', 'prod', '-n', NS, '--timeout=30s']);
    expect(r.code, r.out).toBe(0);
    expect(r.out).toContain('svccluster.svc.io "prod" deleted');
    expect(listOf(api, 'svc.io', 'v1alpha1', 'svcclusters')).toEqual([]);
    const end = Date.now() + 10_000;
    while (Date.now() < end && listOf(api, 'apps', 'v1', 'statefulsets').length > 0) await new Promise((x) => setTimeout(x, 100));
    expect(listOf(api, 'apps', 'v1', 'statefulsets')).toEqual([]);
    expect(listOf(api, '', 'v1', 'services')).toEqual([]);
    expect(listOf(api, '', 'v1', 'persistentvolumeclaims').map((v) => v.metadata.name)).toEqual(pvcs);
  });
});
