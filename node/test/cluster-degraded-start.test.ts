/**
 * Degraded start of a 4-node cluster (4 nodes × 2 drives, 8 drives, EC:4):
 * one node alone holds 2 of 8 drives, below read quorum. It stays up: liveness
 * 200, readiness 503 `storage_quorum_unavailable`, S3 503 with `Retry-After: 5`
 * and `x-svc-readiness-pending: storage_quorum`; past
 * `SVC_STARTUP_READINESS_MAX_WAIT_SECS` it says it continues degraded and stays
 * up, with nothing formatted. When the other three start, all four become
 * ready by themselves within seconds. Losing nodes one by one: one down keeps
 * it ready, two down fail the cluster (write) probe on storage and locks, three
 * down put it back to pending storage_quorum, and it recovers by itself.
 */
import { access } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canUseMountNamespaces, TestCluster } from './helpers/cluster.ts';

const supported = canUseMountNamespaces();

describe.skipIf(!supported)('4-node cluster: degraded start and recovery (real processes)', () => {
  let cluster: TestCluster;
  beforeAll(async () => {
    cluster = await TestCluster.create({ nodes: 4, drivesPerNode: 2 });
  });
  afterAll(async () => {
    await cluster?.close();
  });

  it('one node of four stays up degraded, then all four get ready without restarts', async () => {
    // A short readiness wait: past it the node logs that it continues degraded, and stays up.
    await cluster.start(1, { SVC_STARTUP_READINESS_MAX_WAIT_SECS: '1' });
    await cluster.waitLive(1);

    const live = await cluster.get(1, '/health');
    expect(live.status).toBe(200);

    const ready = await cluster.get(1, '/health/ready');
    expect(ready.status).toBe(503);
    const body = JSON.parse(ready.body) as { ready: boolean; degradedReasons: string[] };
    expect(body.ready).toBe(false);
    expect(body.degradedReasons).toEqual(['storage_quorum_unavailable']);

    const s3 = await cluster.get(1, '/');
    expect(s3.status).toBe(503);
    expect(s3.headers['retry-after']).toBe('5');
    expect(s3.headers['x-svc-readiness-pending']).toBe('storage_quorum');

    // Still alive and still degraded past the readiness wait (no exit, no format).
    const waitEnd = Date.now() + 15_000;
    while (!(await cluster.logs(1)).includes('"event":"startup_readiness_wait_exceeded"') && Date.now() < waitEnd) {
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(await cluster.logs(1)).toContain('"event":"startup_readiness_wait_exceeded"');
    expect(cluster.isRunning(1)).toBe(true);
    expect((await cluster.get(1, '/health/ready')).status).toBe(503);

    // Nothing is formatted while the peers are missing.
    const formatted = await Promise.all([1, 2].map((d) => access(join(cluster.nodeDir(1), `d${d}`, '.svc.sys', 'format.json')).then(() => true, () => false)));
    expect(formatted).toEqual([false, false]);

    const t0 = Date.now();
    await Promise.all([cluster.start(2), cluster.start(3), cluster.start(4)]);
    await Promise.all([1, 2, 3, 4].map((k) => cluster.waitReady(k, 30_000)));
    const took = Date.now() - t0;
    expect(took).toBeLessThan(30_000);

    for (const k of [1, 2, 3, 4]) {
      const r = await cluster.get(k, '/health/ready');
      expect(r.status).toBe(200);
      expect(JSON.parse(r.body)).toMatchObject({ ready: true, status: 'ok', degradedReasons: [] });
    }
    // Node 1 was never restarted.
    expect(await cluster.logs(1)).not.toMatch(/"event":"startup_failed"/);
  }, 90_000);

  it('a ready node that loses read quorum goes back to degraded, and recovers by itself', async () => {
    const reasons = (r: { body: string }) => (JSON.parse(r.body) as { degradedReasons: string[] }).degradedReasons;
    // One node down: 6 of 8 drives and 3 of 4 lockers, still ready and write-healthy (EC:4 on 8 drives: read 4, write 5).
    await cluster.stop(4);
    await new Promise((res) => setTimeout(res, 1_500));
    expect((await cluster.get(1, '/health/ready')).status).toBe(200);
    expect((await cluster.get(1, '/compat/health/cluster')).status).toBe(200);

    // Two down: reads have quorum, writes and the lock majority do not; the cluster (write) probe says which.
    await cluster.stop(3);
    const writeEnd = Date.now() + 30_000;
    let w = await cluster.get(1, '/compat/health/cluster');
    while (!(w.status === 503 && reasons(w).includes('storage_and_lock_unavailable')) && Date.now() < writeEnd) {
      await new Promise((res) => setTimeout(res, 250));
      w = await cluster.get(1, '/compat/health/cluster');
    }
    expect(w.status).toBe(503);
    expect(reasons(w)).toContain('storage_and_lock_unavailable');

    // Three down: below read quorum.
    await cluster.stop(2);
    const end = Date.now() + 30_000;
    let r = await cluster.get(1, '/health/ready');
    while ((r.status === 200 || !reasons(r).includes('storage_quorum_unavailable')) && Date.now() < end) {
      await new Promise((res) => setTimeout(res, 250));
      r = await cluster.get(1, '/health/ready');
    }
    expect(r.status).toBe(503);
    expect((JSON.parse(r.body) as { degradedReasons: string[] }).degradedReasons).toEqual(['storage_quorum_unavailable']);
    const s3 = await cluster.get(1, '/');
    expect(s3.status).toBe(503);
    expect(s3.headers['x-svc-readiness-pending']).toBe('storage_quorum');

    await Promise.all([cluster.start(2), cluster.start(3), cluster.start(4)]);
    await Promise.all([1, 2, 3, 4].map((k) => cluster.waitReady(k, 30_000)));
    expect(cluster.isRunning(1)).toBe(true);
  }, 90_000);
});
