/**
 * The console of one node of a 4-node cluster (mount namespaces, one pool of
 * 4 × 2 drives): it shows every node and every drive, and a node that goes
 * away as offline with its drives, the cluster degraded but ready; its
 * bucket pages work through any node's console for data written on another;
 * its Metrics page graphs requests, errors and bytes served by the other
 * nodes (the cluster's measurements, added together).
 */
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HAVE_CHROMIUM, launchBrowser, shot, signInAs } from './helpers/browser.ts';
import type { OverviewResponse, PoolsResponse } from '../src/api/console/wire.ts';
import { canUseMountNamespaces, freePort, TestCluster } from './helpers/cluster.ts';
import { ConsoleClient } from './helpers/console.ts';

const enabled = canUseMountNamespaces();
if (!enabled) console.log('skipped: no mount namespaces (needs root and unshare)');

let c: TestCluster;
let consoleRoot: string;
beforeAll(async () => {
  if (!enabled) return;
  c = await TestCluster.create({ nodes: 4, drivesPerNode: 2 });
  const consolePort = await freePort();
  // node 1 serves a console; the others run without one
  await c.start(1, { SVC_CONSOLE_ENABLE: 'true', SVC_CONSOLE_ADDRESS: `127.0.0.1:${consolePort}` });
  for (let k = 2; k <= 4; k++) await c.start(k);
  for (let k = 1; k <= 4; k++) await c.waitReady(k, 60_000);
  consoleRoot = `http://127.0.0.1:${consolePort}/svc/console/`;
}, 120_000);
afterAll(async () => {
  await c?.close();
});

describe.skipIf(!enabled)('console on a 4-node cluster', () => {
  it.skipIf(!HAVE_CHROMIUM)("graphs the whole cluster's requests, errors and bytes over time (Chromium), from traffic served by other nodes", async () => {
    // traffic only through nodes 2 and 3: node 1's console must gather it from them
    const mib = Buffer.alloc(1024 * 1024, 7);
    await c.s3(2).send(new CreateBucketCommand({ Bucket: 'metered' }));
    await c.s3(2).send(new PutObjectCommand({ Bucket: 'metered', Key: 'a.bin', Body: mib }));
    await c.s3(3).send(new PutObjectCommand({ Bucket: 'metered', Key: 'b.bin', Body: mib }));
    for (const [k, key] of [[2, 'b.bin'], [3, 'a.bin']] as const) await (await c.s3(k).send(new GetObjectCommand({ Bucket: 'metered', Key: key }))).Body!.transformToByteArray();
    const missing = (k: number, i: number) => c.s3(k).send(new GetObjectCommand({ Bucket: 'metered', Key: `missing-${i}` })).then(() => 'found', (e: { name?: string }) => e.name);
    for (let i = 0; i < 5; i++) expect(await missing(2, i)).toBe('NoSuchKey');
    for (let i = 0; i < 4; i++) expect(await missing(3, i)).toBe('NoSuchKey');

    const browser = await launchBrowser();
    try {
      const page = browser.page;
      await signInAs(page, consoleRoot, c.accessKey, c.secretKey);
      await page.click('#nav-metrics');
      await page.locator('#chart-requests').waitFor();
      expect(await page.locator('#metrics-nodes').innerText()).toContain('Measured by all 4 nodes');
      // the 9 refusals happened on nodes 2 and 3 only; the console's own calls are admin calls, not S3
      expect(await page.locator('#chart-errors .metric-summary').innerText()).toMatch(/^9 client errors \(4xx\) and 0 server errors \(5xx\)/);
      const bytes = await page.locator('#chart-throughput .metric-summary').innerText();
      expect(bytes).toMatch(/^2\.00 MiB received and 2\.\d\d MiB sent/);
      const requests = Number(/^(\d+) requests/.exec(await page.locator('#chart-requests .metric-summary').innerText())?.[1]);
      expect(requests).toBeGreaterThanOrEqual(1 + 2 + 2 + 9);
      // one point a minute for the hour, the line rising where the refusals were: drawn from the data
      const points = (await page.locator('#chart-errors [data-series^="client"] polyline').getAttribute('points'))!.split(' ');
      expect(points).toHaveLength(60);
      const ys = points.map((p) => Number(p.split(',')[1]));
      expect(Math.min(...ys.slice(-2))).toBeLessThan(ys[0]!);
      expect(await page.locator('#chart-capacity .metric-summary').innerText()).toMatch(/ of .* at the last sample/);
      // a wider range: the same totals over more points
      await page.selectOption('#metrics-range', '360');
      await expect.poll(async () => (await page.locator('#chart-errors [data-series^="client"] polyline').getAttribute('points'))?.split(' ').length).toBe(360);
      expect(await page.locator('#chart-errors .metric-summary').innerText()).toMatch(/^9 client errors/);
      await shot(page, 'cluster', 'metrics');
    } finally {
      await browser.close();
    }
  }, 120_000);

  it('shows every node and drive, then a node gone: offline, its drives offline, the cluster degraded', async () => {
    const cc = new ConsoleClient(consoleRoot);
    expect((await cc.signIn(c.accessKey, c.secretKey)).status).toBe(200);
    const o = (await cc.call('GET', 'api/overview')).json<OverviewResponse>();
    expect(o.nodes.map((n) => [n.id, n.state, n.drives])).toEqual([1, 2, 3, 4].map((k) => [`127.0.0.${k}:${c.port}`, 'online', 2]));
    expect(o.nodes.find((n) => n.self)?.id).toBe(`127.0.0.1:${c.port}`);
    expect(o.drives).toEqual({ total: 8, online: 8, offline: 0, healing: 0 });
    expect(o.health.state).toBe('healthy');

    // data written through node 3 is browsed through node 1's console
    await cc.call('POST', 'api/buckets', { body: { name: 'shared' } });
    await c.s3(3).send(new PutObjectCommand({ Bucket: 'shared', Key: 'from-node-3.txt', Body: 'hello from node 3' }));
    expect((await cc.call('GET', 'api/buckets/shared/download?key=from-node-3.txt')).text).toBe('hello from node 3');

    await c.stop(4);
    let after: OverviewResponse | undefined;
    for (let i = 0; i < 100; i++) {
      after = (await cc.call('GET', 'api/overview')).json<OverviewResponse>();
      if (after.nodes.find((n) => n.id.startsWith('127.0.0.4:'))?.state === 'offline') break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(after!.nodes.find((n) => n.id.startsWith('127.0.0.4:'))).toMatchObject({ state: 'offline', drivesOffline: 2 });
    expect(after!.health.state).toBe('degraded');
    expect(after!.health.problems[0]).toBe(`1 node offline: 127.0.0.4:${c.port}.`);
    expect(after!.readiness.ready).toBe(true);
    const pools = (await cc.call('GET', 'api/pools')).json<PoolsResponse>();
    const drives = pools.pools[0]!.layout.sets.flatMap((s) => s.drives);
    expect(drives.filter((d) => d.state === 'offline').map((d) => d.node)).toEqual([`127.0.0.4:${c.port}`, `127.0.0.4:${c.port}`]);
  }, 120_000);
});
