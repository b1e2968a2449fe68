/**
 * Issue 27 item 9: clock skew is measured and reported per peer. Four real
 * nodes, node 4 under libfaketime: 3 s ahead, every other node measures it
 * from node 4's internode calls (log `peer_clock_skew`, the snapshot's
 * `clockSkewMs`); 10 minutes ahead, its tokens are refused as clock skew
 * naming the node and the skew (`rpc_clock_skew`), not a bare "expired
 * token" from an address.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admin } from './helpers/admin.ts';
import { canUseMountNamespaces, skewedClockEnv, TestCluster } from './helpers/cluster.ts';

const hasFaketime = skewedClockEnv('+1s') !== undefined;

async function until(what: string, fn: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await fn().catch(() => false))) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe.skipIf(!canUseMountNamespaces() || !hasFaketime)('clock skew per peer', () => {
  let c: TestCluster;
  const node4 = () => `127.0.0.4:${c.port}`;
  beforeAll(async () => {
    c = await TestCluster.create({ nodes: 4, drivesPerNode: 1 });
    await Promise.all([1, 2, 3].map((k) => c.start(k)));
    await c.start(4, skewedClockEnv('+3s'));
    await Promise.all([1, 2, 3, 4].map((k) => c.waitReady(k, 60_000)));
  }, 90_000);
  afterAll(async () => {
    await c?.close();
  });

  it('a peer 3 s ahead is measured and reported: log, snapshot', async () => {
    await until('node 1 to warn about node 4', async () => /"event":"peer_clock_skew"[^\n]*"peer":"127\.0\.0\.4:\d+"/.test(await c.logs(1)));
    const line = (await c.logs(1)).split('\n').find((l) => l.includes('"event":"peer_clock_skew"'))!;
    const skew = (JSON.parse(line) as { skewMs: number }).skewMs;
    expect(skew).toBeLessThan(-2_500);
    expect(skew).toBeGreaterThan(-4_000);
    const snap = await admin(c.url(1), { accessKey: c.accessKey, secretKey: c.secretKey }, { method: 'GET', path: 'v4/cluster/snapshot' });
    const nodes = (snap.json() as { nodes: { id: string; clockSkewMs: number | null }[] }).nodes;
    expect(nodes.find((n) => n.id === node4())!.clockSkewMs).toBeLessThan(-2_500);
    expect(Math.abs(nodes.find((n) => n.id === `127.0.0.2:${c.port}`)!.clockSkewMs ?? 0)).toBeLessThan(1_000);
  }, 60_000);

  it('a peer 10 minutes ahead has its calls refused as clock skew, naming the node', async () => {
    await c.stop(4);
    await c.start(4, skewedClockEnv('+600s'));
    await until('node 1 to refuse node 4 for its clock', async () => /"event":"rpc_clock_skew"[^\n]*"node":"127\.0\.0\.4:\d+"/.test(await c.logs(1)));
    const line = (await c.logs(1)).split('\n').find((l) => l.includes('"event":"rpc_clock_skew"'))!;
    const rec = JSON.parse(line) as { skewMs: number; msg: string };
    expect(rec.skewMs).toBeLessThan(-590_000);
    expect(rec.msg).toMatch(/in the future/);
  }, 60_000);
});
