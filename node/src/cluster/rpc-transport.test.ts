import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { Readable } from 'node:stream';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../util/clock.ts';
import { SvcError } from '../util/errors.ts';
import { silentLogger } from '../util/logger.ts';
import { RPC_TOKEN_HEADER, RpcAuth } from './rpc-auth.ts';
import { PeerClient } from './rpc-client.ts';
import { RpcServer } from './rpc-server.ts';
import { encodeMsg, peerPath, RPC_ARGS_HEADER, storagePath } from './rpc-wire.ts';

const auth = new RpcAuth('access:secret', systemClock);
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length > 0) await closers.pop()!();
});

async function listen(server: Server, port = 0): Promise<number> {
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
}

function startServer(port = 0) {
  const rpc = new RpcServer({ auth, logger: silentLogger });
  const calls: string[] = [];
  rpc.registerDrive('/data/d1', {
    echo: {
      kind: 'unary',
      handle: async (args) => {
        calls.push('echo');
        return { args };
      },
    },
    fail: {
      kind: 'unary',
      handle: async () => {
        calls.push('fail');
        throw new SvcError('FileNotFound', 'no such file here');
      },
    },
    crash: {
      kind: 'unary',
      handle: async () => {
        throw new TypeError('boom');
      },
    },
    sum: {
      kind: 'upload',
      handle: async (args, body) => {
        calls.push('sum');
        let n = 0;
        let s = 0;
        for await (const c of body) {
          n += (c as Buffer).length;
          for (const b of c as Buffer) s = (s + b) % 65521;
        }
        return { args, n, s };
      },
    },
    slowsum: {
      kind: 'upload',
      handle: async (_args, body) => {
        // A peer that reads slowly: the sender's socket buffers fill up.
        let s = 0;
        let n = 0;
        for await (const c of body) {
          n += (c as Buffer).length;
          for (const b of c as Buffer) s = (s + b) % 65521;
          await new Promise((r) => setTimeout(r, 2));
        }
        return { n, s };
      },
    },
    bytes: {
      kind: 'download',
      handle: async (args) => {
        const [len] = args as [number];
        async function* gen() {
          let left = len;
          while (left > 0) {
            const n = Math.min(left, 64 * 1024);
            yield Buffer.alloc(n, left % 251);
            left -= n;
          }
        }
        return Readable.from(gen(), { objectMode: false });
      },
    },
    count: {
      kind: 'records',
      handle: async function* (args) {
        const { n, failAt } = args as { n: number; failAt?: number };
        for (let i = 0; i < n; i++) {
          if (i === failAt) throw new SvcError('FileCorrupt');
          yield { i, name: `k${i}` };
        }
      },
    },
  });
  const server = createServer(rpc.handle);
  return { rpc, server, calls, port: listen(server, port) };
}

function client(port: number) {
  const c = new PeerClient({
    origin: `http://127.0.0.1:${port}`,
    nodeId: 'test-node',
    auth,
    clock: systemClock,
    logger: silentLogger,
    probeBaseMs: 20,
    probeMaxMs: 50,
    connectTimeoutMs: 1_000,
  });
  closers.push(() => c.close());
  return c;
}

