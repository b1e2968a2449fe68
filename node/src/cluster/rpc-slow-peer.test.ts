/**
 * The responsiveness watch of the internode client (issue 27 item 3): a peer
 * whose process is stopped still accepts connections (the kernel does) but
 * never answers. Calls to it must fail within well under a second, and the
 * peer go offline so later calls fail at once; a peer that is merely slow
 * on one call but answers its health ping must not be taken offline.
 */
import { once } from 'node:events';
import { createServer as createHttpServer } from 'node:http';
import { createServer as createTcpServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../util/clock.ts';
import { silentLogger } from '../util/logger.ts';
import { RpcAuth } from './rpc-auth.ts';
import { PeerClient } from './rpc-client.ts';
import { RpcServer } from './rpc-server.ts';
import { storagePath } from './rpc-wire.ts';

const auth = new RpcAuth('access:secret', systemClock);
const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (closers.length > 0) await closers.pop()!();
});

/** A TCP server that accepts and never says a word: a stopped process's port. */
async function mutePeer(): Promise<string> {
  const sockets = new Set<Socket>();
  const srv = createTcpServer((s) => {
    sockets.add(s);
    s.on('error', () => undefined);
  });
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  closers.push(() => {
    for (const s of sockets) s.destroy();
    srv.close();
  });
  return `http://127.0.0.1:${(srv.address() as AddressInfo).port}`;
}

function client(origin: string): PeerClient {
  const c = new PeerClient({ origin, nodeId: 'self:1', auth, clock: systemClock, logger: silentLogger, stallCheckMs: 250, pingTimeoutMs: 500 });
  closers.push(() => c.close());
  return c;
}

describe('internode client: unresponsive peers', () => {
  it('fails the calls waiting on a peer that stopped answering within a second, and takes it offline', async () => {
    const c = client(await mutePeer());
    const t0 = performance.now();
    const results = await Promise.allSettled([
      c.rpcCall(storagePath('/d1', 'readXlMeta'), ['b', 'k']),
      c.rpcCall(storagePath('/d2', 'readXlMeta'), ['b', 'k']),
      c.rpcDownload(storagePath('/d1', 'readFileStream'), ['b', 'k/part.1', 0, 10]),
    ]);
    const took = performance.now() - t0;
    expect(took).toBeLessThan(1_500);
    for (const r of results) expect(r).toMatchObject({ status: 'rejected', reason: { code: 'DiskNotFound' } });
    expect(c.isOnline()).toBe(false);
    // Later calls fail at once.
    const t1 = performance.now();
    await expect(c.rpcCall(storagePath('/d1', 'readXlMeta'), ['b', 'k'])).rejects.toMatchObject({ code: 'DiskNotFound' });
    expect(performance.now() - t1).toBeLessThan(50);
  });

  it('keeps a slow but answering peer online: one long call is not a dead node', async () => {
    const rpc = new RpcServer({ auth, logger: silentLogger });
    rpc.registerDrive('/d1', {
      slow: {
        kind: 'unary',
        handle: async () => {
          await new Promise((r) => setTimeout(r, 1_500));
          return 'done';
        },
      },
    });
    const srv = createHttpServer(rpc.handle);
    srv.listen(0, '127.0.0.1');
    await once(srv, 'listening');
    closers.push(() => {
      srv.closeAllConnections();
      srv.close();
    });
    const c = client(`http://127.0.0.1:${(srv.address() as AddressInfo).port}`);
    expect(await c.rpcCall(storagePath('/d1', 'slow'), [])).toBe('done');
    expect(c.isOnline()).toBe(true);
  });
});
