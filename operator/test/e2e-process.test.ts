/**
 * Process-level end to end, no Kubernetes needed: the real operator process
 * (`operator/bin/svc-operator.js`, real client-node, Lease leader election)
 * against the in-process API server, with the StatefulSet simulator running
 * real `svc` processes for pods on their own loopback addresses. Objects go
 * in and out through S3 at every step.
 *
 *   one pool → serving cluster → Ready (kubectl wait semantics)
 *   add a pool by editing the resource → coordinated restart → rebalance
 *   decommission: true on the first pool → drain; mid-drain the credentials
 *   Secret is edited (a new root key reaches each pod's volume at its own
 *   moment, as kubelets sync) and the operator is killed and restarted →
 *   resumes) → restarted without it → cleared → its StatefulSet gone
 *
 * The steps that drive the admin API run against the server's real pool,
 * decommission and rebalance routes and workers. Needs root (mount
 * namespaces), like the node's multi-process cluster tests.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { getCondition } from '../src/reconcile/conditions.ts';
import type { FakeApiServer } from './fake-apiserver/server.ts';
import { Clusters, CREDENTIALS, listOf, NS, startApiWithCrd } from './harness.ts';
import { type OperatorProcess, operatorLog as readOperatorLog, startOperatorProcess } from './operator-process.ts';
import { ProcessKubelet } from './sim/process-kubelet.ts';
import { StatefulSetSimulator } from './sim/statefulset-sim.ts';
import { keepAliveHandler } from '../../node/test/helpers/s3-client.ts';

const canUnshare = process.getuid?.() === 0;
if (!canUnshare) console.log('skipped: operator process end-to-end needs root for mount namespaces');

const pool = (name: string, extra: Record<string, unknown> = {}) => ({ name, servers: 2, volumesPerServer: 2, volumeClaimTemplate: { resources: { requests: { storage: '1Gi' } } }, ...extra });

describe.skipIf(!canUnshare)('operator process end to end (real svc pods)', () => {
  let api: FakeApiServer;
  let base: string;
  let kubelet: ProcessKubelet;
  let sim: StatefulSetSimulator;
  let clusters: Clusters;
  let operator: OperatorProcess | undefined;
  const objects = new Map<string, string>();

  const startOperator = async () => {
    operator = await startOperatorProcess(api, kubelet, base);
  };
  const killOperator = async () => {
    await operator?.kill();
  };
  const operatorLog = () => readOperatorLog(base);

  /** The root key S3 clients use (the credentials Secret's, as it changes). */
  let keys: { accessKey: string; secretKey: string } = CREDENTIALS;
  const s3 = (podName: string, k = keys) =>
    new S3Client({ requestHandler: keepAliveHandler(), endpoint: kubelet.url(podName), region: 'us-east-1', forcePathStyle: true, maxAttempts: 1, credentials: { accessKeyId: k.accessKey, secretAccessKey: k.secretKey } });
  const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
  async function writeObjects(pod: string, prefix: string, n: number): Promise<void> {
    const client = s3(pod);
    for (let i = 0; i < n; i++) {
      const body = randomBytes(32 * 1024 + i * 997);
      await client.send(new PutObjectCommand({ Bucket: 'e2e', Key: `${prefix}/${i}`, Body: body }));
      objects.set(`${prefix}/${i}`, sha(body));
    }
  }
  async function readAll(pod: string): Promise<void> {
    const client = s3(pod);
    for (const [key, digest] of objects) {
      const r = await client.send(new GetObjectCommand({ Bucket: 'e2e', Key: key }));
      expect(sha(await r.Body!.transformToByteArray()), key).toBe(digest);
    }
  }
  const readyPods = () =>
    listOf(api, '', 'v1', 'pods')
      .filter((p) => (p['status'] as { conditions?: { type: string; status: string }[] })?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'))
      .map((p) => p.metadata.name);
  async function waitPodsReady(names: string[], timeoutMs = 120_000): Promise<void> {
    const end = Date.now() + timeoutMs;
    while (!names.every((n) => readyPods().includes(n))) {
      if (Date.now() > end) {
        const pods = listOf(api, '', 'v1', 'pods').map((p) => `${p.metadata.name}: ${JSON.stringify(p['status'])}`);
        const notReady = names.filter((n) => !readyPods().includes(n));
        const described = (await Promise.all(notReady.map((n) => kubelet.describe(n)))).join('\n');
        throw new Error(`pods not ready: ${notReady.join(', ')}\n${pods.join('\n')}\n${described}\n${(await operatorLog()).slice(-1500)}`);
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  beforeAll(async () => {
    // The pods' volume mounts (/data/d0, ...) live under /data inside each pod's
    // private mount namespace; the folder must exist to mount over it.
    if (!existsSync('/data')) mkdirSync('/data');
    base = await mkdtemp(join(tmpdir(), 'svc-operator-e2e-'));
    api = await startApiWithCrd();
    kubelet = new ProcessKubelet(api, base);
    sim = new StatefulSetSimulator(api, kubelet, { probeMs: 300 });
    clusters = new Clusters(api);
    await startOperator();
  }, 120_000);

  // A failed step prints what every pod's container did (exits, restarts, the log's last lines):
  // the pods' folder is removed with the test's temp dir.
  beforeEach((ctx) => {
    ctx.onTestFailed(async () => {
      for (const n of kubelet.running()) console.error(await kubelet.describe(n));
    });
  });

  afterAll(async () => {
    await killOperator();
    await sim?.stop();
    await kubelet?.stopAll();
    await api?.close();
    if (base) await rm(base, { recursive: true, force: true });
  }, 60_000);

  it('one pool: the operator renders StatefulSets whose pods run real svc processes that form one cluster and serve S3', async () => {
    // The drain moves one object at a time, so it is still running while the key rotates (step 4):
    // on tmpfs volumes a parallel drain of the step's objects can finish within the kubelets'
    // sync delay, and the pods are then restarted for the pool's removal, not for the key.
    await clusters.create('prod', {
      image: 'svc-node:e2e',
      credentials: { secretName: 'prod-root' },
      pools: [pool('p0')],
      startupReadinessMaxWaitSeconds: 60,
      env: [
        { name: 'SVC_DECOMMISSION_ENTRY_CONCURRENCY', value: '1' },
        { name: 'SVC_DECOMMISSION_BUCKET_CONCURRENCY', value: '1' },
      ],
    });
    await waitPodsReady(['prod-p0-0', 'prod-p0-1']);
    await s3('prod-p0-0').send(new CreateBucketCommand({ Bucket: 'e2e' }));
    await writeObjects('prod-p0-0', 'step1', 8);
    await readAll('prod-p0-1');
  }, 180_000);

  it('the SvcCluster reports Ready for its generation (kubectl wait --for=condition=Ready)', async () => {
    const c = await clusters.waitReady('prod', 120_000);
    expect(c.status!.pools!.map((p) => [p.name, p.state, p.index])).toEqual([['p0', 'Active', 0]]);
    expect(getCondition(c.status!.conditions, 'Ready')!.observedGeneration).toBe(c.metadata.generation);
  }, 150_000);

  it('adding a pool by editing the resource: coordinated restart of every pod, topology verified, every object reads back', async () => {
    const before = new Map(listOf(api, '', 'v1', 'pods').map((p) => [p.metadata.name, p.metadata.uid]));
    await clusters.editSpec('prod', (s) => ({ ...s, pools: [...s.pools, pool('p1')] }));
    const c = await clusters.waitFor('prod', 'p1 Active and the operation done', (x) => x.status?.pools?.find((p) => p.name === 'p1')?.state === 'Active' && !x.status.operation, 300_000);
    expect(c.status!.launchConfig!.applied!.volumes.split(' ')).toHaveLength(2);
    expect(c.status!.pools!.map((p) => [p.name, p.index])).toEqual([['p0', 0], ['p1', 1]]);
    // p0's pods were restarted together onto the two-pool arguments.
    const pods = listOf(api, '', 'v1', 'pods');
    for (const name of ['prod-p0-0', 'prod-p0-1']) expect(pods.find((p) => p.metadata.name === name)!.metadata.uid).not.toBe(before.get(name));
    await clusters.waitReady('prod', 120_000);
    await readAll('prod-p1-0');
    await writeObjects('prod-p1-1', 'step2', 8);
    await readAll('prod-p0-0');
  }, 420_000);

  it('after the pool add the rebalance runs to completion as the spec defines it', async () => {
    const c = await clusters.waitFor('prod', 'the rebalance recorded', (x) => x.status?.rebalance?.finishedAt !== undefined, 300_000);
    expect(c.status!.rebalance?.lastError ?? '').toBe('');
    expect(getCondition(c.status!.conditions, 'Degraded')?.status).toBe('False');
    await readAll('prod-p0-1');
  }, 320_000);

  it('decommission: true on the first pool drains it; the credentials Secret is edited mid-drain and the operator killed; the drain completes; restart without it; cleared; StatefulSet gone; every object reads back with the new key, the old key is refused', async () => {
    // Enough objects that the drain is still moving them while the key rotates.
    await writeObjects('prod-p0-0', 'step3', 160);
    await clusters.editSpec('prod', (s) => ({ ...s, pools: s.pools.map((p) => (p.name === 'p0' ? { ...p, decommission: true } : p)) }));
    await clusters.waitFor('prod', 'the drain', (c) => ['StartingDecommission', 'Draining'].includes(c.status?.operation?.phase ?? ''), 120_000);
    // Rotate the root credential: each pod's kubelet refreshes the Secret volume at its own moment.
    const rotated = { accessKey: 'operatoradmin-2', secretKey: 'operator-secret-key-rotated-4567' };
    const before = Date.now();
    kubelet.secretSyncDelayMs = () => 200 + Math.floor(Math.random() * 1_500);
    const secrets = api.store.find('', 'v1', 'secrets')!;
    const secret = api.store.get(secrets, NS, 'prod-root');
    secret['data'] = { accessKey: Buffer.from(rotated.accessKey).toString('base64'), secretKey: Buffer.from(rotated.secretKey).toString('base64') };
    api.store.update(secrets, NS, secret, { manager: 'kubectl' });
    keys = rotated;
    // Every pod's volume refreshed, at moments of its own, with the drain still running (no pod restarted for it).
    const running = ['prod-p0-0', 'prod-p0-1', 'prod-p1-0', 'prod-p1-1'];
    const uids = new Map(listOf(api, '', 'v1', 'pods').map((p) => [p.metadata.name, p.metadata.uid]));
    // The refreshes run in this (test) process every 300 ms after a 0.2-1.7 s delay; on a loaded
    // 2-core machine its timers can lag by seconds, so the wait is bounded generously. What must
    // hold is that the key changed under a running drain: the phase is read as each pod's volume
    // changes, and the first change (nodes disagreeing on the key from then on) came mid-drain.
    const phaseAtRefresh = new Map<string, string>();
    const end = Date.now() + 90_000;
    while (Date.now() < end && phaseAtRefresh.size < running.length) {
      const fresh = running.filter((n) => !phaseAtRefresh.has(n) && (kubelet.secretRefreshed.get(n) ?? 0) > before);
      if (fresh.length > 0) {
        const phase = (await clusters.get('prod')).status?.operation?.phase ?? '(none)';
        for (const n of fresh) phaseAtRefresh.set(n, phase);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    const times = running.map((n) => kubelet.secretRefreshed.get(n) ?? 0);
    // A pod that did not refresh says why: its container's state, restarts, last exit and log.
    const stale = running.filter((_n, i) => times[i]! <= before);
    const why = (await Promise.all(stale.map((n) => kubelet.describe(n)))).join('\n');
    expect(times.map((t) => t > before), `every pod refreshed its Secret volume\n${why}`).toEqual(running.map(() => true));
    // No svc exited on its own meanwhile (the kubelet would have restarted it).
    expect(running.map((n) => [n, kubelet.restarts(n), kubelet.lastExit(n)?.code]), 'svc containers that exited').toEqual(running.map((n) => [n, 0, undefined]));
    expect(Math.max(...times) - Math.min(...times), 'pods refreshed at different moments').toBeGreaterThan(50);
    const first = running.reduce((a, b) => (kubelet.secretRefreshed.get(a)! <= kubelet.secretRefreshed.get(b)! ? a : b));
    expect(phaseAtRefresh.get(first), 'the drain was running when the first pod took the new key').toMatch(/Decommission|Draining/);
    expect(running.filter((n) => listOf(api, '', 'v1', 'pods').find((p) => p.metadata.name === n)?.metadata.uid !== uids.get(n)), 'pods restarted').toEqual([]);
    await killOperator();
    await new Promise((r) => setTimeout(r, 1_000));
    await startOperator();
    const c = await clusters.waitFor('prod', 'p0 Removed', (x) => x.status?.pools?.find((p) => p.name === 'p0')?.state === 'Removed' && !x.status.operation, 420_000);
    expect(c.status!.launchConfig!.applied!.volumes.split(' ')).toHaveLength(1);
    expect(listOf(api, 'apps', 'v1', 'statefulsets').map((s) => s.metadata.name)).toEqual(['prod-p1']);
    expect(listOf(api, '', 'v1', 'persistentvolumeclaims').filter((v) => v.metadata.name.includes('prod-p0'))).toHaveLength(4);
    await clusters.waitReady('prod', 120_000);
    // Every object reads back with the new key; the old key is refused everywhere.
    await readAll('prod-p1-0');
    await readAll('prod-p1-1');
    for (const pod of ['prod-p1-0', 'prod-p1-1']) {
      const refused = await s3(pod, CREDENTIALS).send(new GetObjectCommand({ Bucket: 'e2e', Key: [...objects.keys()][0]! })).then(() => 'ok', (e: { name?: string }) => e.name);
      expect(refused).toBe('InvalidAccessKeyId');
    }
  }, 600_000);
});