describe('internode RPC transport', () => {
  it('round-trips unary calls and re-throws remote SvcError codes', async () => {
    const s = startServer();
    const port = await s.port;
    closers.push(async () => void s.server.close());
    const c = client(port);
    const res = await c.rpcCall(storagePath('/data/d1', 'echo'), ['a', 1, new Uint8Array([1, 2, 3]), { x: null }]);
    expect(res).toEqual({ args: ['a', 1, new Uint8Array([1, 2, 3]), { x: null }] });

    const err = await c.rpcCall(storagePath('/data/d1', 'fail'), []).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SvcError);
    expect((err as SvcError).code).toBe('FileNotFound');
    expect((err as SvcError).message).toBe('no such file here');

    const internal = await c.rpcCall(storagePath('/data/d1', 'crash'), []).catch((e: unknown) => e);
    expect((internal as SvcError).code).toBe('InternalError');

    const noDrive = await c.rpcCall(storagePath('/data/d9', 'echo'), []).catch((e: unknown) => e);
    expect((noDrive as SvcError).code).toBe('DiskNotFound');
    expect(c.isOnline()).toBe(true);
  });

  it('refuses forged, missing and expired tokens with 403 and never calls the handler', async () => {
    const s = startServer();
    const port = await s.port;
    closers.push(async () => void s.server.close());
    const path = storagePath('/data/d1', 'fail');
    const url = `http://127.0.0.1:${port}${path}`;
    const body = encodeMsg([]);

    const missing = await request(url, { method: 'POST', body });
    expect(missing.statusCode).toBe(403);
    await missing.body.dump();

    const forged = await request(url, { method: 'POST', body, headers: { [RPC_TOKEN_HEADER]: new RpcAuth('wrong', systemClock).sign('POST', path, 'x', body) } });
    expect(forged.statusCode).toBe(403);
    await forged.body.dump();

    const otherPath = await request(url, { method: 'POST', body, headers: { [RPC_TOKEN_HEADER]: auth.sign('POST', storagePath('/data/d1', 'echo'), 'x', body) } });
    expect(otherPath.statusCode).toBe(403);
    await otherPath.body.dump();

    const old = new RpcAuth('access:secret', { ...systemClock, now: () => Date.now() - 10 * 60_000 });
    const expired = await request(url, { method: 'POST', body, headers: { [RPC_TOKEN_HEADER]: old.sign('POST', path, 'x', body) } });
    expect(expired.statusCode).toBe(403);
    await expired.body.dump();

    const upload = await request(`http://127.0.0.1:${port}${storagePath('/data/d1', 'sum')}`, { method: 'POST', body: Buffer.alloc(1000) });
    expect(upload.statusCode).toBe(403);
    await upload.body.dump();

    // A genuine token for this call with other arguments (unary body, upload args header).
    const otherArgs = await request(url, { method: 'POST', body: encodeMsg(['x']), headers: { [RPC_TOKEN_HEADER]: auth.sign('POST', path, 'x', body) } });
    expect(otherArgs.statusCode).toBe(403);
    await otherArgs.body.dump();
    const sumPath = storagePath('/data/d1', 'sum');
    const signedArgs = encodeMsg(['vol', 'p']).toString('base64url');
    const swapped = await request(`http://127.0.0.1:${port}${sumPath}`, {
      method: 'POST',
      body: Buffer.alloc(1000),
      headers: { [RPC_TOKEN_HEADER]: auth.sign('POST', sumPath, 'x', Buffer.from(signedArgs)), [RPC_ARGS_HEADER]: encodeMsg(['vol', 'other']).toString('base64url') },
    });
    expect(swapped.statusCode).toBe(403);
    await swapped.body.dump();

    expect(s.calls).toEqual([]);

    const good = await request(url, { method: 'POST', body, headers: { [RPC_TOKEN_HEADER]: auth.sign('POST', path, 'x', body) } });
    expect(good.statusCode).toBe(404);
    await good.body.dump();
    expect(s.calls).toEqual(['fail']);
  });

  it('streams uploads, downloads and record streams', async () => {
    const s = startServer();
    const port = await s.port;
    closers.push(async () => void s.server.close());
    const c = client(port);

    const total = 5 * 1024 * 1024 + 7;
    async function* source() {
      let left = total;
      while (left > 0) {
        const n = Math.min(left, 100_000);
        yield Buffer.alloc(n, 3);
        left -= n;
      }
    }
    const up = (await c.rpcUpload(storagePath('/data/d1', 'sum'), ['vol', 'p'], source())) as { n: number; s: number; args: unknown };
    expect(up.n).toBe(total);
    expect(up.args).toEqual(['vol', 'p']);
    expect(up.s).toBe((total * 3) % 65521);

    const down = await c.rpcDownload(storagePath('/data/d1', 'bytes'), [3 * 1024 * 1024 + 1]);
    let n = 0;
    for await (const chunk of down) n += (chunk as Buffer).length;
    expect(n).toBe(3 * 1024 * 1024 + 1);

    const recs: unknown[] = [];
    for await (const r of c.rpcRecords(storagePath('/data/d1', 'count'), { n: 1000 })) recs.push(r);
    expect(recs.length).toBe(1000);
    expect(recs[999]).toEqual({ i: 999, name: 'k999' });

    const partial: unknown[] = [];
    const err = await (async () => {
      for await (const r of c.rpcRecords(storagePath('/data/d1', 'count'), { n: 10, failAt: 4 })) partial.push(r);
    })().catch((e: unknown) => e);
    expect(partial.length).toBe(4);
    expect((err as SvcError).code).toBe('FileCorrupt');
  });

  it('an upload whose source reuses its buffer once the next chunk is pulled arrives intact at a slow peer', async () => {
    const s = startServer();
    const port = await s.port;
    closers.push(async () => void s.server.close());
    const c = client(port);
    // The Drive.createFile contract: the consumer is done with a chunk when it pulls the next,
    // so the producer refills the same buffer (as the object layer recycles its frame buffers).
    const buf = Buffer.alloc(256 * 1024);
    const chunks = 64;
    async function* source() {
      for (let i = 0; i < chunks; i++) {
        buf.fill(i % 251);
        yield buf;
      }
    }
    let want = 0;
    for (let i = 0; i < chunks; i++) want = (want + (i % 251) * buf.length) % 65521;
    const up = (await c.rpcUpload(storagePath('/data/d1', 'slowsum'), [], source())) as { n: number; s: number };
    expect(up.n).toBe(chunks * buf.length);
    expect(up.s).toBe(want);
  });

  it('an upload whose source fails reports the source error and keeps the peer online', async () => {
    const s = startServer();
    const port = await s.port;
    closers.push(async () => void s.server.close());
    const c = client(port);
    async function* bad() {
      yield Buffer.alloc(10);
      throw new SvcError('BadDigest');
    }
    const err = await c.rpcUpload(storagePath('/data/d1', 'sum'), [], bad()).catch((e: unknown) => e);
    expect((err as SvcError).code).toBe('BadDigest');
    expect(c.isOnline()).toBe(true);
  });

  it('aborts an upload the peer stops accepting and marks the peer offline', async () => {
    const rpc = new RpcServer({ auth, logger: silentLogger });
    let entered = false;
    rpc.registerDrive('/data/d1', {
      // Never reads its body: the socket fills and the client's writes block.
      stuck: {
        kind: 'upload',
        handle: () => {
          entered = true;
          return new Promise(() => undefined);
        },
      },
    });
    const server = createServer(rpc.handle);
    const port = await listen(server);
    closers.push(async () => {
      server.closeAllConnections();
      server.close();
    });
    const c = new PeerClient({ origin: `http://127.0.0.1:${port}`, nodeId: 'n', auth, clock: systemClock, logger: silentLogger, uploadStallMs: 300, probeBaseMs: 60_000 });
    closers.push(() => c.close());
    async function* endless() {
      const chunk = Buffer.alloc(1024 * 1024, 7);
      for (;;) yield chunk;
    }
    const t0 = Date.now();
    const err = await c.rpcUpload(storagePath('/data/d1', 'stuck'), [], endless()).catch((e: unknown) => e);
    expect(entered).toBe(true);
    expect((err as SvcError).code).toBe('DiskNotFound');
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(c.isOnline()).toBe(false);
  });

  it("an upload the peer refuses half way (its drive is full) fails with the peer's error, and the peer stays online", async () => {
    const rpc = new RpcServer({ auth, logger: silentLogger });
    let calls = 0;
    rpc.registerDrive('/data/d1', {
      // Reads a little of a large body, then gives up as a full drive does.
      full: {
        kind: 'upload',
        handle: async (_args, body) => {
          calls++;
          let n = 0;
          for await (const c of body) {
            n += c.length;
            if (n >= 1 << 20) throw new SvcError('XSvcStorageFull', 'no space left');
          }
          return n;
        },
      },
      echo: { kind: 'unary', handle: async (args) => ({ args }) },
    });
    const server = createServer(rpc.handle);
    const port = await listen(server);
    closers.push(async () => {
      server.closeAllConnections();
      server.close();
    });
    const c = new PeerClient({ origin: `http://127.0.0.1:${port}`, nodeId: 'n', auth, clock: systemClock, logger: silentLogger, probeBaseMs: 60_000 });
    closers.push(() => c.close());
    const states: boolean[] = [];
    c.onStateChange((o) => states.push(o));
    async function* big() {
      // 64 MiB: far more than the socket buffers hold while the peer answers.
      for (let i = 0; i < 256; i++) yield Buffer.alloc(256 * 1024, i);
    }
    for (let i = 0; i < 5; i++) {
      const err = await c.rpcUpload(storagePath('/data/d1', 'full'), [], big()).catch((e: unknown) => e);
      expect((err as SvcError).code).toBe('XSvcStorageFull');
      expect(c.isOnline()).toBe(true);
    }
    expect(calls).toBe(5);
    expect(states).toEqual([]);
    expect(await c.rpcCall(storagePath('/data/d1', 'echo'), [2])).toEqual({ args: [2] });

    // On the wire: once it has answered, the peer goes on reading (and dropping) the body
    // rather than closing: a close with unread data is a reset, and over a real network the
    // reset overtakes the answer (the caller then saw EPIPE and took the node offline).
    const path = storagePath('/data/d1', 'full');
    const args = encodeMsg([]).toString('base64url');
    const sock = connect(port, '127.0.0.1');
    closers.push(async () => void sock.destroy());
    await once(sock, 'connect');
    let answer = '';
    let closedByPeer: string | undefined;
    sock.on('data', (d: Buffer) => (answer += d.toString('latin1')));
    sock.on('end', () => (closedByPeer ??= 'end'));
    sock.on('error', (e: NodeJS.ErrnoException) => (closedByPeer ??= e.code ?? e.message));
    const write = async (b: Buffer | string) => {
      if (!sock.write(b)) await Promise.race([once(sock, 'drain'), once(sock, 'close')]);
    };
    await write(`POST ${path} HTTP/1.1\r\nhost: peer\r\ntransfer-encoding: chunked\r\n${RPC_ARGS_HEADER}: ${args}\r\n${RPC_TOKEN_HEADER}: ${auth.sign('POST', path, 'n', Buffer.from(args, 'utf8'))}\r\n\r\n`);
    const chunk = Buffer.alloc(256 * 1024, 1);
    const frame = Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]);
    for (let i = 0; i < 64 && !answer.includes('\r\n\r\n'); i++) await write(frame);
    for (let i = 0; i < 200 && !answer.includes('\r\n\r\n'); i++) await new Promise((r) => setTimeout(r, 10));
    expect(answer).toMatch(/^HTTP\/1\.1 507 /);
    expect(answer.toLowerCase()).not.toContain('connection: close');
    // 16 MiB more after the answer, then the body's end: all taken.
    for (let i = 0; i < 64; i++) await write(frame);
    await write('0\r\n\r\n');
    await new Promise((r) => setTimeout(r, 200));
    expect(closedByPeer).toBeUndefined();
  });

  it('marks an unreachable peer offline, fails fast, and probes it back online', async () => {
    const s = startServer();
    const port = await s.port;
    const c = client(port);
    expect(await c.rpcCall(peerPath('health'), undefined)).toEqual({ ok: true });
    s.server.closeAllConnections();
    await new Promise<void>((r) => s.server.close(() => r()));

    const states: boolean[] = [];
    c.onStateChange((o) => states.push(o));
    const err = await c.rpcCall(storagePath('/data/d1', 'echo'), []).catch((e: unknown) => e);
    expect((err as SvcError).code).toBe('DiskNotFound');
    expect(c.isOnline()).toBe(false);
    const t0 = Date.now();
    const fast = await c.rpcCall(storagePath('/data/d1', 'echo'), []).catch((e: unknown) => e);
    expect((fast as SvcError).code).toBe('DiskNotFound');
    expect(Date.now() - t0).toBeLessThan(50);

    const again = startServer(port);
    await again.port;
    closers.push(async () => void again.server.close());
    const deadline = Date.now() + 5_000;
    while (!c.isOnline() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(c.isOnline()).toBe(true);
    expect(states).toEqual([false, true]);
    expect(await c.rpcCall(storagePath('/data/d1', 'echo'), [1])).toEqual({ args: [1] });
  });

  it('probeNow (a call from that peer arrived) brings an offline peer back without waiting out the backoff', async () => {
    const s = startServer();
    const port = await s.port;
    const c = new PeerClient({ origin: `http://127.0.0.1:${port}`, nodeId: 'n', auth, clock: systemClock, logger: silentLogger, probeBaseMs: 60_000, probeMaxMs: 60_000 });
    closers.push(() => c.close());
    s.server.closeAllConnections();
    await new Promise<void>((r) => s.server.close(() => r()));
    await c.rpcCall(peerPath('health'), undefined).catch(() => undefined);
    expect(c.isOnline()).toBe(false);
    const again = startServer(port);
    await again.port;
    closers.push(async () => void again.server.close());
    // The backoff is a minute: without probeNow nothing happens for that long.
    await new Promise((r) => setTimeout(r, 300));
    expect(c.isOnline()).toBe(false);
    c.probeNow();
    const deadline = Date.now() + 5_000;
    while (!c.isOnline() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(c.isOnline()).toBe(true);
  });

  it('an RpcServer reports each authenticated caller (onCaller), never an unauthenticated one', async () => {
    const callers: string[] = [];
    const rpc = new RpcServer({ auth, logger: silentLogger, onCaller: (id) => callers.push(id) });
    const server = createServer(rpc.handle);
    const port = await listen(server);
    closers.push(async () => void server.close());
    const c = new PeerClient({ origin: `http://127.0.0.1:${port}`, nodeId: '127.0.0.7:9000', auth, clock: systemClock, logger: silentLogger });
    closers.push(() => c.close());
    expect(await c.rpcCall(peerPath('health'), undefined)).toEqual({ ok: true });
    const forged = await request(`http://127.0.0.1:${port}${peerPath('health')}`, { method: 'POST', body: encodeMsg(undefined) });
    await forged.body.dump();
    expect(forged.statusCode).toBe(403);
    expect(callers).toEqual(['127.0.0.7:9000']);
  });

  it('treats an unresolvable host as offline, not fatal', async () => {
    const c = new PeerClient({
      origin: 'http://svc-peer-does-not-exist.invalid:9000',
      nodeId: 'n',
      auth,
      clock: systemClock,
      logger: silentLogger,
      probeBaseMs: 1_000,
    });
    closers.push(() => c.close());
    const err = await c.rpcCall(peerPath('health'), undefined).catch((e: unknown) => e);
    expect((err as SvcError).code).toBe('DiskNotFound');
    expect(c.isOnline()).toBe(false);
  });

  it('refuses a well-signed token from a node that is not a member of the cluster', async () => {
    const rpc = new RpcServer({ auth, logger: silentLogger, isMember: (id) => id === 'member:1' });
    let called = 0;
    rpc.registerPeer({ ping: { kind: 'unary', handle: async () => ++called } });
    const srv = createServer(rpc.handle);
    const port = await listen(srv);
    closers.push(() => new Promise<void>((r) => srv.close(() => r())));
    const call = async (nodeId: string) => {
      const body = encodeMsg(null);
      const res = await request(`http://127.0.0.1:${port}${peerPath('ping')}`, { method: 'POST', body, headers: { [RPC_TOKEN_HEADER]: auth.sign('POST', peerPath('ping'), nodeId, body) } });
      await res.body.dump();
      return res.statusCode;
    };
    expect(await call('stranger:9')).toBe(403);
    expect(called).toBe(0);
    expect(await call('member:1')).toBe(200);
    expect(called).toBe(1);
  });
});
