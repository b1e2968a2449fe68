import { CreateBucketCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
/**
 * Start-up of the real `svc server` process: fresh format, restart, and every
 * start-up error of the spec, checked by exit status and message.
 */

import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SERVER_OLD_SPACE_MB } from '../src/util/heap.ts';
import { DEFAULT_THREADPOOL_SIZE } from '../src/util/threadpool.ts';
import { freePort, NODE, REPO, runSvc, SVC, tempDir } from './svc-process.ts';
import { keepAliveHandler, resolveAllTo } from './helpers/s3-client.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function drives(n: number): string {
  const base = tempDir('startup');
  dirs.push(base);
  for (let i = 1; i <= n; i++) mkdirSync(join(base, `d${i}`));
  return base;
}
/** Threads of a running process (Linux). */
const threadCount = (pid: number) => readdirSync(`/proc/${pid}/task`).length;
const cmdline = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
const formatOf = (base: string, i: number) => JSON.parse(readFileSync(join(base, `d${i}`, '.svc.sys', 'format.json'), 'utf8'));

async function failing(args: string[], env: Record<string, string> = {}) {
  const run = await runSvc(args, env);
  const code = await run.exited;
  return { code, out: run.stdout(), err: run.stderr(), logs: run.logs() };
}

describe('svc server start-up', () => {
  it('formats four fresh drives, serves probes, restarts with the same deployment, shuts down cleanly', async () => {
    const base = drives(4);
    const run = await runSvc(['server', `${base}/d{1...4}`]);
    expect(await run.started).toBe(true);
    const formats = [1, 2, 3, 4].map((i) => formatOf(base, i));
    const id = formats[0].id;
    expect(formats.every((f) => f.id === id)).toBe(true);
    expect(new Set(formats.map((f) => f.erasure.this)).size).toBe(4);
    expect(formats[0].erasure).toMatchObject({ setCount: 1, setDriveCount: 4, driveCount: 4, distributionAlgo: 'SIPMOD+PARITY' });

    const url = `http://127.0.0.1:${run.port}`;
    expect((await fetch(`${url}/health`)).status).toBe(200);
    const ready = await fetch(`${url}/health/ready`);
    expect(ready.status).toBe(200);
    const body = (await ready.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ ready: true, status: 'ok', degradedReasons: [] });
    expect(Object.keys(body.details as object).sort()).toEqual(['iam', 'lock', 'storage']);
    expect((await fetch(`http://127.0.0.1:${run.consolePort}/svc/console/health`)).status).toBe(200);

    // the S3 API is wired to the erasure engine: a real client round trip
    const s3 = new S3Client({
      requestHandler: keepAliveHandler(),
      endpoint: url,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin' },
    });
    await s3.send(new CreateBucketCommand({ Bucket: 'startup' }));
    const payload = Buffer.alloc(300_000, 7);
    await s3.send(new PutObjectCommand({ Bucket: 'startup', Key: 'a/b.bin', Body: payload }));
    const got = await s3.send(new GetObjectCommand({ Bucket: 'startup', Key: 'a/b.bin' }));
    expect(Buffer.from(await got.Body!.transformToByteArray()).equals(payload)).toBe(true);
    s3.destroy();
    // file I/O ran on a worker pool sized for a storage node (util/threadpool.ts)
    expect(threadCount(run.child.pid!)).toBeGreaterThanOrEqual(DEFAULT_THREADPOOL_SIZE);
    // restarted in place with the server's heap options (util/heap.ts): the PID we spawned runs with them
    expect(cmdline(run.child.pid!)).toContain(`--initial-old-space-size=${SERVER_OLD_SPACE_MB}`);

    const events = run.logs().map((l) => l.event);
    for (const e of ['startup_storage_class', 'host_failure_data_unavailable', 'default_credentials', 'startup_local_disks', 'startup_lock_clients', 'startup_format_written', 'startup_format_quorum', 'startup_listening']) {
      expect(events).toContain(e);
    }
    expect(events).not.toContain('zero_redundancy');
    expect(events.indexOf('startup_storage_class')).toBeLessThan(events.indexOf('startup_local_disks'));
    // SPEC: local disks, lock clients, format quorum, in that order
    expect(events.indexOf('startup_local_disks')).toBeLessThan(events.indexOf('startup_lock_clients'));
    expect(events.indexOf('startup_lock_clients')).toBeLessThan(events.indexOf('startup_format_quorum'));
    expect(run.logs().find((l) => l.event === 'startup_lock_clients')?.distributed).toBe(true);
    expect(await run.stop()).toBe(0);

    // restart: reuses the format; health endpoints and console can be disabled
    const again = await runSvc(['server', `${base}/d{1...4}`], {
      SVC_HEALTH_ENDPOINT_ENABLE: 'false',
      SVC_CONSOLE_ENABLE: 'false',
      UV_THREADPOOL_SIZE: '5',
    });
    expect(await again.started).toBe(true);
    // an operator's own pool size wins
    expect(threadCount(again.child.pid!)).toBeLessThan(DEFAULT_THREADPOOL_SIZE);
    expect(formatOf(base, 3)).toEqual(formats[2]);
    expect(again.logs().find((l) => l.event === 'startup_format_quorum')?.deploymentId).toBe(id);
    expect(again.logs().map((l) => l.event)).not.toContain('startup_format_written');
    const h = await fetch(`http://127.0.0.1:${again.port}/health`);
    // with the probes off, /health is an ordinary anonymous S3 request: for bucket 'health', which does not exist
    expect(h.status).toBe(404);
    expect(await h.text()).toContain('<Code>NoSuchBucket</Code>');
    await expect(fetch(`http://127.0.0.1:${again.consolePort}/svc/console/health`)).rejects.toThrow();
    expect(await again.stop()).toBe(0);
  });

  it('restarting the same drives as another layout fails with PoolTopologyMismatch', async () => {
    const base = drives(8);
    const first = await runSvc(['server', `${base}/d{1...4}`]);
    expect(await first.started).toBe(true);
    expect(await first.stop()).toBe(0);
    const before = readFileSync(join(base, 'd1', '.svc.sys', 'format.json'), 'utf8');

    const wider = await failing(['server', `${base}/d{1...8}`]);
    expect(wider.code).toBe(1);
    expect(wider.err).toContain('PoolTopologyMismatch');
    expect(wider.logs.find((l) => l.event === 'startup_failed')?.code).toBe('PoolTopologyMismatch');
    expect(existsSync(join(base, 'd5', '.svc.sys'))).toBe(false);

    const pinned = await failing(['server', `${base}/d{1...4}`], { SVC_ERASURE_SET_DRIVE_COUNT: '2' });
    expect(pinned.code).toBe(1);
    expect(pinned.err).toContain('PoolTopologyMismatch');
    expect(readFileSync(join(base, 'd1', '.svc.sys', 'format.json'), 'utf8')).toBe(before);
  });

  it('a missing drive folder fails with VolumeNotFound and nothing is formatted', async () => {
    const base = drives(3);
    const r = await failing(['server', `${base}/d{1...4}`]);
    expect(r.code).toBe(1);
    expect(r.err).toContain('VolumeNotFound');
    expect(r.err).toContain(join(base, 'd4'));
    expect(existsSync(join(base, 'd4'))).toBe(false);
    expect(existsSync(join(base, 'd1', '.svc.sys'))).toBe(false);
  });

  it('SVC_STORAGE_CLASS_STANDARD=EC:3 on four drives stops before any disk is touched', async () => {
    const base = drives(4);
    const r = await failing(['server', `${base}/d{1...4}`], { SVC_STORAGE_CLASS_STANDARD: 'EC:3' });
    expect(r.code).toBe(1);
    expect(r.err).toContain('InvalidStorageClassConfig');
    expect(r.err).toContain('EC:3');
    for (let i = 1; i <= 4; i++) expect(existsSync(join(base, `d${i}`, '.svc.sys'))).toBe(false);
    expect(r.logs.map((l) => l.event)).not.toContain('startup_local_disks');
  });

  it('two pools where one lacks an ellipsis is a clear error', async () => {
    const base = drives(5);
    const r = await failing(['server', `${base}/d{1...4}`, `${base}/d5`]);
    expect(r.code).toBe(1);
    expect(r.err).toContain('InvalidTopology');
    expect(r.err).toContain('has no ellipsis');
  });

  it('a port in use logs "HTTP listener bind failed", says what to do and exits non-zero before touching a drive', async () => {
    const base = drives(4);
    const holder = await runSvc(['server', `${base}/d{1...4}`]);
    expect(await holder.started).toBe(true);
    const other = drives(4);
    const run = await runSvc(['server', `${other}/d{1...4}`], {}, { port: holder.port });
    const code = await run.exited;
    expect(code).not.toBe(0);
    expect(run.stdout()).toContain('HTTP listener bind failed');
    expect(run.logs().find((l) => l.event === 'http_listener_bind_failed')).toBeDefined();
    // It stopped before touching a drive: the fresh pool it would have formatted is still empty.
    for (let i = 1; i <= 4; i++) expect(readdirSync(join(other, `d${i}`))).toEqual([]);
    expect(run.logs().some((l) => l.event === 'startup_local_disks' || l.event === 'startup_format_written')).toBe(false);
    // The last line says what to do: stop the other process or pick another port.
    expect(run.stderr()).toMatch(/^ERROR: ListenerBindFailed: HTTP listener bind failed on 127\.0\.0\.1:\d+: .*EADDRINUSE.*; another process listens on that port: stop it, or choose another with --address or SVC_ADDRESS/m);
    // The console's port likewise, naming its own flag.
    const third = drives(4);
    const onConsole = await runSvc(['server', `${third}/d{1...4}`], { SVC_CONSOLE_ADDRESS: `127.0.0.1:${holder.port}` });
    expect(await onConsole.exited).not.toBe(0);
    expect(onConsole.stderr()).toContain('choose another with --console-address or SVC_CONSOLE_ADDRESS');
    expect(await holder.stop()).toBe(0);
  });

  it('credential variables are checked with the entrypoint messages', async () => {
    const base = drives(4);
    const empty = await failing(['server', `${base}/d{1...4}`], { SVC_ACCESS_KEY: '' });
    expect(empty.code).toBe(1);
    expect(empty.err.trim()).toBe('ERROR: SVC_ACCESS_KEY must not be empty.');
    const both = await failing(['server', `${base}/d{1...4}`], { SVC_ACCESS_KEY: 'a', SVC_ACCESS_KEY_FILE: '/etc/hostname' });
    expect(both.err.trim()).toBe('ERROR: Set either SVC_ACCESS_KEY or SVC_ACCESS_KEY_FILE, not both.');
    const unreadable = await failing(['server', `${base}/d{1...4}`], { SVC_ACCESS_KEY_FILE: join(base, 'nope') });
    expect(unreadable.err.trim()).toBe('ERROR: SVC_ACCESS_KEY_FILE points to an unreadable file.');
    expect(existsSync(join(base, 'd1', '.svc.sys'))).toBe(false);
  });

  it('bare svc uses SVC_VOLUMES; without volumes it explains what is missing', async () => {
    const base = drives(2);
    const run = await runSvc([], { SVC_VOLUMES: `${base}/d{1...2}` });
    expect(await run.started).toBe(true);
    expect(run.logs().find((l) => l.event === 'startup_begin')?.volumesSource).toBe('SVC_VOLUMES');
    expect(await run.stop()).toBe(0);
    const none = await failing([]);
    expect(none.code).toBe(1);
    expect(none.err).toContain('SVC_VOLUMES');
  });

  it('svc local (the npm start default) creates four drive folders and serves them', async () => {
    const base = tempDir('local');
    dirs.push(base);
    const run = await runSvc(['local', join(base, 'data')]);
    expect(await run.started).toBe(true);
    for (let i = 1; i <= 4; i++) expect(existsSync(join(base, 'data', `d${i}`, '.svc.sys', 'format.json'))).toBe(true);
    expect((await fetch(`http://127.0.0.1:${run.port}/health/ready`)).status).toBe(200);
    expect(run.logs().map((l) => l.event)).toContain('default_credentials');
    // Piped output (a service manager, a container log) gets the JSON log alone.
    expect(run.stderr()).not.toContain('is ready.');
    expect(await run.stop()).toBe(0);
  });

  it('at a terminal, npm start ends with plain lines: where S3 and the console are, the root user, the client command', async () => {
    const base = tempDir('tty');
    dirs.push(base);
    const port = await freePort();
    const consolePort = await freePort();
    // `script` gives the server a terminal, as a person running `npm start` has.
    const child = spawn('script', ['-qfec', `${NODE} ${SVC} local ${join(base, 'data')}`, '/dev/null'], {
      cwd: REPO,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', SVC_ADDRESS: `127.0.0.1:${port}`, SVC_CONSOLE_ADDRESS: `127.0.0.1:${consolePort}`, npm_lifecycle_event: 'start' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<void>((r) => child.on('exit', () => r()));
    const end = Date.now() + 30_000;
    while (!/Client .*\r?\n/.test(out) && Date.now() < end && child.exitCode === null) await new Promise((r) => setTimeout(r, 50));
    const pid = Number(/"pid":(\d+)/.exec(out)?.[1]);
    if (pid > 0) process.kill(pid, 'SIGTERM');
    else child.kill();
    await exited;
    const lines = out.split(/\r?\n/);
    const at = lines.findIndex((l) => /^svc \S+ is ready\.$/.test(l));
    expect(at, out.slice(-2000)).toBeGreaterThanOrEqual(0);
    expect(lines.slice(at + 1, at + 5)).toEqual([
      `  S3 API    http://127.0.0.1:${port}`,
      `  Console   http://127.0.0.1:${consolePort}`,
      '  Root user svcadmin / svcadmin (the default: set SVC_ACCESS_KEY and SVC_SECRET_KEY for anything but a try-out)',
      `  Client    npx svc alias set local http://127.0.0.1:${port} svcadmin svcadmin`,
    ]);
  });

  it('SVC_OBS_LOG_DIRECTORY sends the JSON log to a file at the configured level', async () => {
    const base = drives(2);
    const logDir = join(base, 'logs');
    mkdirSync(logDir);
    const run = await runSvc(['server', `${base}/d{1...2}`], { SVC_OBS_LOG_DIRECTORY: logDir, SVC_OBS_LOG_FILENAME: 'node.log', SVC_OBS_LOGGER_LEVEL: 'warn' });
    const file = join(logDir, 'node.log');
    const read = () => (existsSync(file) ? readFileSync(file, 'utf8') : '');
    for (let i = 0; i < 100 && !read().includes('host_failure_data_unavailable'); i++) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 300));
    expect(await run.stop()).toBe(0);
    const text = read();
    expect(text).toContain('"event":"host_failure_data_unavailable"');
    expect(text).toContain('"event":"default_credentials"');
    expect(text).not.toContain('"level":"info"');
    expect(run.stdout()).toBe('');
  });

  it('--help explains every flag and variable', () => {
    const top = spawnSync(NODE, [SVC, '--help'], { cwd: REPO, encoding: 'utf8' });
    expect(top.status).toBe(0);
    const server = spawnSync(NODE, [SVC, 'server', '--help'], { cwd: REPO, encoding: 'utf8' });
    expect(server.status).toBe(0);
    for (const text of [top.stdout, server.stdout]) {
      for (const v of ['SVC_VOLUMES', 'SVC_ADDRESS', 'SVC_CONSOLE_ENABLE', 'SVC_STORAGE_CLASS_INLINE_BLOCK', 'SVC_OBS_LOG_KEEP_FILES', 'SVC_ACCESS_KEY_FILE']) {
        expect(text).toContain(v);
      }
    }
    expect(server.stdout).toContain('--address');
    expect(server.stdout).toContain('--console-address');
    expect(server.stdout).toContain('{01...16}');
  });

  it('SVC_DOMAIN serves virtual-host-style requests beside path style', async () => {
    const base = drives(4);
    const run = await runSvc(['server', `${base}/d{1...4}`], { SVC_DOMAIN: 's3.svc.test', SVC_REGION: 'eu-west-3' });
    expect(await run.started).toBe(true);
    const credentials = { accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin' };
    const vhost = new S3Client({
      endpoint: `http://s3.svc.test:${run.port}`,
      region: 'eu-west-3',
      credentials,
      // every name under the test domain is this host
      requestHandler: keepAliveHandler({ agent: { lookup: resolveAllTo(() => '127.0.0.1') } }),
    });
    const path = new S3Client({ requestHandler: keepAliveHandler(), endpoint: `http://127.0.0.1:${run.port}`, region: 'eu-west-3', forcePathStyle: true, credentials });
    try {
      await vhost.send(new CreateBucketCommand({ Bucket: 'vhost' }));
      await vhost.send(new PutObjectCommand({ Bucket: 'vhost', Key: 'k.txt', Body: 'by host name' }));
      const got = await path.send(new GetObjectCommand({ Bucket: 'vhost', Key: 'k.txt' }));
      expect(await got.Body!.transformToString()).toBe('by host name');
      // a client signing for another region is refused
      const wrong = new S3Client({ requestHandler: keepAliveHandler(), endpoint: `http://127.0.0.1:${run.port}`, region: 'us-east-1', forcePathStyle: true, credentials });
      await expect(wrong.send(new GetObjectCommand({ Bucket: 'vhost', Key: 'k.txt' }))).rejects.toThrow();
      wrong.destroy();
    } finally {
      vhost.destroy();
      path.destroy();
      expect(await run.stop()).toBe(0);
    }
  });
});
