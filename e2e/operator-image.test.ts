/**
 * The operator image (svc-operator:<tag>, built by e2e/build-images.sh) run
 * as its chart's Deployment renders the pod (environment, uid 10001,
 * read-only root filesystem, no capabilities) against the in-process
 * Kubernetes API server (HTTPS, RBAC from the chart's rendered Roles, the
 * ServiceAccount's token in a kubeconfig): it syncs its caches and is Ready,
 * takes the Lease (MicroTime the strict server accepts), and reconciles a
 * SvcCluster into its StatefulSet, Services and per-pool budget.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StartedTestContainer } from 'testcontainers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import type { FakeApiServer } from '../operator/test/fake-apiserver/server.ts';
import { Clusters, installOperatorRbac, listOf, OPERATOR_NS, OPERATOR_SA, startApiWithCrd } from '../operator/test/harness.ts';
import { FixedKubelet, StatefulSetSimulator } from '../operator/test/sim/statefulset-sim.ts';
import { helm } from '../operator/test/tools.ts';
import { IMAGE_TAG, imagesMissing, OPERATOR_IMAGE, podSubnet, TestPodContainer } from './images.ts';

const missing = imagesMissing();
if (missing) console.log(`skipped: ${missing}; the operator image test did not run`);

interface DeploymentDoc {
  kind: string;
  spec: {
    template: {
      spec: {
        securityContext?: { runAsUser?: number; runAsGroup?: number };
        containers: {
          image: string;
          env: { name: string; value?: string; valueFrom?: { fieldRef?: { fieldPath: string } } }[];
          securityContext?: { readOnlyRootFilesystem?: boolean; allowPrivilegeEscalation?: boolean; capabilities?: { drop?: string[] } };
        }[];
      };
    };
  };
}

describe.skipIf(missing !== undefined)('operator image against the in-process API server', () => {
  const base = mkdtempSync(join(tmpdir(), 'svc-operator-image-'));
  chmodSync(base, 0o755); // the container's uid 10001 reads the kubeconfig
  const ip = podSubnet()(0);
  const podName = 'ops-svc-operator-7d9f8c6b5-x2k4q';
  let api: FakeApiServer;
  let sim: StatefulSetSimulator;
  let container: StartedTestContainer;
  let logs = '';

  beforeAll(async () => {
    api = await startApiWithCrd({ tls: true });
    const token = installOperatorRbac(api);
    sim = new StatefulSetSimulator(api, new FixedKubelet(), { probeMs: 100 });
    writeFileSync(join(base, 'kubeconfig'), api.kubeConfigYaml(token), { mode: 0o644 });
    // The pod as the chart renders it (the image built here).
    const dep = parseAllDocuments(helm(['template', 'ops', 'charts/svc-operator', '--namespace', OPERATOR_NS, '--set', 'image.repository=svc-operator', '--set', `image.tag=${IMAGE_TAG}`]).out)
      .map((d) => d.toJS() as DeploymentDoc)
      .find((d) => d?.kind === 'Deployment')!;
    const pod = dep.spec.template.spec;
    const c = pod.containers[0]!;
    expect(c.image).toBe(OPERATOR_IMAGE);
    const env: Record<string, string> = { KUBECONFIG: '/etc/svc-operator/kubeconfig', SVC_OPERATOR_PROBE_ADDRESS: `${ip}:8081`, SVC_OPERATOR_POLL_SECONDS: '1' };
    for (const e of c.env) {
      if (e.value !== undefined) env[e.name] = e.value;
      if (e.valueFrom?.fieldRef?.fieldPath === 'metadata.namespace') env[e.name] = OPERATOR_NS;
      if (e.valueFrom?.fieldRef?.fieldPath === 'metadata.name') env[e.name] = podName;
    }
    let run = new TestPodContainer(c.image)
      .withName(`svc-e2e-operator-${process.pid}`)
      .withNetworkMode('host')
      .withEnvironment(env)
      .withBindMounts([{ source: base, target: '/etc/svc-operator', mode: 'ro' }])
      .withUser(`${pod.securityContext?.runAsUser}:${pod.securityContext?.runAsGroup}`)
      .withLogConsumer((stream) => stream.on('data', (d: Buffer | string) => (logs += String(d))))
      .withStartupTimeout(60_000);
    if (c.securityContext?.readOnlyRootFilesystem) run = run.withReadOnlyRootFilesystem();
    if (c.securityContext?.allowPrivilegeEscalation === false) run = run.withSecurityOpt('no-new-privileges');
    if (c.securityContext?.capabilities?.drop?.includes('ALL')) run = run.withDroppedCapabilities('ALL');
    const { Wait } = await import('testcontainers');
    container = await run
      .withWaitStrategy(Wait.forLogMessage(/"event":"caches_synced"/))
      .start()
      .catch((err: Error) => {
        throw new Error(`${err.message}\n${logs.slice(-3000)}`);
      });
  }, 180_000);

  afterAll(async () => {
    await container?.stop();
    await sim?.stop();
    await api?.close();
    rmSync(base, { recursive: true, force: true });
  });

  it('runs as uid 10001 on a read-only root filesystem, is Ready once its caches synced, leads and holds the Lease with MicroTime', async () => {
    const who = await container.exec(['node', '-e', "process.stdout.write(String(process.getuid())); require('fs').writeFileSync('/opt/svc/x', 'x')"]);
    // stdout and stderr separately: their order in the combined output is not fixed (the uid on
    // stdout, the refused write's error on stderr)
    expect(who.stdout, who.output).toBe('10001');
    expect(who.stderr).toContain('EROFS');
    const end = Date.now() + 30_000;
    const probe = (path: string) => fetch(`http://${ip}:8081${path}`).then((r) => r.status, () => 0);
    while (Date.now() < end && (await probe('/leaderz')) !== 200) await new Promise((r) => setTimeout(r, 200));
    expect(await probe('/readyz')).toBe(200);
    expect(await probe('/leaderz')).toBe(200);
    const lease = api.store.get(api.store.find('coordination.k8s.io', 'v1', 'leases')!, OPERATOR_NS, 'svc-operator')['spec'] as { holderIdentity: string; renewTime: string };
    expect(lease.holderIdentity).toMatch(new RegExp(`^${podName}_`));
    expect(lease.renewTime).toMatch(/\.\d{6}Z$/);
    expect(logs).not.toContain('lease_error');
  }, 60_000);

  it('reconciles a SvcCluster (as the chart\'s ServiceAccount, RBAC enforced) into its StatefulSet, Services and per-pool budget', async () => {
    await new Clusters(api).create('prod', { image: 'svc-node:dev', credentials: { secretName: 'prod-root' }, pools: [{ name: 'p0', servers: 2, volumesPerServer: 2, volumeClaimTemplate: { resources: { requests: { storage: '1Gi' } } } }] });
    const end = Date.now() + 30_000;
    const names = () => [...listOf(api, 'apps', 'v1', 'statefulsets'), ...listOf(api, '', 'v1', 'services'), ...listOf(api, 'policy', 'v1', 'poddisruptionbudgets')].map((o) => `${o.kind}/${o.metadata.name}`).sort();
    while (Date.now() < end && names().length < 5) await new Promise((r) => setTimeout(r, 200));
    expect(names()).toEqual(['PodDisruptionBudget/prod-p0', 'Service/prod', 'Service/prod-console', 'Service/prod-hl', 'StatefulSet/prod-p0']);
    expect(api.rbac!.used.get(`system:serviceaccount:${OPERATOR_NS}:${OPERATOR_SA}`)?.size).toBeGreaterThan(5);
    expect(api.rbac!.denied).toEqual([]);
  }, 60_000);
});
