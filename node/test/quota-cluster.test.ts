/**
 * A bucket quota on a 4-node cluster of real `svc` processes on
 * 127.0.0.1-4 (issue 28, item 12): the quota set through one node applies on
 * every node; the node that filled the bucket refuses the next PUT at once
 * (its own writes count until a scan has seen them), and once the scanners
 * have counted the bucket every node refuses it; clearing the quota through
 * another node lets writes in again everywhere.
 */
import { CreateBucketCommand, HeadObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { admin } from './helpers/admin.ts';
import { canUseMountNamespaces, TestCluster } from './helpers/cluster.ts';
import { until } from './helpers/heal-server.ts';
import { errorOf } from './helpers/s3-error.ts';

const supported = canUseMountNamespaces();
const QUOTA = 2 * 1024 * 1024;
const NODES = [1, 2, 3, 4] as const;

describe.skipIf(!supported)('bucket quota on a 4-node cluster (real processes on 127.0.0.1-4)', () => {
  let c: TestCluster;
  const creds = () => ({ accessKey: c.accessKey, secretKey: c.secretKey });
  const put = (k: number, key: string, size: number) => c.s3(k).send(new PutObjectCommand({ Bucket: 'capped', Key: key, Body: Buffer.alloc(size, k) }));
  const quotaUsage = async (k: number) => ((await admin(c.url(k), creds(), { method: 'GET', path: 'v3/get-bucket-quota', query: { bucket: 'capped' } })).json() as { usage?: number }).usage ?? -1;

  beforeAll(async () => {
    c = await TestCluster.create({ nodes: 4, drivesPerNode: 2, env: { SVC_SCANNER_INTERVAL: '500ms' } });
    await Promise.all(NODES.map((k) => c.start(k)));
    await Promise.all(NODES.map((k) => c.waitReady(k, 60_000)));
    await c.s3(1).send(new CreateBucketCommand({ Bucket: 'capped' }));
  }, 120_000);
  afterAll(async () => {
    await c?.close();
  });
  afterEach(async (ctx) => {
    if (ctx.task.result?.state === 'fail' && c) console.log(await c.warnings());
  });

  it('a bucket at its quota refuses the next PUT on every node', async () => {
    const set = await admin(c.url(2), creds(), { method: 'PUT', path: 'v4/set-bucket-quota', query: { bucket: 'capped' }, body: JSON.stringify({ size: QUOTA, quotatype: 'hard' }) });
    expect(set.status, set.body).toBe(200);
    // every node sees the quota (the change is signalled to peers; their cache lasts 2 s at most)
    for (const k of NODES) {
      await until(`node ${k} to see the quota`, async () => ((await admin(c.url(k), creds(), { method: 'GET', path: 'v3/get-bucket-quota', query: { bucket: 'capped' } })).status === 200 ? true : undefined), 10_000);
    }
    // fill it to the byte through node 1
    await put(1, 'half-1', QUOTA / 2);
    await put(1, 'half-2', QUOTA / 2);
    // node 1 counts its own writes before any scan has seen them
    expect(await errorOf(put(1, 'over-at-once', 1))).toMatchObject({ code: 'XSvcAdminBucketQuotaExceeded', status: 400 });
    // once the scanners have counted the bucket, every node counts it too
    for (const k of NODES) await until(`node ${k} to count the bucket`, async () => ((await quotaUsage(k)) >= QUOTA ? true : undefined), 60_000);
    for (const k of NODES) {
      expect(await errorOf(put(k, `over-${k}`, 1)), `node ${k}`).toMatchObject({ code: 'XSvcAdminBucketQuotaExceeded', status: 400 });
    }
    for (const k of NODES) expect((await errorOf(c.s3(1).send(new HeadObjectCommand({ Bucket: 'capped', Key: `over-${k}` }))))?.status).toBe(404);
    // clearing it through node 3 lets writes in again on node 4
    const clear = await admin(c.url(3), creds(), { method: 'PUT', path: 'v3/set-bucket-quota', query: { bucket: 'capped' }, body: JSON.stringify({ size: 0 }) });
    expect(clear.status, clear.body).toBe(200);
    await until('node 4 to take writes again', async () => ((await errorOf(put(4, 'after-clear', 1024))) === undefined ? true : undefined), 10_000);
  }, 180_000);
});
