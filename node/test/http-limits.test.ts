/**
 * Issue 27 item 1: no client can hold a listener hostage. A real `svc
 * server` with short limits (and, for the descriptor test, a descriptor
 * limit of 512 set with `prlimit`), attacked over raw sockets:
 *
 * - headers that never finish, and an idle TCP connection: 408, closed;
 * - a signed PUT declaring 1 GB and sending a byte every 300 ms: 400
 *   `RequestTimeout`, closed, nothing stored;
 * - a body that stops: 400 `RequestTimeout` after the idle timeout;
 * - a large body refused before it is read (S3, admin API, internode RPC): the error
 *   arrives, the connection closes without a reset, a request pipelined
 *   behind it is not served, and the lingering is bounded;
 * - a GET whose client stops reading: the connection is closed and the
 *   object's read lock released (an overwrite goes through);
 * - hundreds of idle connections from one address, then from many, beyond
 *   the process's descriptor limit: the extra connections are answered 503
 *   and closed, nothing logs EMFILE, the node stays ready and serves a
 *   client on another address.
 */
import { mkdirSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorCode, signHeaders } from './helpers/sigv4-signer.ts';
import { runSvc, type SvcRun, tempDir } from './svc-process.ts';
import { keepAliveHandler } from './helpers/s3-client.ts';

/** A temp dir with four drive folders. */
function drives(prefix: string): string {
  const base = tempDir(prefix);
  for (let i = 1; i <= 4; i++) mkdirSync(join(base, `d${i}`));
  return base;
}

const CREDS = { accessKey: 'limitsadmin', secretKey: 'limits-admin-secret' };

async function waitFor(what: string, probe: () => Promise<boolean> | boolean, timeoutMs = 30_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (await probe()) return;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A raw connection that records what it received and when it closed. */
function rawConnection(port: number, localAddress = '127.0.0.1', allowHalfOpen = false): Promise<{ socket: Socket; received: () => string; closed: Promise<number> }> {
  return new Promise((resolve, reject) => {
    const start = Date.now();
    let got = '';
    const socket = connect({ host: '127.0.0.1', port, localAddress, allowHalfOpen });
    const closed = new Promise<number>((r) => socket.once('close', () => r(Date.now() - start)));
    socket.on('data', (d: Buffer) => (got += d.toString('latin1')));
    socket.on('error', () => undefined);
    socket.once('connect', () => resolve({ socket, received: () => got, closed }));
    socket.once('error', reject);
  });
}

async function ready(port: number): Promise<number> {
  return fetch(`http://127.0.0.1:${port}/health/ready`).then(
    (r) => r.status,
    () => 0,
  );
}

function client(port: number): S3Client {
  return new S3Client({
    requestHandler: keepAliveHandler(),
    endpoint: `http://127.0.0.1:${port}`,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: CREDS.accessKey, secretAccessKey: CREDS.secretKey },
    maxAttempts: 1,
  });
}

