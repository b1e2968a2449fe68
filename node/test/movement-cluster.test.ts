/**
 * Data movement on the 4-node mount-namespace harness with two pools of
 * tmpfs drives:
 *   pool 0  nodes 1–4, 2 drives each (8 drives, EC:4), led by node 1
 *   pool 1  nodes 3–4, 2 drives each (4 drives, EC:2), led by node 3
 *
 * - a rebalance start that a node does not acknowledge (node 4 down) is
 *   rolled back and the refusal names the node; the record says why;
 * - pool 1 is decommissioned (the request sent to node 1 runs on node 3,
 *   the pool's leader) while clients on nodes 1 and 2 keep writing,
 *   overwriting, deleting and reading; node 3 is killed (SIGKILL) in the
 *   middle of the drain and started again: it resumes the drain, which
 *   completes; every acknowledged object and version reads back
 *   byte-exact, nothing is duplicated, pool 1's drives hold no object data,
 *   and the cluster restarted without pool 1's argument serves everything.
 */
import { CreateBucketCommand, PutBucketVersioningCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DecommissionStatusReport, RebalanceStatus } from '../src/object/admin/types.ts';
import { admin } from './helpers/admin.ts';
import { canUseMountNamespaces, TestCluster } from './helpers/cluster.ts';
import { objectJournals } from './helpers/movement.ts';
import { canMountTmpfs } from './helpers/tmpfs.ts';
import { Workload } from './helpers/workload.ts';

const MiB = 1024 * 1024;
const enabled = canUseMountNamespaces() && canMountTmpfs();
if (!enabled) console.log('skipped: no mount namespaces or tmpfs (needs root and unshare)');

let c: TestCluster;
const creds = () => ({ accessKey: c.accessKey, secretKey: c.secretKey });

beforeAll(async () => {
  if (!enabled) return;
  c = await TestCluster.create({
    nodes: 4,
    drivesPerNode: 2,
    pools: [
      { nodes: [1, 4], drivesPerNode: 2 },
      { nodes: [3, 4], drivesPerNode: 2 },
    ],
    // Pool 1 has more free space (192 MiB usable against 128): new objects land there first.
    tmpfsBytes: (pool) => (pool === 0 ? 32 : 96) * MiB,
    env: { SVC_DECOMMISSION_ENTRY_CONCURRENCY: '2', SVC_DECOMMISSION_BUCKET_CONCURRENCY: '1' },
  });
  await Promise.all([1, 2, 3, 4].map((k) => c.start(k)));
  for (let k = 1; k <= 4; k++) await c.waitReady(k, 60_000);
}, 120_000);
afterAll(async () => {
  await c?.close();
});

async function decomStatus(k: number): Promise<DecommissionStatusReport> {
  const r = await admin(c.url(k), creds(), { method: 'GET', path: 'v3/decommission/status' });
  if (r.status !== 200) throw new Error(`status on node ${k}: ${r.status} ${r.body}`);
  return r.json() as DecommissionStatusReport;
}

async function until<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const journalsOn = async (pool: number) => {
  let n = 0;
  for (const k of c.nodesOf(pool)) for (let d = 1; d <= 2; d++) n += (await objectJournals(c.drivePath(k, pool, d))).length;
  return n;
};

