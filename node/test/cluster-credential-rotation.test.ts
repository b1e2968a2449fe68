/**
 * Rotating the root credential on a running 4-node cluster, as a Kubernetes
 * Secret edit does: every node reads its key files from its own Secret
 * volume, and the new files reach the nodes at different moments (each
 * kubelet syncs on its own). Through the whole rotation:
 * - a node that switched refuses the old key and takes the new one at once
 *   (S3 and the admin API);
 * - writes through a switched node and through one that has not switched yet
 *   both succeed, so internode calls authenticate across the two keys;
 * - once every node switched, every object reads back with the new key on
 *   every node and the old key is refused everywhere.
 */
import { join } from 'node:path';
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admin } from './helpers/admin.ts';
import { canUseMountNamespaces, TestCluster } from './helpers/cluster.ts';
import { writeSecretVolume } from './helpers/secret-volume.ts';
import { keepAliveHandler } from './helpers/s3-client.ts';

const supported = canUseMountNamespaces();
const NODES = [1, 2, 3, 4];
const OLD = { accessKey: 'rotation-old', secretKey: 'rotation-old-secret-0123' };
const NEW = { accessKey: 'rotation-new', secretKey: 'rotation-new-secret-4567' };

describe.skipIf(!supported)('root credential rotation on a 4-node cluster (key files re-read, no restart)', () => {
  let cluster: TestCluster;
  const volume = (k: number) => join(cluster.base, `secret-node${k}`);
  const clients: S3Client[] = [];
  const s3 = (k: number, c: typeof OLD) => {
    const client = new S3Client({ requestHandler: keepAliveHandler(), endpoint: cluster.url(k), region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: c.accessKey, secretAccessKey: c.secretKey }, maxAttempts: 1 });
    clients.push(client);
    return client;
  };
  const put = (k: number, c: typeof OLD, key: string) => s3(k, c).send(new PutObjectCommand({ Bucket: 'rot', Key: key, Body: `body of ${key}` }));
  const get = async (k: number, c: typeof OLD, key: string) => (await (await s3(k, c).send(new GetObjectCommand({ Bucket: 'rot', Key: key }))).Body!.transformToString());
  const code = (p: Promise<unknown>) => p.then(() => 'ok', (e: { name?: string }) => e.name ?? 'error');
  const rotate = (k: number, c: typeof OLD) => writeSecretVolume(volume(k), { accessKey: c.accessKey, secretKey: c.secretKey });
  /** Bounded wait until node k takes `c` (a signed admin call succeeds). */
  async function waitSwitched(k: number, c: typeof OLD): Promise<void> {
    const end = Date.now() + 20_000;
    for (;;) {
      const r = await admin(cluster.url(k), c, { method: 'GET', path: 'v3/pools/list' });
      if (r.status === 200) return;
      if (Date.now() > end) throw new Error(`node ${k} did not take the new key: ${r.status} ${r.body}\n${await cluster.warnings(10)}`);
      await new Promise((r2) => setTimeout(r2, 200));
    }
  }

  beforeAll(async () => {
    cluster = await TestCluster.create({
      nodes: 4,
      drivesPerNode: 2,
      credentialFiles: (k) => ({ accessKey: join(cluster.base, `secret-node${k}`, 'accessKey'), secretKey: join(cluster.base, `secret-node${k}`, 'secretKey') }),
    });
    for (const k of NODES) await rotate(k, OLD);
    await Promise.all(NODES.map((k) => cluster.start(k)));
    await Promise.all(NODES.map((k) => cluster.waitReady(k, 40_000)));
    await s3(1, OLD).send(new CreateBucketCommand({ Bucket: 'rot' }));
    for (const k of NODES) await put(k, OLD, `before-${k}`);
  }, 90_000);

  afterAll(async () => {
    for (const c of clients) c.destroy();
    await cluster?.close();
  });

  it('mid-rotation: switched nodes refuse the old key; writes through either side reach every node', async () => {
    await rotate(1, NEW);
    await rotate(2, NEW);
    await waitSwitched(1, NEW);
    await waitSwitched(2, NEW);
    expect(await code(put(1, OLD, 'refused'))).toBe('InvalidAccessKeyId');
    expect((await admin(cluster.url(1), OLD, { method: 'GET', path: 'v3/pools/list' })).status).toBe(403);
    // Nodes 3 and 4 still run the old key: they take it and refuse the new one.
    expect(await code(put(3, NEW, 'not-yet'))).toBe('InvalidAccessKeyId');
    // Erasure-coded writes fan out to all four nodes over internode RPC, across the two keys.
    await put(1, NEW, 'mid-1');
    await put(3, OLD, 'mid-3');
    expect(await get(2, NEW, 'mid-3')).toBe('body of mid-3');
    expect(await get(4, OLD, 'mid-1')).toBe('body of mid-1');
  }, 60_000);

  it('a key file caught empty is ignored: the node keeps its current key', async () => {
    await writeSecretVolume(volume(3), { accessKey: OLD.accessKey, secretKey: '' });
    await new Promise((r) => setTimeout(r, 2_500));
    expect(await get(3, OLD, 'before-3')).toBe('body of before-3');
  });

  it('after every node switched: every object reads back with the new key everywhere; the old key is refused everywhere', async () => {
    await rotate(3, NEW);
    await rotate(4, NEW);
    await waitSwitched(3, NEW);
    await waitSwitched(4, NEW);
    const keys = [...NODES.map((k) => `before-${k}`), 'mid-1', 'mid-3'];
    for (const k of NODES) {
      for (const key of keys) expect(await get(k, NEW, key)).toBe(`body of ${key}`);
      expect(await code(get(k, OLD, 'before-1'))).toBe('InvalidAccessKeyId');
      expect((await admin(cluster.url(k), OLD, { method: 'GET', path: 'v3/pools/list' })).status).toBe(403);
    }
    const logs = await cluster.logs(1);
    expect(logs).toContain('"event":"root_credential_rotated"');
    expect(logs).not.toContain(NEW.secretKey);
  }, 60_000);
});