describe('HTTP limits: slow, stalled and too many clients', () => {
  let run: SvcRun;
  let s3: S3Client;
  const env = {
    ...{ SVC_ACCESS_KEY: CREDS.accessKey, SVC_SECRET_KEY: CREDS.secretKey, SVC_CONSOLE_ENABLE: 'false' },
    SVC_HTTP_HEADER_TIMEOUT: '2s',
    SVC_HTTP_IDLE_TIMEOUT: '2s',
    SVC_HTTP_BODY_TIMEOUT: '2s',
  };

  beforeAll(async () => {
    const base = drives('limits');
    run = await runSvc(['server', `${base}/d{1...4}`], env);
    expect(await run.started).toBe(true);
    await waitFor('ready', async () => (await ready(run.port)) === 200);
    s3 = client(run.port);
  }, 60_000);

  afterAll(async () => {
    s3?.destroy();
    await run?.stop();
  });

  it('answers unfinished headers and an idle connection 408 and closes them within the header timeout', async () => {
    const idle = await rawConnection(run.port);
    const slow = await rawConnection(run.port);
    slow.socket.write('GET /health HTTP/1.1\r\nHost: x\r\n');
    const drip = setInterval(() => slow.socket.write('X-Drip: 1\r\n'), 300);
    try {
      const [idleMs, slowMs] = await Promise.all([idle.closed, slow.closed]);
      expect(idleMs).toBeLessThan(6_000);
      expect(slowMs).toBeLessThan(6_000);
      expect(idle.received()).toMatch(/^HTTP\/1\.1 408/);
      expect(slow.received()).toMatch(/^HTTP\/1\.1 408/);
    } finally {
      clearInterval(drip);
    }
    expect(await ready(run.port)).toBe(200);
  }, 20_000);

  it('answers a body that trickles a byte every 300 ms RequestTimeout (400) and stores nothing', async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'slow' }));
    const path = '/slow/trickle';
    const headers = await signHeaders(`http://127.0.0.1:${run.port}`, CREDS, {
      method: 'PUT',
      path,
      headers: { 'content-length': String(1 << 30), 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' },
    });
    const c = await rawConnection(run.port);
    c.socket.write(`PUT ${path} HTTP/1.1\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}`).join('\r\n')}\r\n\r\n`);
    const drip = setInterval(() => c.socket.write('a'), 300);
    try {
      const ms = await c.closed;
      expect(ms).toBeLessThan(8_000);
    } finally {
      clearInterval(drip);
    }
    expect(c.received()).toMatch(/^HTTP\/1\.1 400/);
    expect(errorCode(c.received())).toBe('RequestTimeout');
    await expect(s3.send(new GetObjectCommand({ Bucket: 'slow', Key: 'trickle' }))).rejects.toMatchObject({ name: 'NoSuchKey' });
    expect(run.logs().some((l) => l.event === 'http_request_timeout')).toBe(true);
  }, 20_000);

  it('answers a body that stops RequestTimeout once the connection was idle', async () => {
    const path = '/slow/stopped';
    const headers = await signHeaders(`http://127.0.0.1:${run.port}`, CREDS, {
      method: 'PUT',
      path,
      headers: { 'content-length': '100000', 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' },
    });
    const c = await rawConnection(run.port);
    c.socket.write(`PUT ${path} HTTP/1.1\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}`).join('\r\n')}\r\n\r\n${'b'.repeat(50_000)}`);
    const ms = await c.closed;
    expect(ms).toBeLessThan(8_000);
    expect(errorCode(c.received())).toBe('RequestTimeout');
  }, 20_000);

  it('a large body refused before it is read: the client gets the error and a clean close, never a reset', async () => {
    // The node answers without reading the body and closes. Closing a socket with unread bytes makes
    // the kernel send a reset, which can destroy the answer before the client reads it (the AWS SDK
    // then reports a retryable TimeoutError and uploads again): the node half-closes instead and
    // drops what still arrives for a moment.
    const path = '/no-such-bucket-here/k';
    const size = 16 << 20;
    const headers = await signHeaders(`http://127.0.0.1:${run.port}`, CREDS, {
      method: 'PUT',
      path,
      headers: { 'content-length': String(size), 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' },
    });
    const c = await rawConnection(run.port);
    let error: string | undefined;
    c.socket.on('error', (err: NodeJS.ErrnoException) => (error = err.code ?? err.message));
    const head = (h: Record<string, string>) => `PUT ${path} HTTP/1.1\r\n${Object.entries(h).map(([k, v]) => `${k}: ${v}`).join('\r\n')}\r\n\r\n`;
    c.socket.write(head(headers));
    c.socket.end(Buffer.alloc(size, 5));
    const ms = await c.closed;
    expect(error).toBeUndefined();
    expect(c.received()).toMatch(/^HTTP\/1\.1 404/);
    expect(c.received()).toMatch(/connection: close/i);
    expect(errorCode(c.received())).toBe('NoSuchBucket');
    expect(ms).toBeLessThan(8_000);
    // A request pipelined behind the refused body is not served (the answer said `connection: close`).
    await s3.send(new CreateBucketCommand({ Bucket: 'pipe' }));
    const second = await signHeaders(`http://127.0.0.1:${run.port}`, CREDS, { method: 'PUT', path: '/pipe/second', headers: { 'content-length': '5', 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' } });
    const d = await rawConnection(run.port);
    d.socket.write(head(headers));
    d.socket.write(Buffer.alloc(size, 5));
    d.socket.end(`PUT /pipe/second HTTP/1.1\r\n${Object.entries(second).map(([k, v]) => `${k}: ${v}`).join('\r\n')}\r\n\r\nhello`);
    await d.closed;
    expect(d.received().match(/HTTP\/1\.1 /g)).toEqual(['HTTP/1.1 ']);
    expect(errorCode(d.received())).toBe('NoSuchBucket');
    await expect(s3.send(new GetObjectCommand({ Bucket: 'pipe', Key: 'second' }))).rejects.toMatchObject({ name: 'NoSuchKey' });
    // A client that keeps sending a body it never finishes: the lingering is bounded (the node then
    // closes for good, and the client's next write is refused).
    const e = await rawConnection(run.port, '127.0.0.1', true);
    e.socket.on('error', () => undefined);
    e.socket.write(head(headers));
    e.socket.write(Buffer.alloc(4 << 20, 5));
    const drip = setInterval(() => e.socket.write('z'), 250);
    try {
      expect(await e.closed).toBeLessThan(10_000);
    } finally {
      clearInterval(drip);
    }
    expect(errorCode(e.received())).toBe('NoSuchBucket');
    // The admin API refuses an oversized body the same way: its error arrives, then a clean close.
    const adminPath = '/svc/admin/v3/heal/rules';
    const adminHeaders = await signHeaders(`http://127.0.0.1:${run.port}`, CREDS, {
      method: 'PUT',
      path: adminPath,
      headers: { 'content-length': String(size), 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' },
    });
    const f = await rawConnection(run.port);
    let adminError: string | undefined;
    f.socket.on('error', (err: NodeJS.ErrnoException) => (adminError = err.code ?? err.message));
    f.socket.write(`PUT ${adminPath} HTTP/1.1\r\n${Object.entries(adminHeaders).map(([k, v]) => `${k}: ${v}`).join('\r\n')}\r\n\r\n`);
    f.socket.end(Buffer.alloc(size, 5));
    await f.closed;
    expect(adminError).toBeUndefined();
    expect(f.received()).toMatch(/^HTTP\/1\.1 400/);
    expect(f.received()).toMatch(/"Code":"EntityTooLarge"/);
    // Internode RPC refuses a stranger's upload (no cluster token) the same way.
    const g = await rawConnection(run.port);
    let rpcError: string | undefined;
    g.socket.on('error', (err: NodeJS.ErrnoException) => (rpcError = err.code ?? err.message));
    g.socket.write(`POST /svc/rpc/v1/d1/createFile HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: ${size}\r\n\r\n`);
    g.socket.end(Buffer.alloc(size, 5));
    await g.closed;
    expect(rpcError).toBeUndefined();
    expect(g.received()).toMatch(/^HTTP\/1\.1 4\d\d/);
    // and through the SDK, with a body small enough to go without `Expect: 100-continue`
    const body = Buffer.alloc(1536 << 10, 3);
    for (let i = 0; i < 10; i++) {
      const name = await s3.send(new PutObjectCommand({ Bucket: 'no-such-bucket-here', Key: `k${i}`, Body: body })).then(() => 'stored', (err: { name?: string }) => err.name);
      expect(name).toBe('NoSuchBucket');
    }
  }, 60_000);

  it('closes a GET whose client stopped reading and releases the read lock: an overwrite goes through', async () => {
    const big = Buffer.alloc(48 << 20, 7);
    await s3.send(new PutObjectCommand({ Bucket: 'slow', Key: 'big', Body: big }));
    const headers = await signHeaders(`http://127.0.0.1:${run.port}`, CREDS, { method: 'GET', path: '/slow/big', headers: { 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' } });
    const c = await rawConnection(run.port);
    c.socket.write(`GET /slow/big HTTP/1.1\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}`).join('\r\n')}\r\n\r\n`);
    c.socket.pause(); // never reads: the server's writes back up
    await waitFor('the response to start', () => c.socket.readableLength > 0 || c.received().length > 0, 10_000).catch(() => undefined);
    const t0 = Date.now();
    // The overwrite needs the write lock the reader holds until its connection goes.
    await s3.send(new PutObjectCommand({ Bucket: 'slow', Key: 'big', Body: Buffer.from('small') }));
    expect(Date.now() - t0).toBeLessThan(15_000);
    c.socket.destroy();
    const got = await s3.send(new GetObjectCommand({ Bucket: 'slow', Key: 'big' }));
    expect(await got.Body!.transformToString()).toBe('small');
    expect(run.logs().some((l) => l.event === 'http_client_stopped_reading')).toBe(true);
  }, 60_000);
});

describe('HTTP limits: descriptor exhaustion', () => {
  let run: SvcRun;
  beforeAll(async () => {
    const base = drives('limits-fd');
    run = await runSvc(
      ['server', `${base}/d{1...4}`],
      { SVC_ACCESS_KEY: CREDS.accessKey, SVC_SECRET_KEY: CREDS.secretKey, SVC_CONSOLE_ENABLE: 'false', SVC_HTTP_HEADER_TIMEOUT: '20s' },
      { wrap: ['prlimit', '--nofile=512:512', '--'] },
    );
    expect(await run.started).toBe(true);
    await waitFor('ready', async () => (await ready(run.port)) === 200);
  }, 60_000);

  afterAll(async () => {
    await run?.stop();
  });

  it('caps one address and all addresses below the descriptor limit; the node stays ready and serves others', async () => {
    const limit = run.logs().find((l) => l.event === 'startup_file_limit');
    expect(limit).toMatchObject({ soft: 512, maxConnections: 256, maxConnectionsPerAddress: 64 });
    const held: Awaited<ReturnType<typeof rawConnection>>[] = [];
    try {
      // One address opens 200 connections: 64 stay, the rest are answered 503 and closed.
      for (let i = 0; i < 200; i++) held.push(await rawConnection(run.port, '127.0.0.2'));
      await waitFor('refused connections closed', async () => (await Promise.all(held.slice(64).map((h) => Promise.race([h.closed, Promise.resolve(-1)])))).every((x) => x >= 0), 10_000);
      expect(held.slice(64).every((h) => /^HTTP\/1\.1 503/.test(h.received()))).toBe(true);
      // Another client is served while they hang on.
      const s3 = client(run.port);
      await s3.send(new CreateBucketCommand({ Bucket: 'fdtest' }));
      await s3.send(new PutObjectCommand({ Bucket: 'fdtest', Key: 'k', Body: 'during the attack' }));
      expect(await (await s3.send(new GetObjectCommand({ Bucket: 'fdtest', Key: 'k' }))).Body!.transformToString()).toBe('during the attack');
      expect(await ready(run.port)).toBe(200);

      // Many addresses, 600 connections in all: more than the process's 512 descriptors.
      for (let a = 3; a < 13; a++) for (let i = 0; i < 60; i++) held.push(await rawConnection(run.port, `127.0.0.${a}`));
      await new Promise((r) => setTimeout(r, 500));
      // Nothing failed for want of descriptors, and the node never lost readiness.
      expect(run.logs().filter((l) => l.event === 'http_accept_failed' || l.event === 'drive_descriptors_exhausted')).toEqual([]);
      expect(run.logs().filter((l) => l.event === 'readiness_changed' && l.ready === false && l.wasReady === true)).toEqual([]);
      expect(run.logs().some((l) => l.event === 'http_connection_refused' && l.reason === 'global')).toBe(true);
      s3.destroy();
    } finally {
      for (const h of held) h.socket.destroy();
    }
    // Once they are gone, everyone is served again.
    await waitFor('ready again', async () => (await ready(run.port)) === 200, 10_000);
    const s3 = client(run.port);
    expect(await (await s3.send(new GetObjectCommand({ Bucket: 'fdtest', Key: 'k' }))).Body!.transformToString()).toBe('during the attack');
    s3.destroy();
  }, 90_000);
});
