/**
 * The operator chart installed and upgraded with a real `helm` against the
 * in-process API server, RBAC enforced, its Deployment rolled out by the
 * Deployment simulator, each operator pod a real `svc-operator` process:
 *
 * - install chart version N and upgrade to N+1 (new appVersion, so a new pod
 *   template) with 1 and with 2 replicas: `helm upgrade --wait` succeeds,
 *   every operator pod is Ready, exactly one process leads and holds the
 *   Lease, and the leader reconciles a SvcCluster;
 * - the CRD comes from the chart's crds/: created by the first install,
 *   never changed by an upgrade (N+1 carries a different one) nor by a
 *   second release, kept by `helm uninstall`; `kubectl apply --server-side
 *   -f crds/` is how it is upgraded.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import type { FakeApiServer } from './fake-apiserver/server.ts';
import type { Obj } from './fake-apiserver/store.ts';
import { Clusters, listOf, OPERATOR_NS, startApiWithCrd } from './harness.ts';
import { DeploymentSimulator } from './sim/deployment-sim.ts';
import { OperatorKubelet } from './sim/operator-kubelet.ts';
import { REPO } from './svc-server.ts';
import { helmAsync, kubectlAsync } from './tools.ts';

const base = mkdtempSync(join(tmpdir(), 'svc-helm-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

/** A copy of the operator chart as version `version` (appVersion too); `crdLabel` marks its CRD. */
function chartVersion(version: string, crdLabel?: string): string {
  const dir = join(base, `svc-operator-${version}`);
  cpSync(join(REPO, 'charts/svc-operator'), dir, { recursive: true });
  const chart = parse(readFileSync(join(dir, 'Chart.yaml'), 'utf8')) as Record<string, unknown>;
  writeFileSync(join(dir, 'Chart.yaml'), stringify({ ...chart, version, appVersion: version }));
  if (crdLabel) {
    const file = join(dir, 'crds/svc.io_svcclusters.yaml');
    const crd = parse(readFileSync(file, 'utf8')) as { metadata: { labels: Record<string, string> } };
    crd.metadata.labels['svc.io/chart-version'] = crdLabel;
    // A changed field (not only a new one), as a real schema change is.
    crd.metadata.labels['app.kubernetes.io/part-of'] = `svc-${crdLabel}`;
    writeFileSync(file, stringify(crd, { lineWidth: 0 }));
  }
  return dir;
}

interface Env {
  api: FakeApiServer;
  kubelet: OperatorKubelet;
  sim: DeploymentSimulator;
  kubeconfig: string;
  close(): Promise<void>;
}

async function environment(name: string): Promise<Env> {
  const api = await startApiWithCrd({ crd: false, tls: true });
  api.enableRbac();
  const dir = join(base, name);
  const kubelet = new OperatorKubelet(api, dir);
  kubelet.extraEnv = { SVC_OPERATOR_POLL_SECONDS: '1' };
  const sim = new DeploymentSimulator(api, kubelet, { probeMs: 200 });
  const kubeconfig = join(base, `${name}.kubeconfig`);
  writeFileSync(kubeconfig, api.kubeConfigYaml());
  return {
    api,
    kubelet,
    sim,
    kubeconfig,
    async close() {
      await sim.stop();
      await kubelet.stopAll();
      await api.close();
    },
  };
}

const helmIn = (env: Env, args: string[]) => helmAsync([...args, '--kubeconfig', env.kubeconfig], 240_000);

/** The operator pods the Deployment runs now, their readiness, and which processes lead. */
async function operatorPods(env: Env): Promise<{ name: string; ready: boolean; leading: boolean }[]> {
  const pods = listOf(env.api, '', 'v1', 'pods', OPERATOR_NS).filter((p) => p.metadata.labels?.['app.kubernetes.io/name'] === 'svc-operator');
  return Promise.all(
    pods.map(async (p: Obj) => ({
      name: p.metadata.name,
      ready: (p['status'] as { conditions?: { type: string; status: string }[] })?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true,
      leading: await env.kubelet.leading(p.metadata.name),
    })),
  );
}

