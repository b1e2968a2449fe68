/**
 * The `svc` admin client, run as the real binary (node/bin/svc.js) against a
 * real two-pool `svc server`: aliases (file mode 0600) and environment
 * targets, readable tables with units, `--json` that parses, and the exit
 * codes 0 (ok), 1 (the server said no), 2 (usage), 3 (unreachable).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MetricsHistoryReport, PoolStatus } from '../src/object/admin/types.ts';
import { startTwoPoolServer, type TwoPoolServer } from './helpers/admin.ts';
import { type CommandRun, freePort, runSvcCommand } from './svc-process.ts';
import { keepAliveHandler } from './helpers/s3-client.ts';

let s: TwoPoolServer;
let home: string;
beforeAll(async () => {
  s = await startTwoPoolServer();
  home = mkdtempSync(join(tmpdir(), 'svc-cli-home-'));
}, 60_000);
afterAll(async () => {
  await s?.stop();
  rmSync(home, { recursive: true, force: true });
});

function svc(args: string[], env: Record<string, string> = {}): Promise<CommandRun> {
  return runSvcCommand(args, { HOME: home, ...env });
}

describe('svc admin client (real binary)', () => {
  it('svc alias set writes $HOME/.svc/config.json with mode 0600', async () => {
    const r = await svc(['alias', 'set', 'lab', s.url, s.creds.accessKey, s.creds.secretKey]);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain('Alias "lab" set');
    expect(statSync(join(home, '.svc', 'config.json')).mode & 0o777).toBe(0o600);
    expect(statSync(join(home, '.svc')).mode & 0o777).toBe(0o700);
    const list = await svc(['alias', 'list']);
    expect(list.out).toContain('lab');
    expect(list.out).not.toContain(s.creds.secretKey);
  });

  it('svc pool list prints an aligned table with units; --json parses', async () => {
    const r = await svc(['pool', 'list', 'lab']);
    expect(r.code, r.err).toBe(0);
    for (const h of ['ID', 'POOL', 'STATUS', 'DRIVES', 'USED', 'SIZE', 'USED %', 'LEADER']) expect(r.out).toContain(h);
    expect(r.out).toContain(s.pools[0]);
    expect(r.out).toContain(s.pools[1]);
    expect(r.out).toMatch(/\d+(\.\d)? (GiB|TiB|MiB)/);
    expect(r.out).toMatch(/\d+(\.\d)? %/);
    expect(r.out).toContain('4/4');
    // Columns line up: every table line has the same width.
    const lines = r.out.trimEnd().split('\n');
    expect(new Set(lines.map((l) => l.length)).size).toBe(1);
    const j = await svc(['pool', 'list', 'lab', '--json']);
    const pools = JSON.parse(j.out) as PoolStatus[];
    expect(pools.map((p) => p.cmdline)).toEqual(s.pools);
  });

  it('svc admin info prints servers, drives online/offline and usage; --json parses', async () => {
    const r = await svc(['admin', 'info', 'lab']);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain(`127.0.0.1:${s.run.port}`);
    expect(r.out).toContain('8/8');
    expect(r.out).toMatch(/8 drive\(s\) online, 0 offline/);
    expect(r.out).toMatch(/Usable capacity: [\d.]+ \w+ used of [\d.]+ \w+ \(\d+(\.\d)? %\)/);
    for (let d = 1; d <= 4; d++) expect(r.out).toContain(join(s.base, 'p2', `d${d}`));
    const j = JSON.parse((await svc(['admin', 'info', 'lab', '--json'])).out) as { servers: { drives: unknown[] }[]; backend: { onlineDisks: number } };
    expect(j.servers[0]!.drives).toHaveLength(8);
    expect(j.backend.onlineDisks).toBe(8);
  });

  it('svc decommission status prints a table; --json parses; --watch on an idle cluster prints once and ends', async () => {
    const r = await svc(['decommission', 'status', 'lab']);
    expect(r.code, r.err).toBe(0);
    for (const h of ['ID', 'POOL', 'STATUS', 'PROGRESS', 'OBJECTS', 'MOVED', 'RATE', 'ETA']) expect(r.out).toContain(h);
    expect(r.out).toContain(s.pools[1]);
    const j = JSON.parse((await svc(['decommission', 'status', 'lab', '--json'])).out) as { pools: { decommissionInfo: object }[] };
    expect(j.pools).toHaveLength(2);
    const one = JSON.parse((await svc(['decommission', 'status', 'lab', '1', '--by-id', '--json'])).out) as { pools: { id: number }[] };
    expect(one.pools.map((p) => p.id)).toEqual([1]);
    const w = await svc(['decommission', 'status', 'lab', '--watch', '--interval', '0.2']);
    expect(w.code).toBe(0);
    expect(w.out.match(/STATUS/g)).toHaveLength(1);
  });

  it('the environment names the server when no alias is given', async () => {
    const env = { SVC_ENDPOINT: s.url, SVC_ACCESS_KEY: s.creds.accessKey, SVC_SECRET_KEY: s.creds.secretKey };
    const r = await svc(['pool', 'status', s.pools[0], '--json'], env);
    expect(r.code, r.err).toBe(0);
    expect((JSON.parse(r.out) as PoolStatus).id).toBe(0);
    const reb = await svc(['rebalance', 'status'], env);
    expect(reb.code).toBe(0);
    expect(reb.out).toContain('idle');
    expect((await svc(['expand', 'status'], env)).out).toBe(reb.out);
    expect((await svc(['admin', 'snapshot'], env)).out).toContain('8/8 drives online');
    expect((await svc(['ping'], env)).code).toBe(0);
    expect((await svc(['ready', 'lab'])).out).toContain('"ready":true');
  });

  it('svc admin metrics prints the last minutes of S3 traffic as a table that adds up; --json is the server\'s points', async () => {
    const s3 = new S3Client({ requestHandler: keepAliveHandler(), endpoint: s.url, region: 'us-east-1', forcePathStyle: true, maxAttempts: 1, credentials: { accessKeyId: s.creds.accessKey, secretAccessKey: s.creds.secretKey } });
    const body = randomBytes(300 * 1024);
    await s3.send(new CreateBucketCommand({ Bucket: 'metrics-cli' }));
    await s3.send(new PutObjectCommand({ Bucket: 'metrics-cli', Key: 'a.bin', Body: body }));
    expect((await (await s3.send(new GetObjectCommand({ Bucket: 'metrics-cli', Key: 'a.bin' }))).Body!.transformToByteArray()).length).toBe(body.length);
    const missing = await s3.send(new GetObjectCommand({ Bucket: 'metrics-cli', Key: 'missing' })).then(() => '', (e: { name?: string }) => e.name);
    expect(missing).toBe('NoSuchKey');
    s3.destroy();
    const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);
    const points = async () => {
      const j = await svc(['admin', 'metrics', 'lab', '--minutes', '10', '--json']);
      expect(j.code, j.err).toBe(0);
      return JSON.parse(j.out) as MetricsHistoryReport;
    };
    const before = await points();
    expect(before.stepSeconds).toBe(60);
    expect(before.counters.s3Requests).toHaveLength(10);
    expect(before.nodes).toEqual([{ node: expect.stringContaining(String(s.run.port)), answered: true }]);
    expect(sum(before.counters.s3Requests)).toBeGreaterThanOrEqual(4);
    expect(sum(before.counters.s3ClientErrors)).toBeGreaterThanOrEqual(1);
    expect(sum(before.counters.s3BytesIn)).toBeGreaterThanOrEqual(body.length);
    expect(sum(before.counters.s3BytesOut)).toBeGreaterThanOrEqual(body.length);

    const t = await svc(['admin', 'metrics', 'lab', '--minutes', '10', '--step', '1']);
    const after = await points();
    expect(t.code, t.err).toBe(0);
    expect(t.out).toMatch(/^Cluster activity from \d{4}-\d\d-\d\d \d\d:\d\d to .* UTC \(10 minutes, the last one in progress\), 1 minute a row; 1 of 1 node answered\n/);
    const lines = t.out.trimEnd().split('\n');
    const cells = (l: string) => l.split('│').map((c) => c.trim()).filter((c) => c !== '');
    const table = lines.filter((l) => /^[│┌├└]/.test(l));
    expect(new Set(table.map((l) => l.length)).size).toBe(1);
    expect(cells(table.find((l) => l.includes('TIME'))!)).toEqual(['TIME (UTC)', 'REQUESTS', '4XX', '5XX', 'BYTES IN', 'BYTES OUT', 'USED', 'RAW TOTAL', 'HEAL TASKS', 'HEAL FAILED', 'SCANNED']);
    const rows = table.filter((l) => /^│ \d\d:\d\d /.test(l)).map(cells);
    expect(rows).toHaveLength(10);
    // the rows add up to the totals, which lie between the server's counts before and after
    const totals = /^Totals: (\d+) S3 requests \((\d+) answered 4xx, (\d+) answered 5xx\); ([\d.]+ \w+) in, ([\d.]+ \w+) out;/m.exec(t.out);
    expect(totals, t.out).not.toBeNull();
    const [requests, clientErrors] = [Number(totals![1]), Number(totals![2])];
    expect(sum(rows.map((r) => Number(r[1])))).toBe(requests);
    expect(sum(rows.map((r) => Number(r[2])))).toBe(clientErrors);
    expect(requests).toBeGreaterThanOrEqual(sum(before.counters.s3Requests));
    expect(requests).toBeLessThanOrEqual(sum(after.counters.s3Requests));
    expect(clientErrors).toBeGreaterThanOrEqual(1);
    expect(totals![4]).toMatch(/KiB|MiB/);
    expect(t.out).toMatch(/^Busiest minute: \d\d:\d\d, \d+ requests \([\d.]+ a second\)$/m);
    expect(t.out).toMatch(/^Raw capacity: [\d.]+ \w+ used of [\d.]+ \w+ \([\d.]+ %\) at \d\d:\d\d$/m);
    expect(t.out).not.toContain('Not answering');
    // the default row width keeps an hour to 5-minute rows (12, or 13 where the hour is not on the clock's five)
    const hour = await svc(['admin', 'metrics', 'lab']);
    expect(hour.out).toContain('(60 minutes, the last one in progress), 5 minutes a row');
    expect(hour.out.split('\n').filter((l) => /^│ \d\d:\d\d-\d\d:\d\d /.test(l)).length).toBeGreaterThanOrEqual(12);
    for (const bad of [['--minutes', '0'], ['--minutes', '361'], ['--step', 'x']]) {
      const r = await svc(['admin', 'metrics', 'lab', ...bad]);
      expect(r.code).toBe(2);
      expect(r.err).toMatch(/--(minutes|step) is a whole number from 1 to 360/);
    }
  });

  it('exit 1 when the server says no, with the code, message and next step', async () => {
    const unknown = await svc(['pool', 'status', 'lab', '7', '--by-id']);
    expect(unknown.code).toBe(1);
    expect(unknown.err).toMatch(/InvalidArgument: specified pool index "7" not found/);
    const indexWithoutFlag = await svc(['pool', 'status', 'lab', '0']);
    expect(indexWithoutFlag.code).toBe(1);
    expect(indexWithoutFlag.err).toContain('next: name the pool as `svc pool list` shows it, or give its index with --by-id');
    const json = await svc(['pool', 'status', 'lab', '7', '--by-id', '--json']);
    expect(json.code).toBe(1);
    expect((JSON.parse(json.out) as { Code: string }).Code).toBe('InvalidArgument');
    const start = await svc(['decommission', 'start', 'lab', '0,1', '--by-id']);
    expect(start.code).toBe(1);
    expect(start.err).toContain('XSvcDecommissionNotAllowed: decommissioning every pool is not allowed: at least one active pool must remain');
    const cancel = await svc(['decommission', 'cancel', 'lab', s.pools[1]]);
    expect(cancel.code).toBe(1);
    expect(cancel.err).toContain('nothing to cancel');
    const clear = await svc(['decommission', 'clear', 'lab', s.pools[1], '--json']);
    expect(clear.code).toBe(0);
    expect(JSON.parse(clear.out)).toMatchObject({ status: 'success' });
    // Both pools equally full (one disk): the rebalance completes at once, having moved nothing, and says so.
    const reb = await svc(['rebalance', 'start', 'lab']);
    expect(reb.code, reb.err).toBe(0);
    expect(reb.out).toMatch(/^Rebalance [0-9a-f-]{36} started/);
    const rebStatus = await svc(['rebalance', 'status', 'lab']);
    expect(rebStatus.out).toContain('completed');
    expect(rebStatus.out).toContain('nothing to move');
    expect((await svc(['rebalance', 'start', 'lab', 'extra'])).code).toBe(2);
    expect((await svc(['rebalance', 'stop', 'lab'])).code).toBe(0);
    const heal = await svc(['heal', 'start', 'lab', '--scan-mode', 'deep', '--dry-run', '--watch', '--interval', '0.2']);
    expect(heal.code, heal.err).toBe(0);
    expect(heal.out).toMatch(/Heal started: client token [0-9a-f-]{36}:0/);
    expect(heal.out).toMatch(/State[ │]+finished/);
    expect(heal.out).toMatch(/Settings[ │]+dry run, scan deep/);
    const noBucket = await svc(['heal', 'start', 'lab', '--bucket', 'photos', '--dry-run']);
    expect(noBucket.code).toBe(0);
    const t = /client token (\S+)/.exec(noBucket.out)![1]!;
    const st = await svc(['heal', 'status', 'lab', '--bucket', 'photos', '--client-token', t, '--watch', '--interval', '0.2']);
    expect(st.code, st.err).toBe(0);
    expect(st.out).toMatch(/State[ │]+finished/);
    expect(st.out).toMatch(/absent|no such bucket|No item needed attention/);
    const token = await svc(['heal', 'status', 'lab', '--client-token', 'abc']);
    expect(token.code).toBe(1);
    expect(token.err).toContain('XSvcHealInvalidClientToken');
    // A wrong secret is refused before it is saved; --no-verify saves it anyway.
    const refused = await svc(['alias', 'set', 'badkey', s.url, s.creds.accessKey, 'wrong-secret']);
    expect(refused.code).toBe(1);
    expect(refused.err).toContain('SignatureDoesNotMatch');
    expect(refused.err).toContain('alias "badkey" not saved');
    expect(refused.err).toContain('next: check the keys of alias "badkey"');
    expect((await svc(['alias', 'list'])).out).not.toContain('badkey');
    expect((await svc(['alias', 'set', 'badkey', s.url, s.creds.accessKey, 'wrong-secret', '--no-verify'])).code).toBe(0);
    const denied = await svc(['pool', 'list', 'badkey']);
    expect(denied.code).toBe(1);
    expect(denied.err).toContain('SignatureDoesNotMatch');
    expect(denied.err).toContain('next: check the keys of alias "badkey"');
    // Keys that are right but not allowed: the next step is a permission, not new keys.
    expect((await svc(['admin', 'user', 'add', 'lab', 'reader', 'reader-secret-key'])).code).toBe(0);
    expect((await svc(['admin', 'policy', 'attach', 'lab', 'readonly', '--user', 'reader'])).code).toBe(0);
    // Keys the server accepts are saved, whatever the identity may do.
    const reader = await svc(['alias', 'set', 'reader', s.url, 'reader', 'reader-secret-key']);
    expect(reader.code, reader.err).toBe(0);
    const notAllowed = await svc(['admin', 'info', 'reader']);
    expect(notAllowed.code).toBe(1);
    expect(notAllowed.err).toContain('AccessDenied');
    expect(notAllowed.err).toContain('next: the keys of alias "reader" are valid but not allowed this: use the root credential, or attach a policy');
    expect(notAllowed.err).not.toContain('check the keys');
  });

  it('the follow-up command a start prints runs as printed, with the alias or with the environment', async () => {
    const followUp = (out: string) => {
      const line = /follow it with: (svc .*)$/im.exec(out)?.[1];
      expect(line, out).toBeDefined();
      return line!.split(' ').slice(1);
    };
    const heal = await svc(['heal', 'start', 'lab', '--bucket', 'photos', '--dry-run']);
    expect(heal.code, heal.err).toBe(0);
    const healArgs = followUp(heal.out);
    expect(healArgs.slice(0, 3)).toEqual(['heal', 'status', 'lab']);
    const healStatus = await svc(healArgs);
    expect(healStatus.code, healStatus.err).toBe(0);
    expect(healStatus.out).toMatch(/State[ │]+finished/);

    const reb = await svc(['rebalance', 'start', 'lab']);
    expect(reb.code, reb.err).toBe(0);
    const rebArgs = followUp(reb.out);
    expect(rebArgs).toEqual(['rebalance', 'status', 'lab', '--watch']);
    const rebStatus = await svc(rebArgs);
    expect(rebStatus.code, rebStatus.err).toBe(0);
    expect(rebStatus.out).toContain('completed');

    // The environment's server: the hint names no alias, and runs under the same environment.
    const env = { SVC_ENDPOINT: s.url, SVC_ACCESS_KEY: s.creds.accessKey, SVC_SECRET_KEY: s.creds.secretKey };
    const envHeal = await svc(['heal', 'start', '--dry-run'], env);
    expect(envHeal.code, envHeal.err).toBe(0);
    const envArgs = followUp(envHeal.out);
    expect(envArgs.slice(0, 3)).toEqual(['heal', 'status', '--client-token']);
    expect((await svc(envArgs, env)).code).toBe(0);
  });

  it('exit 2 for usage problems, 3 when the server is unreachable', async () => {
    const none = await svc(['pool', 'list']);
    expect(none.code).toBe(2);
    expect(none.err).toContain('svc alias set NAME URL ACCESS_KEY SECRET_KEY');
    expect((await svc(['pool', 'list', 'nosuchalias'])).code).toBe(2);
    expect((await svc(['pool', 'status', 'lab'])).code).toBe(2);
    const bogus = await svc(['pool', 'list', 'lab', '--bogus']);
    expect(bogus.code).toBe(2);
    expect(bogus.err).toBe("error: unknown option '--bogus'\n(add --help for the command's usage)\n");
    const unknown = await svc(['admin', 'usr', 'list', 'lab']);
    expect(unknown.code).toBe(2);
    expect(unknown.err).toContain("(add --help for the command's usage)");
    expect((await svc(['heal', 'start', 'lab', '--scan-mode', 'fast'])).code).toBe(2);
    expect((await svc(['alias', 'set', '9bad', s.url, 'a', 'b'])).code).toBe(2);
    const noBucket = await svc(['replicate', 'ls', 'lab']);
    expect(noBucket.code).toBe(2);
    expect(noBucket.err).toContain('name the bucket too: lab/BUCKET');
    const port = await freePort();
    const unsaved = await svc(['alias', 'set', 'gone', `http://127.0.0.1:${port}`, 'a', 'b']);
    expect(unsaved.code).toBe(3);
    expect(unsaved.err).toMatch(/alias "gone" not saved: cannot reach .*connection refused/);
    expect(unsaved.err).toContain('--no-verify saves the alias without asking the server');
    expect((await svc(['alias', 'set', 'gone', `http://127.0.0.1:${port}`, 'a', 'b', '--no-verify'])).code).toBe(0);
    const gone = await svc(['admin', 'info', 'gone']);
    expect(gone.code).toBe(3);
    expect(gone.err).toContain('connection refused');
    expect(gone.err).toContain('svc ping gone');
    expect((await svc(['ping', 'gone'])).code).toBe(3);
    expect((await svc(['--help'])).code).toBe(0);
  });
});
