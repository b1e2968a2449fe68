/**
 * The operator on a real Kubernetes (k3s): both images built from this
 * repository, the operator installed with its Helm chart, a SvcCluster
 * becomes Ready and serves through its Service, grows by a pool, and the
 * same manifests applied twice change nothing. Runs only where Docker exists.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CoreV1Api, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import type { StartedK3sContainer } from '@testcontainers/k3s';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readyForWait } from '../operator/src/reconcile/conditions.ts';
import type { SvcCluster } from '../operator/src/crd/svccluster.ts';
import { helm } from '../operator/test/tools.ts';
import { IMAGE_TAG, NODE_IMAGE, OPERATOR_IMAGE } from './images.ts';
import { importImage, k3sMissing, kubectlIn, REPO, startK3s } from './k3s.ts';

const missing = k3sMissing(true);
if (missing) console.log(`skipped: ${missing}; the operator k3s scenario did not run`);

const NS = 'storage';

describe.skipIf(missing !== undefined)('operator on k3s', () => {
  let k3s: StartedK3sContainer;
  let kc: KubeConfig;
  let kubeconfigFile: string;
  const get = async () => (await kc.makeApiClient(CustomObjectsApi).getNamespacedCustomObject({ group: 'svc.io', version: 'v1alpha1', namespace: NS, plural: 'svcclusters', name: 'prod' })) as SvcCluster;
  async function waitFor(what: string, pred: (c: SvcCluster) => boolean, ms: number): Promise<SvcCluster> {
    const end = Date.now() + ms;
    for (;;) {
      const c = await get().catch(() => undefined);
      if (c && pred(c)) return c;
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(c?.status)}`);
      await new Promise((r) => setTimeout(r, 2_000));
    }
  }
  const clusterYaml = (pools: string[]) => `apiVersion: svc.io/v1alpha1
kind: SvcCluster
metadata: {name: prod, namespace: ${NS}}
spec:
  image: ${NODE_IMAGE}
  imagePullPolicy: Never
  credentials: {secretName: prod-root}
  pools:
${pools.map((p) => `    - {name: ${p}, servers: 2, volumesPerServer: 2, volumeClaimTemplate: {resources: {requests: {storage: 1Gi}}}}`).join('\n')}
`;

  beforeAll(async () => {
    ({ k3s, kc, kubeconfigFile } = await startK3s());
    await importImage(k3s, NODE_IMAGE);
    await importImage(k3s, OPERATOR_IMAGE);
    await kubectlIn(k3s, ['apply', '--server-side', '-f', '/tmp/crd.yaml'], { name: 'crd.yaml', content: readFileSync(join(REPO, 'crds/svc.io_svcclusters.yaml'), 'utf8') });
    helm(['install', 'svc-operator', 'charts/svc-operator', '--kubeconfig', kubeconfigFile, '--namespace', 'svc-system', '--create-namespace', '--set', 'image.repository=svc-operator', '--set', `image.tag=${IMAGE_TAG}`, '--set', 'image.pullPolicy=Never', '--wait', '--timeout', '5m']);
    const core = kc.makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: NS } } });
    await core.createNamespacedSecret({ namespace: NS, body: { metadata: { name: 'prod-root' }, stringData: { accessKey: 'k3sadmin', secretKey: 'k3s-secret-key-0123' } } });
  }, 1_200_000);

  afterAll(async () => {
    await k3s?.stop();
  });

  it('a SvcCluster applied with kubectl becomes Ready and serves through its Service', async () => {
    await kubectlIn(k3s, ['apply', '--server-side', '-f', '/tmp/cluster.yaml'], { name: 'cluster.yaml', content: clusterYaml(['p0']) });
    const c = await waitFor('Ready', (x) => readyForWait(x.metadata.generation, x.status?.conditions), 600_000);
    expect(c.status!.pools!.map((p) => p.state)).toEqual(['Active']);
    const out = await kubectlIn(k3s, ['exec', '-n', NS, 'prod-p0-0', '--', 'node', '/opt/svc/node/bin/svc.js', 'ready', `http://prod.${NS}.svc.cluster.local:9000`]);
    expect(out).toContain('"ready":true');
  }, 900_000);

  it('applying the same manifest twice changes nothing (GitOps idempotence)', async () => {
    const before = await get();
    await kubectlIn(k3s, ['apply', '--server-side', '-f', '/tmp/cluster.yaml'], { name: 'cluster.yaml', content: clusterYaml(['p0']) });
    const after = await get();
    expect(after.metadata.generation).toBe(before.metadata.generation);
    const diff = await k3s.exec(['kubectl', 'diff', '--server-side', '-f', '/tmp/cluster.yaml']);
    expect(diff.exitCode).toBe(0);
  });

  it('adding a pool by re-applying the manifest grows the cluster (restart, rebalance) and it is Ready again', async () => {
    await kubectlIn(k3s, ['apply', '--server-side', '-f', '/tmp/cluster.yaml'], { name: 'cluster.yaml', content: clusterYaml(['p0', 'p1']) });
    const c = await waitFor('p1 Active and Ready', (x) => x.status?.pools?.find((p) => p.name === 'p1')?.state === 'Active' && readyForWait(x.metadata.generation, x.status?.conditions), 900_000);
    expect(c.status!.launchConfig!.applied!.volumes.split(' ')).toHaveLength(2);
  }, 1_000_000);
});
