/**
 * Issue 27 item 7: readiness follows peer health. Two real nodes: with one
 * stopped, the other cannot take a lock (write quorum is both), so it must
 * not say ready: `/health/ready` is 503 with `peer_health_unavailable` and
 * a `peers` detail, while S3 reads it can serve still work and writes are
 * refused on the lock quorum; a frozen peer (it
 * stops answering instead of refusing) is `cluster_health_timeout` on the
 * cluster probe. Both come back on their own.
 */
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canUseMountNamespaces, TestCluster } from './helpers/cluster.ts';

const enabled = canUseMountNamespaces();

interface Ready {
  ready: boolean;
  degradedReasons: string[];
  details: Record<string, { ready: boolean; detail?: string }>;
}

async function until(what: string, fn: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await fn().catch(() => false))) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe.skipIf(!enabled)('readiness follows peer health', () => {
  let c: TestCluster;
  beforeAll(async () => {
    c = await TestCluster.create({ nodes: 2, drivesPerNode: 2 });
    await Promise.all([1, 2].map((k) => c.start(k)));
    await Promise.all([1, 2].map((k) => c.waitReady(k, 60_000)));
    // Writes need every node to see the other (lock quorum is both).
    for (const k of [1, 2]) await until(`node ${k} sees write quorum`, async () => (await c.get(k, '/compat/health/cluster')).status === 200);
  }, 90_000);
  afterAll(async () => {
    if (c?.isRunning(2)) c.signal(2, 'SIGCONT');
    await c?.close();
  });

  it('a stopped peer makes the node unready (peer_health_unavailable); it is ready again once the peer is back', async () => {
    const ok = JSON.parse((await c.get(1, '/health/ready')).body) as Ready;
    expect(ok.details.peers).toMatchObject({ ready: true, detail: '2 of 2 nodes reachable' });
    await c.s3(1).send(new CreateBucketCommand({ Bucket: 'peers' }));
    await c.s3(1).send(new PutObjectCommand({ Bucket: 'peers', Key: 'before', Body: 'written with both nodes up' }));
    await c.stop(2);
    await until('node 1 unready', async () => (await c.get(1, '/health/ready')).status === 503);
    const r = await c.get(1, '/health/ready');
    const body = JSON.parse(r.body) as Ready;
    expect(body.degradedReasons).toContain('peer_health_unavailable');
    expect(body.details.peers).toMatchObject({ ready: false });
    expect(body.details.peers!.detail).toMatch(/1 of 2 nodes reachable \(127\.0\.0\.2:\d+ unreachable\); a majority \(2\) is needed/);
    expect(body.details.lock).toMatchObject({ ready: false });
    const cluster = JSON.parse((await c.get(1, '/compat/health/cluster')).body) as Ready;
    // Write probe: the lock majority (and with it write quorum of the drives) is gone too.
    expect(cluster.degradedReasons).toContain('peer_health_unavailable');
    expect(cluster.degradedReasons.some((r) => r === 'lock_quorum_unavailable' || r === 'storage_and_lock_unavailable')).toBe(true);
    // Not ready, yet serving what it can: reads (read quorum, read locks); writes fail on the lock quorum.
    const s3 = c.s3(1);
    const got = await s3.send(new GetObjectCommand({ Bucket: 'peers', Key: 'before' }));
    expect(await got.Body!.transformToString()).toBe('written with both nodes up');
    await expect(s3.send(new PutObjectCommand({ Bucket: 'peers', Key: 'during', Body: 'x' }))).rejects.toMatchObject({ $metadata: { httpStatusCode: 503 } });
    await c.start(2);
    await c.waitReady(1, 30_000);
    await c.waitReady(2, 30_000);
    for (const k of [1, 2]) await until(`node ${k} sees write quorum`, async () => (await c.get(k, '/compat/health/cluster')).status === 200);
  }, 90_000);

  it('a frozen peer is a cluster health timeout on the cluster probe', async () => {
    c.signal(2, 'SIGSTOP');
    try {
      await until('node 1 sees the timeout', async () => {
        const b = JSON.parse((await c.get(1, '/compat/health/cluster')).body) as Ready;
        return b.degradedReasons.includes('cluster_health_timeout');
      });
      const ready = JSON.parse((await c.get(1, '/health/ready')).body) as Ready;
      expect(ready.details.peers!.detail).toMatch(/not answering/);
    } finally {
      c.signal(2, 'SIGCONT');
    }
    await until('node 1 ready again', async () => (await c.get(1, '/health/ready')).status === 200, 30_000);
  }, 60_000);
});
