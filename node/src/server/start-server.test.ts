import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { type DriveFormatState, type FormatIO, localFormatIO } from '../storage/format.ts';
import { ManualClock } from '../util/clock.ts';
import { loadConfig } from '../util/config.ts';
import { hasCode, type SvcError } from '../util/errors.ts';
import { createLogger, silentLogger } from '../util/logger.ts';
import { buildPoolLayouts, parseParity } from 'svc-topology';
import { checkTransport, startServer } from './start-server.ts';

const base = mkdtempSync(join(tmpdir(), 'svc-start-server-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));
let seq = 0;
function pool(n: number): string {
  const d = join(base, `p${seq++}`);
  for (let i = 1; i <= n; i++) mkdirSync(join(d, `d${i}`), { recursive: true });
  return d;
}
const config = (args: string[], env: Record<string, string> = {}) =>
  loadConfig({
    args,
    env: { SVC_ADDRESS: '127.0.0.1:0', SVC_CONSOLE_ENABLE: 'false', SVC_STARTUP_READINESS_MAX_WAIT_SECS: '3', ...env },
    cwd: base,
    readFile: () => {
      throw new Error('no files');
    },
  }).config;

async function until(fn: () => boolean, clock: ManualClock): Promise<void> {
  // advance injected time, and give real file I/O a moment between steps
  for (let i = 0; i < 100 && !fn(); i++) {
    await clock.advance(1000);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('startServer', () => {
  it('stays pending startup_finalization, with the services\' detail, until their finalize succeeds', async () => {
    const dir = pool(4);
    const clock = new ManualClock(0);
    const reasons: (string | undefined)[] = ['pool 1 (p2/d{1...4}): bucket "grow" not present: read-only drives', 'still read-only', undefined];
    let attempts = 0;
    let note: string | undefined = 'bucket sync: pool 1 lacks "grow"';
    const server = await startServer(config([`${dir}/d{1...4}`]), {
      logger: silentLogger,
      clock,
      buildServices: async () => ({
        handlers: { s3: (_req, res) => res.end('served') },
        finalize: async () => reasons[attempts++],
        storageNote: () => note,
      }),
    });
    const url = `http://127.0.0.1:${server.address.port}`;
    try {
      expect(attempts).toBe(1);
      const r = await fetch(`${url}/health/ready`);
      expect(r.status).toBe(503);
      expect(r.headers.get('x-svc-readiness-pending')).toBe('startup_finalization');
      const body = (await r.json()) as { details: { storage: { detail: string } } };
      expect(body.details.storage.detail).toBe('1 of 1 erasure sets have read quorum; bucket sync: pool 1 lacks "grow"');
      expect((await fetch(`${url}/bucket`)).status).toBe(503);
      note = undefined;
      await until(() => server.readiness.ready, clock);
      expect(attempts).toBe(3);
      expect(server.readiness.report().details.storage.detail).toBe('1 of 1 erasure sets have read quorum');
      expect(await (await fetch(`${url}/bucket`)).text()).toBe('served');
    } finally {
      await server.close(0);
    }
  });

  it('serves degraded while a drive of a fresh pool is unreachable, then formats and becomes ready', async () => {
    const dir = pool(4);
    const files = localFormatIO([1, 2, 3, 4].map((i) => join(dir, `d${i}`)));
    let reachable = false;
    const io: FormatIO = {
      readFormat: (i) => (i === 3 && !reachable ? Promise.resolve<DriveFormatState>({ state: 'offline', reason: 'unreachable' }) : files.readFormat(i)),
      writeFormat: (i, f) => files.writeFormat(i, f),
    };
    const clock = new ManualClock(0);
    let built = 0;
    const server = await startServer(config([`${dir}/d{1...4}`]), {
      logger: silentLogger,
      clock,
      formatIO: () => io,
      buildServices: async (ctx) => {
        built++;
        expect(ctx.formats[0]!.slots.every((s) => s.status === 'ok')).toBe(true);
        return { handlers: { s3: (_req, res) => res.end('served') } };
      },
    });
    const url = `http://127.0.0.1:${server.address.port}`;
    try {
      expect((await fetch(`${url}/health`)).status).toBe(200);
      const r = await fetch(`${url}/health/ready`);
      expect(r.status).toBe(503);
      expect(((await r.json()) as { degradedReasons: string[] }).degradedReasons).toEqual(['storage_quorum_unavailable']);
      const s3 = await fetch(`${url}/bucket`);
      expect(s3.status).toBe(503);
      expect(s3.headers.get('x-svc-readiness-pending')).toBe('storage_quorum');
      expect(server.deploymentId()).toBeUndefined();

      reachable = true;
      await until(() => server.readiness.ready, clock);
      expect(server.readiness.ready).toBe(true);
      expect(built).toBe(1);
      expect(server.deploymentId()).toMatch(/^[0-9a-f-]{36}$/);
      expect(await (await fetch(`${url}/bucket`)).text()).toBe('served');
    } finally {
      await server.close(0);
    }
  });

  it('logs that it continues degraded once SVC_STARTUP_READINESS_MAX_WAIT_SECS has passed', async () => {
    const dir = pool(2);
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, cb) {
        lines.push(String(chunk));
        cb();
      },
    });
    const offline: FormatIO = {
      readFormat: () => Promise.resolve<DriveFormatState>({ state: 'offline', reason: 'peer down' }),
      writeFormat: () => Promise.reject(new Error('unreachable')),
    };
    const clock = new ManualClock();
    const server = await startServer(config([`${dir}/d{1...2}`]), { logger: createLogger('info', sink), clock, formatIO: () => offline });
    try {
      const seen = () => lines.some((l) => l.includes('"event":"startup_readiness_wait_exceeded"'));
      await clock.advance(2000);
      expect(seen()).toBe(false);
      await until(seen, clock);
      expect(seen()).toBe(true);
      expect(lines.some((l) => l.includes('"event":"startup_format_wait"'))).toBe(true);
      expect(server.readiness.ready).toBe(false);
    } finally {
      await server.close(0);
    }
  });

  it('a permanent error found by a background retry reaches onFatal', async () => {
    const dir = pool(4);
    // format the drives as two sets of two first
    const first = await startServer(config([`${dir}/d{1...4}`], { SVC_ERASURE_SET_DRIVE_COUNT: '2' }), { logger: silentLogger, clock: new ManualClock() });
    await first.close(0);
    const files = localFormatIO([1, 2, 3, 4].map((i) => join(dir, `d${i}`)));
    let calls = 0;
    const io: FormatIO = {
      // unreachable during the disk check and the first format read, then the real drives
      readFormat: (i) => (calls++ < 8 ? Promise.resolve<DriveFormatState>({ state: 'offline', reason: 'later' }) : files.readFormat(i)),
      writeFormat: (i, f) => files.writeFormat(i, f),
    };
    const clock = new ManualClock();
    let fatal: SvcError | undefined;
    const server = await startServer(config([`${dir}/d{1...4}`]), { logger: silentLogger, clock, formatIO: () => io, onFatal: (e) => (fatal = e) });
    try {
      await until(() => fatal !== undefined, clock);
      expect(hasCode(fatal, 'PoolTopologyMismatch')).toBe(true);
    } finally {
      await server.close(0);
    }
  });

  it('a new pool joins the existing deployment; pools of different deployments are refused', async () => {
    const a = pool(4);
    const b = pool(4);
    const c = pool(2);
    const first = await startServer(config([`${a}/d{1...4}`]), { logger: silentLogger, clock: new ManualClock() });
    const id = first.deploymentId();
    await first.close(0);
    const both = await startServer(config([`${a}/d{1...4}`, `${b}/d{1...4}`]), { logger: silentLogger, clock: new ManualClock() });
    expect(both.deploymentId()).toBe(id);
    expect(both.readiness.ready).toBe(true);
    await both.close(0);
    const other = await startServer(config([`${c}/d{1...2}`]), { logger: silentLogger, clock: new ManualClock() });
    await other.close(0);
    await expect(startServer(config([`${a}/d{1...4}`, `${c}/d{1...2}`]), { logger: silentLogger, clock: new ManualClock() })).rejects.toSatisfy((e) =>
      hasCode(e, 'CorruptedFormat'),
    );
  });

  it('URL endpoints on this node\'s address and port are local drives; none local is an error', async () => {
    const dir = pool(4);
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((r) => probe.close(r));
    const cfg = config([`http://127.0.0.1:${port}${dir}/d{1...4}`], { SVC_ADDRESS: `127.0.0.1:${port}` });
    const server = await startServer(cfg, { logger: silentLogger, clock: new ManualClock() });
    try {
      expect(server.readiness.ready).toBe(true);
      expect(readFileSync(join(dir, 'd4', '.svc.sys', 'format.json'), 'utf8')).toContain(server.deploymentId()!);
    } finally {
      await server.close(0);
    }
    const elsewhere = config([`http://127.0.0.1:${port + 1}${dir}/d{1...4}`], { SVC_ADDRESS: `127.0.0.1:${port}` });
    await expect(startServer(elsewhere, { logger: silentLogger, clock: new ManualClock() })).rejects.toThrow(/none of the endpoints is served by this node/);
  });

  it('TLS and the endpoints\' scheme must agree before anything starts', async () => {
    const layout = (arg: string) => buildPoolLayouts([arg], { storageClass: { standard: parseParity('S', undefined), rrs: parseParity('R', undefined) }, cwd: base });
    const serving = { serving: true, dir: '/etc/svc/certs' };
    const none = { serving: false, dir: '/etc/svc/certs' };
    expect(() => checkTransport(layout('https://n{1...4}:9000/d'), undefined)).toThrow(
      'TLS: the volume arguments use https:// (https://n1:9000/d) but there is no certificate directory; put this node\'s certificate there (--certs-dir / SVC_CERTS_DIR) or use http:// endpoints',
    );
    expect(() => checkTransport(layout('https://n{1...4}:9000/d'), none)).toThrow('/etc/svc/certs holds no public.crt and private.key');
    expect(() => checkTransport(layout('http://n{1...4}:9000/d'), serving)).toThrow(
      'TLS: this node serves TLS (certificates in /etc/svc/certs) but the volume arguments use http:// (http://n1:9000/d); peers would call it in plain HTTP: use https:// endpoints on every node',
    );
    expect(() => checkTransport(layout('https://n{1...4}:9000/d'), serving)).not.toThrow();
    expect(() => checkTransport(layout('http://n{1...4}:9000/d'), none)).not.toThrow();
    for (const t of [undefined, none, serving]) expect(() => checkTransport(layout('/x/d{1...4}'), t)).not.toThrow();
    // the server refuses before touching a drive
    const dir = pool(4);
    await expect(startServer(config([`https://127.0.0.1:9${dir.length}/d{1...4}`]), { logger: silentLogger, clock: new ManualClock() })).rejects.toThrow(/use https:\/\/ .* but there is no certificate directory/);
  });

  it('storage readiness follows drives that disappear and come back', async () => {
    const dir = pool(4);
    const clock = new ManualClock();
    const server = await startServer(config([`${dir}/d{1...4}`]), { logger: silentLogger, clock, storageCheckMs: 1000 });
    try {
      expect(server.readiness.ready).toBe(true);
      // parity 2 on 4 drives: read quorum 2, so three missing drives lose it
      const saved = [1, 2, 3].map((i) => readFileSync(join(dir, `d${i}`, '.svc.sys', 'format.json')));
      for (const i of [1, 2, 3]) rmSync(join(dir, `d${i}`, '.svc.sys'), { recursive: true });
      await until(() => !server.readiness.ready, clock);
      expect(server.readiness.report()).toMatchObject({ ready: false, pending: 'storage_quorum', degradedReasons: ['storage_quorum_unavailable'] });
      // two drives back: read quorum again
      for (const i of [1, 2]) {
        mkdirSync(join(dir, `d${i}`, '.svc.sys'));
        writeFileSync(join(dir, `d${i}`, '.svc.sys', 'format.json'), saved[i - 1]!);
      }
      await until(() => server.readiness.ready, clock);
      expect(server.readiness.report().ready).toBe(true);
    } finally {
      await server.close(0);
    }
  });
});