describe.skipIf(!enabled)('data movement on a 4-node cluster with two pools', () => {
  it('rebalance start rolls back when a node does not acknowledge; a drain survives kill -9 of its leader; the cluster runs without the drained pool', { timeout: 300_000 }, async () => {
    const s1 = c.s3(1);
    await s1.send(new CreateBucketCommand({ Bucket: 'ver' }));
    await s1.send(new PutBucketVersioningCommand({ Bucket: 'ver', VersioningConfiguration: { Status: 'Enabled' } }));
    await s1.send(new CreateBucketCommand({ Bucket: 'plain' }));
    const w = new Workload(() => [c.s3(1), c.s3(2)], { paceMs: 40 });
    await w.seedStable(120, (i) => [4000, 80_000, 200_000][i % 3]!);
    for (let i = 0; i < 14; i++) await w.putVer(c.s3(1 + (i % 2)), `w${i % 2}-v${i % 7}`, 5000 + i);
    const onPool1 = await journalsOn(1);
    expect(onPool1).toBeGreaterThan(4 * 120);

    // Rebalance: node 4 down, the start does not propagate: rolled back, node 4 named.
    await c.stop(4);
    const start = await admin(c.url(1), creds(), { method: 'POST', path: 'v3/rebalance/start' });
    expect(start.status, start.body).toBe(503);
    const err = start.json() as { Code: string; Message: string };
    expect(err.Code).toBe('XSvcRebalanceStartFailed');
    expect(err.Message).toContain(`${c.host(4)}:${c.port}`);
    expect(err.Message).toContain('rolled back');
    const rolled = (await admin(c.url(2), creds(), { method: 'GET', path: 'v3/rebalance/status' })).json() as RebalanceStatus;
    expect(rolled.status).toBe('failed');
    expect(rolled.pools.find((p) => p.participating)).toMatchObject({ status: 'failed', stopping: false });
    expect(rolled.pools.find((p) => p.participating)!.lastError).toMatch(/start propagation failed/);
    expect(rolled.stopPropagation.failedPeers.join()).toContain(`${c.host(4)}:${c.port}`);
    // Nothing moved; the fence is down on every node (a new key may go to either pool).
    expect(await journalsOn(1)).toBe(onPool1);
    await c.start(4);
    await c.waitReady(4, 60_000);

    // Decommission pool 1, asked of node 1, run by node 3.
    const dec = await admin(c.url(1), creds(), { method: 'POST', path: 'v3/pools/decommission', query: { pool: '1', 'by-id': 'true' } });
    expect(dec.status, dec.body).toBe(200);
    expect(dec.headers['x-svc-admin-node']).toBe(`${c.host(3)}:${c.port}`);
    w.start(1, 1);
    // Kill the leader once the pool's drives have visibly emptied a little.
    await until('the drain to move objects', async () => ((await journalsOn(1)) <= onPool1 - 4 * 10 ? true : undefined));
    await w.pause();
    const before = (await decomStatus(2)).pools[1]!;
    expect(before.status).toBe('running');
    await c.stop(3, 'SIGKILL');
    await c.start(3);
    await c.waitReady(3, 60_000);
    w.resume();
    // The restarted leader resumes the drain by itself.
    await until('node 3 to resume the drain', async () => (/"event":"decommission_active","pool":1,.*"resumed":true/.test(await c.logs(3)) ? true : undefined), 60_000);
    const done = await until(
      'the drain to end',
      async () => {
        const p = (await decomStatus(1)).pools[1]!;
        return p.status === 'running' || p.status === 'queued' ? undefined : p;
      },
      180_000,
    );
    await w.stop();
    expect(done).toMatchObject({ status: 'complete', poolStatus: 'decommissioned' });
    expect(done.decommissionInfo).toMatchObject({ complete: true, objectsDecommissionedFailed: 0, lastError: null });
    expect(w.errors).toEqual([]);
    expect(w.writes).toBeGreaterThan(20);
    expect(w.reads).toBeGreaterThan(20);
    expect(await w.diff(c.s3(2))).toEqual([]);
    expect(await journalsOn(1)).toBe(0);
    // Every node sees it complete.
    for (const k of [2, 3, 4]) expect((await decomStatus(k)).pools[1]!.status).toBe('complete');

    // The cluster without pool 1's argument: nodes 3 and 4 keep their pool 0 drives.
    c.usePools(1);
    await c.restartAll();
    for (const k of [1, 2, 3, 4]) await c.waitReady(k, 60_000);
    expect(await w.diff(c.s3(4))).toEqual([]);
    const list = (await admin(c.url(3), creds(), { method: 'GET', path: 'v3/pools/list' })).json() as { cmdline: string; status: string }[];
    expect(list.map((p) => p.status)).toEqual(['active']);
  });
});