/**
 * Bounded wait until exactly one operator process leads (a new leader takes an expired lease within
 * its duration) and no pod of `gone` is left: `helm --wait` returns once the new pods are ready,
 * while the old ones may still be terminating (their object goes when the process exited), as on
 * Kubernetes.
 */
async function oneLeader(env: Env, gone: readonly string[] = []): Promise<{ name: string; ready: boolean; leading: boolean }[]> {
  const end = Date.now() + 60_000;
  for (;;) {
    const pods = await operatorPods(env);
    if (pods.filter((p) => p.leading).length === 1 && !pods.some((p) => gone.includes(p.name))) return pods;
    if (Date.now() > end) throw new Error(`no single leader, or old pods still there (${gone.join(', ')}): ${JSON.stringify(pods)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

function lease(env: Env): { holderIdentity?: string; renewTime?: string } {
  return (env.api.store.get(env.api.store.find('coordination.k8s.io', 'v1', 'leases')!, OPERATOR_NS, 'svc-operator')['spec'] ?? {}) as { holderIdentity?: string; renewTime?: string };
}

const crdOf = (env: Env) => env.api.store.get(env.api.store.find('apiextensions.k8s.io', 'v1', 'customresourcedefinitions')!, undefined, 'svcclusters.svc.io');

describe.each([1, 2])('operator chart: helm install N, helm upgrade --wait to N+1 with %i replica(s)', (replicas) => {
  let env: Env;
  afterAll(async () => {
    await env?.close();
  });

  it('install: every operator pod Ready, exactly one leader holding the Lease (MicroTime), the CRD created from crds/', async () => {
    env = await environment(`r${replicas}`);
    const r = await helmIn(env, ['install', 'ops', chartVersion('0.1.0'), '--namespace', OPERATOR_NS, '--create-namespace', '--set', `replicaCount=${replicas}`, '--wait', '--timeout', '3m']);
    expect(r.code, r.out).toBe(0);
    const pods = await oneLeader(env);
    expect(pods).toHaveLength(replicas);
    expect(pods.every((p) => p.ready)).toBe(true);
    const leader = pods.find((p) => p.leading)!;
    expect(lease(env).holderIdentity).toMatch(new RegExp(`^${leader.name}_`));
    expect(lease(env).renewTime).toMatch(/\.\d{6}Z$/);
    expect(crdOf(env).metadata.annotations?.['svc.io/schema-revision']).toBeTruthy();
  }, 300_000);

  it('upgrade to N+1: the rollout completes (helm --wait), every pod Ready on the new template, exactly one leader, and it reconciles', async () => {
    const before = (await operatorPods(env)).map((p) => p.name);
    const r = await helmIn(env, ['upgrade', 'ops', chartVersion('0.1.1', 'n-plus-1'), '--namespace', OPERATOR_NS, '--set', `replicaCount=${replicas}`, '--wait', '--timeout', '3m']);
    expect(r.code, r.out).toBe(0);
    const pods = await oneLeader(env, before);
    expect(pods).toHaveLength(replicas);
    expect(pods.every((p) => p.ready)).toBe(true);
    expect(pods.map((p) => p.name).filter((n) => before.includes(n))).toEqual([]);
    const dep = env.api.store.get(env.api.store.find('apps', 'v1', 'deployments')!, OPERATOR_NS, 'ops-svc-operator');
    const status = dep['status'] as { updatedReplicas: number; readyReplicas: number; conditions: { type: string; reason: string }[] };
    expect(status).toMatchObject({ updatedReplicas: replicas, readyReplicas: replicas });
    expect(status.conditions.find((c) => c.type === 'Progressing')?.reason).toBe('NewReplicaSetAvailable');
    expect(lease(env).holderIdentity).toMatch(new RegExp(`^${pods.find((p) => p.leading)!.name}_`));
    // The upgrade did not touch the CRD (Helm never upgrades crds/).
    expect(crdOf(env).metadata.labels?.['svc.io/chart-version']).toBeUndefined();
    // The leader acts: a SvcCluster gets its StatefulSet.
    await new Clusters(env.api).create('prod', { image: 'svc-node:test', credentials: { secretName: 'prod-root' }, pools: [{ name: 'p0', servers: 2, volumesPerServer: 2, volumeClaimTemplate: { resources: { requests: { storage: '1Gi' } } } }] });
    const end = Date.now() + 30_000;
    while (Date.now() < end && listOf(env.api, 'apps', 'v1', 'statefulsets').length === 0) await new Promise((x) => setTimeout(x, 200));
    expect(listOf(env.api, 'apps', 'v1', 'statefulsets').map((s) => s.metadata.name)).toEqual(['prod-p0']);
  }, 300_000);

  it.runIf(replicas === 1)('a broken upgrade (the new pod never Ready) fails at its progress deadline and the old pod keeps leading', async () => {
    const before = await oneLeader(env);
    // An invalid setting: the new operator exits at start (CrashLoopBackOff), never Ready.
    const r = await helmIn(env, ['upgrade', 'ops', chartVersion('0.1.9'), '--namespace', OPERATOR_NS, '--set', 'leaderElection=maybe', '--set', 'progressDeadlineSeconds=5', '--wait', '--timeout', '2m']);
    expect(r.code).not.toBe(0);
    const dep = env.api.store.get(env.api.store.find('apps', 'v1', 'deployments')!, OPERATOR_NS, 'ops-svc-operator');
    expect((dep['status'] as { conditions: { type: string; status: string; reason: string }[] }).conditions.find((c) => c.type === 'Progressing')).toMatchObject({ status: 'False', reason: 'ProgressDeadlineExceeded' });
    const after = await oneLeader(env);
    expect(after.find((p) => p.leading)!.name).toBe(before.find((p) => p.leading)!.name);
    // Back to a good release.
    const broken = (await operatorPods(env)).map((p) => p.name);
    const fixed = await helmIn(env, ['upgrade', 'ops', chartVersion('0.1.10'), '--namespace', OPERATOR_NS, '--wait', '--timeout', '3m']);
    expect(fixed.code, fixed.out).toBe(0);
    expect((await oneLeader(env, broken)).every((p) => p.ready)).toBe(true);
  }, 400_000);

  it.runIf(replicas === 1)('CRDs: another release with --skip-crds leaves the CRD alone, helm uninstall keeps it (and the clusters), kubectl apply --server-side --force-conflicts -f crds/ upgrades it', async () => {
    const second = await helmIn(env, ['install', 'ops2', chartVersion('0.1.2', 'second-release'), '--namespace', 'other', '--create-namespace', '--skip-crds', '--set', 'watchNamespace=other', '--set', 'replicaCount=0']);
    expect(second.code, second.out).toBe(0);
    expect(crdOf(env).metadata.labels?.['svc.io/chart-version']).toBeUndefined();
    const un = await helmIn(env, ['uninstall', 'ops', '--namespace', OPERATOR_NS, '--wait']);
    expect(un.code, un.out).toBe(0);
    expect(crdOf(env).metadata.name).toBe('svcclusters.svc.io');
    expect(listOf(env.api, 'svc.io', 'v1alpha1', 'svcclusters').map((c) => c.metadata.name)).toEqual(['prod']);
    const kubectl = (args: string[]) => kubectlAsync([...args, '--kubeconfig', env.kubeconfig, '--cache-dir', join(base, 'kube-cache-r1')]);
    const crds = join(chartVersion('0.1.3', 'applied'), 'crds');
    // Helm owns the CRD's fields: a plain server-side apply conflicts with it, as on a real API server.
    const plain = await kubectl(['apply', '--server-side', '-f', crds]);
    expect(plain.code).not.toBe(0);
    expect(plain.out).toMatch(/conflict/i);
    const forced = await kubectl(['apply', '--server-side', '--force-conflicts', '-f', crds]);
    expect(forced.code, forced.out).toBe(0);
    expect(crdOf(env).metadata.labels?.['svc.io/chart-version']).toBe('applied');
  }, 300_000);
});
