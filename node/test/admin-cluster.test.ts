/**
 * The admin API on a 4-node cluster in mount namespaces with two pools:
 *   pool 0  http://127.0.0.{1...4}:<port>/…/a{1...2}   (8 drives, led by node 1)
 *   pool 1  http://127.0.0.{3...4}:<port>/…/b{1...2}   (4 drives, led by node 3)
 * Every route answers on every node; a pool mutation sent to a node that does
 * not lead the pool is forwarded over internode RPC and the leader's answer is
 * relayed unchanged; with the leader down it fails fast with a clear error.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_ROUTES } from '../src/api/admin/routes.ts';
import type { ClusterSnapshot, PoolStatus, ServerInfoMessage } from '../src/object/admin/types.ts';
import { admin, shapeMismatches } from './helpers/admin.ts';
import { EXAMPLE_BUCKET, exampleQuery, ROUTE_EXAMPLES } from './helpers/admin-doc.ts';
import { canUseMountNamespaces, TestCluster } from './helpers/cluster.ts';

const enabled = canUseMountNamespaces();
if (!enabled) console.log('skipped: no mount namespaces (needs root and unshare)');

let c: TestCluster;
const creds = () => ({ accessKey: c.accessKey, secretKey: c.secretKey });
const fixture = (name: string) => JSON.parse(readFileSync(join(import.meta.dirname, 'fixtures', 'admin-shapes', `${name}.json`), 'utf8')) as unknown;

beforeAll(async () => {
  if (!enabled) return;
  c = await TestCluster.create({
    nodes: 4,
    drivesPerNode: 2,
    pools: {
      volumes: (port, shared) => [`http://127.0.0.{1...4}:${port}${shared}/a{1...2}`, `http://127.0.0.{3...4}:${port}${shared}/b{1...2}`],
      driveDirs: ['a1', 'a2', 'b1', 'b2'],
    },
  });
  for (let k = 1; k <= 4; k++) await c.start(k);
  for (let k = 1; k <= 4; k++) await c.waitReady(k, 60_000);
}, 120_000);
afterAll(async () => {
  await c?.close();
});

describe.skipIf(!enabled)('admin API on a 4-node cluster with two pools', () => {
  it('every route answers on every node, with the golden shapes', async () => {
    const pools = c.volumes;
    // the bucket the quota examples name
    await c.s3(1).send(new CreateBucketCommand({ Bucket: EXAMPLE_BUCKET }));
    for (let k = 1; k <= 4; k++) {
      for (const r of ADMIN_ROUTES) {
        const e = ROUTE_EXAMPLES[r.op];
        const res = await admin(c.url(k), creds(), { method: e.method, path: e.path, query: exampleQuery(e, pools), ...(e.body ? { body: e.body } : {}) });
        expect(res.status, `node ${k} ${r.op}: ${res.body}`).toBe(e.status);
      }
      const list = (await admin(c.url(k), creds(), { method: 'GET', path: 'v3/pools/list' })).json() as PoolStatus[];
      expect(shapeMismatches(list, fixture('pools-list'))).toEqual([]);
      expect(list.map((p) => [p.cmdline, p.leader, p.drives, p.drivesOnline])).toEqual([
        [pools[0], c.url(1).slice(7), 8, 8],
        [pools[1], c.url(3).slice(7), 4, 4],
      ]);
      const decom = (await admin(c.url(k), creds(), { method: 'GET', path: 'v3/decommission/status' })).json();
      expect(shapeMismatches(decom, fixture('decommission-status'))).toEqual([]);
      const reb = (await admin(c.url(k), creds(), { method: 'GET', path: 'v3/rebalance/status' })).json();
      expect(shapeMismatches(reb, fixture('rebalance-status'))).toEqual([]);
    }
    const snap = (await admin(c.url(2), creds(), { method: 'GET', path: 'v4/cluster/snapshot' })).json() as ClusterSnapshot;
    expect(snap.summary).toMatchObject({ nodes: 4, nodesOnline: 4, pools: 2, sets: 2, drives: 12, drivesOnline: 12 });
    expect(snap.nodes.map((n) => [n.id, n.leaderOfPools, n.drives, n.self])).toEqual([
      [c.url(1).slice(7), [0], 2, false],
      [c.url(2).slice(7), [], 2, true],
      [c.url(3).slice(7), [1], 4, false],
      [c.url(4).slice(7), [], 4, false],
    ]);
    const info = (await admin(c.url(4), creds(), { method: 'GET', path: 'v3/info' })).json() as ServerInfoMessage;
    expect(info.servers.map((s) => [s.endpoint, s.state, s.drives.length])).toEqual([
      [c.url(1).slice(7), 'online', 2],
      [c.url(2).slice(7), 'online', 2],
      [c.url(3).slice(7), 'online', 4],
      [c.url(4).slice(7), 'online', 4],
    ]);
    expect(info.backend).toMatchObject({ onlineDisks: 12, offlineDisks: 0, totalSets: [1, 1], totalDrivesPerSet: [8, 4] });
  });

  it("background/jobs answers every node's jobs from that node's supervisor (peers over internode RPC)", async () => {
    const everyNode = [1, 2, 3, 4].map((k) => c.url(k).slice(7)).sort();
    for (const k of [1, 3]) {
      const r = (await admin(c.url(k), creds(), { method: 'GET', path: 'v4/background/jobs' })).json() as { nodes: { node: string; answered: boolean; jobs: { name: string; state: string }[] }[] };
      expect(r.nodes.map((n) => n.node).sort()).toEqual(everyNode);
      for (const n of r.nodes) {
        expect(n.answered, n.node).toBe(true);
        expect(n.jobs.map((j) => j.name)).toEqual(
          expect.arrayContaining(['audit-log', 'drive-probe', 'data-movement', 'heal-background', 'heal-sequences', 'drive-monitor', 'scanner', 'notify', 'replication', 'bucket-sync', 'iam-refresh', 'capacity-sampling', 'lock-sweep', 'peer-heartbeat', 'cluster-health']),
        );
        for (const j of n.jobs) expect(['running', 'idle'], `${n.node} ${j.name} is ${j.state}`).toContain(j.state);
      }
    }
  });

  it('forwards a pool mutation to the pool leader and relays its answer unchanged', async () => {
    const q = { pool: c.volumes[1]! };
    // Node 1 does not lead pool 1 (node 3 does): the clear runs on node 3.
    const viaNode1 = await admin(c.url(1), creds(), { method: 'POST', path: 'v3/pools/clear', query: q });
    expect(viaNode1.status, viaNode1.body).toBe(200);
    expect(viaNode1.headers['x-svc-admin-node']).toBe(c.url(3).slice(7));
    expect(await c.logs(3)).toMatch(new RegExp(`"event":"admin_mutation".*"forwardedFrom":"127\\.0\\.0\\.1:${c.port}"`));
    expect(await c.logs(1)).toContain('"event":"admin_forward"');
    // A refusal decided by the leader comes back as the leader wrote it.
    const cancelVia2 = await admin(c.url(2), creds(), { method: 'POST', path: 'v3/pools/cancel', query: q });
    const cancelAt3 = await admin(c.url(3), creds(), { method: 'POST', path: 'v3/pools/cancel', query: q });
    expect(cancelVia2.status).toBe(400);
    expect(cancelVia2.headers['x-svc-admin-node']).toBe(c.url(3).slice(7));
    const a = JSON.parse(cancelVia2.body) as Record<string, string>;
    const b = JSON.parse(cancelAt3.body) as Record<string, string>;
    expect([a['Code'], a['Message'], a['Resource']]).toEqual([b['Code'], b['Message'], b['Resource']]);
    // A pool led by the receiving node is not forwarded.
    const local = await admin(c.url(1), creds(), { method: 'POST', path: 'v3/pools/clear', query: { pool: '0', 'by-id': 'true' } });
    expect(local.status).toBe(200);
    expect(local.headers['x-svc-admin-node']).toBe(c.url(1).slice(7));
    // Parameters are refused by the receiving node before any forward.
    const bad = await admin(c.url(1), creds(), { method: 'POST', path: 'v3/pools/clear', query: { pool: '1', 'by-id': 'maybe' } });
    expect(bad.status).toBe(400);
    expect(bad.headers['x-svc-admin-node']).toBe(c.url(1).slice(7));
  });

  it('fails fast with a clear error when the pool leader is down, and keeps answering everything else', async () => {
    await c.stop(3);
    const q = { pool: '1', 'by-id': 'true' };
    for (let attempt = 0; attempt < 2; attempt++) {
      const t0 = Date.now();
      const res = await admin(c.url(1), creds(), { method: 'POST', path: 'v3/pools/clear', query: q });
      const took = Date.now() - t0;
      expect(res.status, res.body).toBe(503);
      expect(res.headers['retry-after']).toBe('5');
      const e = JSON.parse(res.body) as { Code: string; Message: string };
      expect(e.Code).toBe('XSvcAdminLeaderUnreachable');
      expect(e.Message).toContain(c.url(3).slice(7));
      expect(e.Message).toContain('nothing was changed');
      expect(took).toBeLessThan(3_000);
    }
    // Pool 0 is led by node 1, which is up: a mutation sent to node 2 is forwarded and succeeds.
    const ok = await admin(c.url(2), creds(), { method: 'POST', path: 'v3/pools/clear', query: { pool: '0', 'by-id': 'true' } });
    expect(ok.status).toBe(200);
    expect(ok.headers['x-svc-admin-node']).toBe(c.url(1).slice(7));
    // Read-only routes still answer and show what is down.
    const snap = (await admin(c.url(1), creds(), { method: 'GET', path: 'v4/cluster/snapshot' })).json() as ClusterSnapshot;
    expect(snap.nodes.find((n) => n.id === c.url(3).slice(7))?.state).toBe('offline');
    expect(snap.summary).toMatchObject({ drivesOnline: 8, drivesOffline: 4 });
    const info = (await admin(c.url(2), creds(), { method: 'GET', path: 'v3/info' })).json() as ServerInfoMessage;
    expect(info.servers.find((s) => s.endpoint === c.url(3).slice(7))?.state).toBe('offline');
    const bg = (await admin(c.url(4), creds(), { method: 'POST', path: 'v3/background-heal/status' })).json() as { offline_nodes: string[] };
    expect(bg.offline_nodes).toEqual([c.url(3).slice(7)]);
    const list = await admin(c.url(4), creds(), { method: 'GET', path: 'v3/pools/list' });
    expect(list.status).toBe(200);
  });

  it('answers the snapshot on a node that starts without quorum (degraded), and 503 with Retry-After for pool routes', async () => {
    for (const k of [1, 2, 4]) await c.stop(k);
    await c.start(1);
    await c.waitLive(1);
    const snap = await admin(c.url(1), creds(), { method: 'GET', path: 'v4/cluster/snapshot' });
    expect(snap.status, snap.body).toBe(200);
    const body = snap.json() as ClusterSnapshot;
    expect(body.readiness.ready).toBe(false);
    expect(body.readiness.degradedReasons).toContain('storage_quorum_unavailable');
    expect(body.summary).toMatchObject({ nodesOnline: 1, drivesOnline: 2 });
    expect(body.pools.map((p) => p.status)).toEqual(['unknown', 'unknown']);
    const caps = await admin(c.url(1), creds(), { method: 'GET', path: 'v4/runtime/capabilities' });
    expect(caps.status).toBe(200);
    // No OTLP endpoint configured: nothing exported, and the capabilities say so.
    expect((caps.json() as { telemetry: unknown }).telemetry).toEqual({ otlpExport: false, signals: { metrics: false, traces: false, logs: false } });
    const list = await admin(c.url(1), creds(), { method: 'GET', path: 'v3/pools/list' });
    expect(list.status).toBe(503);
    expect(list.headers['retry-after']).toBe('5');
    expect((JSON.parse(list.body) as { Code: string }).Code).toBe('ServiceUnavailable');
  });
});
