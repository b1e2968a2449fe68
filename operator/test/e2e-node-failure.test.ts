/**
 * One Kubernetes node fails: with the operator's default spread (pods of a
 * pool over hostnames, soft anti-affinity), the StatefulSet simulator's
 * scheduler places each pool's pods on different nodes; every pod on one
 * node is then killed at once and every pool still serves every object.
 * Real `svc` processes (ProcessKubelet), the real controller in process.
 *
 * And the control: a cluster that opts out of the spread (empty affinity and
 * topologySpreadConstraints) may be packed onto one node by the scheduler,
 * so the same failure would take its pools offline.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminClient } from '../src/admin/client.ts';
import { Kube } from '../src/kube/kube.ts';
import { Controller } from '../src/runtime/controller.ts';
import type { FakeApiServer } from './fake-apiserver/server.ts';
import type { Obj } from './fake-apiserver/store.ts';
import { Clusters, CREDENTIALS, listOf, startApiWithCrd } from './harness.ts';
import { ProcessKubelet } from './sim/process-kubelet.ts';
import { FixedKubelet, StatefulSetSimulator } from './sim/statefulset-sim.ts';
import { keepAliveHandler } from '../../node/test/helpers/s3-client.ts';

const canUnshare = process.getuid?.() === 0;
if (!canUnshare) console.log('skipped: the node-failure end-to-end test needs root for mount namespaces');

const pool = (name: string, extra: Record<string, unknown> = {}) => ({ name, servers: 2, volumesPerServer: 2, volumeClaimTemplate: { resources: { requests: { storage: '1Gi' } } }, ...extra });
const nodeOf = (p: Obj) => (p['spec'] as { nodeName?: string }).nodeName;

describe.skipIf(!canUnshare)('one Kubernetes node fails (real svc pods)', () => {
  let api: FakeApiServer;
  let base: string;
  let kubelet: ProcessKubelet;
  let sim: StatefulSetSimulator;
  let controller: Controller;
  const objects = new Map<string, string>();
  const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
  const s3 = (pod: string) =>
    new S3Client({ requestHandler: keepAliveHandler(), endpoint: kubelet.url(pod), region: 'us-east-1', forcePathStyle: true, maxAttempts: 1, credentials: { accessKeyId: CREDENTIALS.accessKey, secretAccessKey: CREDENTIALS.secretKey } });

  beforeAll(async () => {
    if (!existsSync('/data')) mkdirSync('/data');
    base = await mkdtemp(join(tmpdir(), 'svc-node-failure-'));
    api = await startApiWithCrd();
    kubelet = new ProcessKubelet(api, base);
    sim = new StatefulSetSimulator(api, kubelet, { probeMs: 300 });
    sim.nodes = ['node-a', 'node-b'];
    controller = new Controller({
      kube: new Kube(api.kubeConfig()),
      log: pino({ level: 'silent' }),
      clusterDomain: 'cluster.local',
      pollMs: 500,
      idleMs: 30_000,
      stalledMs: 1_000,
      concurrency: 1,
      // The pods' DNS names, as cluster DNS would resolve them, for the operator in this process.
      adminFactory: (endpoints, creds) => new AdminClient({ endpoints: endpoints.map((e) => kubelet.url(new URL(e).hostname.split('.')[0]!)), credentials: creds }),
    });
    await controller.start();
  }, 60_000);

  afterAll(async () => {
    controller?.stop();
    await sim?.stop();
    await kubelet?.stopAll();
    await api?.close();
    if (base) await rm(base, { recursive: true, force: true });
  }, 60_000);

  it('with the default spread, each pool has one pod on each node', async () => {
    await new Clusters(api).create('prod', { image: 'svc-node:e2e', credentials: { secretName: 'prod-root' }, pools: [pool('p0'), pool('p1')], startupReadinessMaxWaitSeconds: 60 });
    await new Clusters(api).waitReady('prod', 180_000);
    const pods = listOf(api, '', 'v1', 'pods');
    for (const p of ['p0', 'p1']) {
      const nodes = pods.filter((x) => x.metadata.labels?.['svc.io/pool'] === p).map(nodeOf);
      expect(nodes.sort(), p).toEqual(['node-a', 'node-b']);
    }
  }, 240_000);

  it('node-a fails (both of its pods killed at once): every pool still serves every object', async () => {
    await s3('prod-p0-0').send(new CreateBucketCommand({ Bucket: 'nodes' }));
    for (let i = 0; i < 24; i++) {
      const body = randomBytes(16 * 1024 + i * 531);
      await s3(`prod-p${i % 2}-${i % 2}`).send(new PutObjectCommand({ Bucket: 'nodes', Key: `o${i}`, Body: body }));
      objects.set(`o${i}`, sha(body));
    }
    // Both pools hold objects (new objects go by free space).
    const held = (p: string) => readdirSync(join(base, 'pvc', `data-0-prod-${p}-0`, 'nodes')).length;
    expect(held('p0')).toBeGreaterThan(0);
    expect(held('p1')).toBeGreaterThan(0);
    const killed = await kubelet.killNode('node-a');
    expect(killed.sort()).toHaveLength(2);
    const survivors = listOf(api, '', 'v1', 'pods').filter((p) => nodeOf(p) === 'node-b').map((p) => p.metadata.name);
    expect(new Set(survivors.map((n) => n.split('-')[1]))).toEqual(new Set(['p0', 'p1']));
    for (const pod of survivors) {
      const client = s3(pod);
      for (const [key, digest] of objects) {
        const r = await client.send(new GetObjectCommand({ Bucket: 'nodes', Key: key }));
        expect(sha(await r.Body!.transformToByteArray()), `${key} through ${pod}`).toBe(digest);
      }
    }
  }, 240_000);
});

describe('the control: without the spread the scheduler may pack a pool onto one node', () => {
  it('opting out (empty affinity and topologySpreadConstraints) puts every pod of a pool on one node', async () => {
    const api = await startApiWithCrd();
    const sim = new StatefulSetSimulator(api, new FixedKubelet(), { probeMs: 50 });
    sim.nodes = ['node-a', 'node-b'];
    const controller = new Controller({ kube: new Kube(api.kubeConfig()), log: pino({ level: 'silent' }), clusterDomain: 'cluster.local', pollMs: 100, idleMs: 30_000, stalledMs: 500, concurrency: 1 });
    try {
      await controller.start();
      await new Clusters(api).create('packed', { image: 'svc-node:e2e', credentials: { secretName: 'prod-root' }, pools: [pool('p0', { affinity: {}, topologySpreadConstraints: [] })] });
      const end = Date.now() + 20_000;
      while (Date.now() < end && listOf(api, '', 'v1', 'pods').length < 2) await new Promise((r) => setTimeout(r, 50));
      expect(listOf(api, '', 'v1', 'pods').map(nodeOf)).toEqual(['node-a', 'node-a']);
    } finally {
      controller.stop();
      await sim.stop();
      await api.close();
    }
  }, 60_000);
});
