/**
 * Growing a deployment and rebalancing it, through a real `svc server`
 * (one node, tmpfs drives) with @aws-sdk/client-s3 and the real `svc`
 * client: one full pool, restarted with a second, empty pool; `svc expand
 * start` (the rebalance group's alias) returns a UUID; while it runs the
 * status shows objects, bytes, a rate and an ETA; afterwards the pools'
 * fill is within 10 % of each other and every version reads back; a
 * restart leaves the finished rebalance as it was.
 */
import { CreateBucketCommand, PutBucketVersioningCommand } from '@aws-sdk/client-s3';
import { afterAll, describe, expect, it } from 'vitest';
import type { PoolStatus, RebalanceStatus } from '../src/object/admin/types.ts';
import { objectJournals } from './helpers/movement.ts';
import { MovementServer } from './helpers/movement-server.ts';
import { canMountTmpfs } from './helpers/tmpfs.ts';
import { Workload } from './helpers/workload.ts';
import { runSvcCommand } from './svc-process.ts';

const MiB = 1024 * 1024;
const enabled = canMountTmpfs();
if (!enabled) console.log('skipped: cannot mount tmpfs (needs root)');

let srv: MovementServer | undefined;
afterAll(async () => {
  await srv?.cleanup();
});

describe.skipIf(!enabled)('expansion then rebalance through a real svc server', () => {
  it('an empty pool added to a full one: the rebalance shows progress and ETA while it runs and ends within 10 % fill', { timeout: 240_000 }, async () => {
    // Enough data that the rebalance outlasts a few of its 2 s progress saves (status shows saved progress).
    srv = await MovementServer.create([
      { name: 'p1', drives: 4, driveBytes: 128 * MiB },
      { name: 'p2', drives: 4, driveBytes: 128 * MiB },
    ]);
    const s = srv;
    await s.start([s.volumes[0]!]);
    let s3 = s.s3();
    await s3.send(new CreateBucketCommand({ Bucket: 'ver' }));
    await s3.send(new PutBucketVersioningCommand({ Bucket: 'ver', VersioningConfiguration: { Status: 'Enabled' } }));
    await s3.send(new CreateBucketCommand({ Bucket: 'plain' }));
    const w = new Workload(() => [s3]);
    await w.seedStable(1800, (i) => 40_000 + (i % 7) * 5000);
    for (let i = 0; i < 20; i++) await w.putVer(s3, `doc${i % 5}`, 40_000 + i);

    // The pool list grows by one argument, as an operator does.
    await s.stop();
    await s.start();
    s3 = s.s3();
    const env = { SVC_ENDPOINT: s.url, SVC_ACCESS_KEY: s.creds.accessKey, SVC_SECRET_KEY: s.creds.secretKey };
    const fills = async () => ((await s.admin({ method: 'GET', path: 'v3/pools/list' })).json() as PoolStatus[]).map((p) => p.used);
    const [full, empty] = await fills();
    expect(full! - empty!).toBeGreaterThan(0.3);

    const start = await runSvcCommand(['expand', 'start'], env);
    expect(start.code, start.err).toBe(0);
    const id = /Rebalance ([0-9a-f-]{36}) started/.exec(start.out)?.[1];
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);

    // … │ active │ 44 % │ [███░…] 20 % │ 112 │ 4.8 MiB │ 2.3 MiB/s │ 2s │ 8s │
    const runningRow = /│ active +│ +[\d.]+ % │ \[.*\] +[\d.]+ % │ +[1-9]\d* │ +[\d.]+ (KiB|MiB) │ +[\d.]+ (KiB|MiB)\/s │ +[\d.]+(ms|s|m) │ +[\d.]+(ms|s|m|h) │/;
    // Two watchers at once: the JSON status every 50 ms, and the CLI (its own process, which takes
    // a while to start on a loaded machine) until it shows the run with progress and an ETA. Run
    // one after the other in one loop, a slow CLI start could swallow the whole run.
    let during: RebalanceStatus | undefined;
    let cliDuring = '';
    const watchJson = async (): Promise<RebalanceStatus> => {
      for (;;) {
        const st = await s.rebalanceStatus();
        if (st.status === 'running' && during === undefined && st.pools[0]!.progress.objects > 0 && st.pools[0]!.progress.eta > 0) during = st;
        if (st.status !== 'running') return st;
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    let finished = false;
    const watchCli = async (): Promise<void> => {
      while (!finished && cliDuring === '') {
        const out = (await runSvcCommand(['rebalance', 'status'], env)).out;
        const row = out.split('\n').find((l) => l.includes(s.volumes[0]!));
        if (out.includes(`Rebalance ${id}: running`) && row !== undefined && runningRow.test(row)) cliDuring = out;
      }
    };
    const cli = watchCli();
    const end = await watchJson().finally(() => {
      finished = true;
    });
    await cli;
    expect(during, 'a running status with progress and an ETA').toBeDefined();
    expect(during!.id).toBe(id);
    expect(during!.pools[0]).toMatchObject({ status: 'active', participating: true, stopping: false });
    expect(during!.pools[0]!.progress.bytes).toBeGreaterThan(0);
    expect(during!.pools[0]!.progress.elapsed).toBeGreaterThan(0);
    expect(during!.pools[1]).toMatchObject({ status: 'none', participating: false });
    expect(cliDuring, 'svc rebalance status while it runs: running, with progress, rate, elapsed and ETA').toContain(`Rebalance ${id}: running`);

    expect(end.status).toBe('completed');
    expect(end.pools[0]).toMatchObject({ status: 'completed', lastError: null });
    const [a, b] = await fills();
    expect(Math.abs(a! - b!)).toBeLessThan(0.1);
    expect((await objectJournals(s.roots(1)[0]!)).length).toBeGreaterThan(200);
    expect(await w.diff(s3)).toEqual([]);

    // A restart keeps the record and starts nothing.
    await s.stop();
    await s.start();
    const after = await s.rebalanceStatus();
    expect(after.status).toBe('completed');
    expect(after.id).toBe(id);
    expect(await w.diff(s.s3())).toEqual([]);
  });
});
