import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { type Clock, ManualClock } from '../util/clock.ts';
import { SvcError } from '../util/errors.ts';
import { createLogger, type Logger, silentLogger } from '../util/logger.ts';
import { DistLocker, lockQuorum } from './dist-lock.ts';
import { LOCK_VALIDITY_MS, LockServer, lockRpcService } from './lock-server.ts';
import { RemoteLocker } from './remote-locker.ts';
import { RpcAuth } from './rpc-auth.ts';
import { PeerClient } from './rpc-client.ts';
import { RpcServer } from './rpc-server.ts';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length > 0) await closers.pop()!();
});

async function until(cond: () => boolean, ms = 3_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** n real lock servers on 127.0.0.1:0, sharing `serverClock`. */
async function lockCluster(n: number, serverClock: ManualClock) {
  const auth = new RpcAuth('root:secret', serverClock);
  const nodes: { server: Server; locks: LockServer; origin: string }[] = [];
  for (let i = 0; i < n; i++) {
    const locks = new LockServer({ clock: serverClock, logger: silentLogger });
    const rpc = new RpcServer({ auth, logger: silentLogger });
    rpc.registerPeer(lockRpcService(locks));
    const server = createServer(rpc.handle);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    nodes.push({ server, locks, origin });
    closers.push(async () => {
      server.closeAllConnections();
      server.close();
    });
  }
  /** A DistLocker for one holder node, with its own clock. */
  const locker = (owner: string, clock: Clock, logger: Logger = silentLogger) => {
    const lockers = nodes.map((node) => {
      const peer = new PeerClient({ origin: node.origin, nodeId: owner, auth, clock, logger: silentLogger });
      closers.push(() => peer.close());
      return new RemoteLocker(peer);
    });
    return new DistLocker({ lockers, owner, clock, logger, retryMinMs: 1, retryMaxMs: 2 });
  };
  const kill = async (i: number) => {
    const node = nodes[i]!;
    node.server.closeAllConnections();
    await new Promise<void>((r) => node.server.close(() => r()));
  };
  return { nodes, locker, kill };
}

async function refused(p: Promise<unknown>): Promise<string> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SvcError);
  return (err as SvcError).code;
}

describe('lockQuorum', () => {
  it('follows the dsync rule with the split-brain guard', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8, 16].map(lockQuorum)).toEqual([
      { read: 1, write: 1 },
      { read: 1, write: 2 },
      { read: 2, write: 2 },
      { read: 2, write: 3 },
      { read: 3, write: 3 },
      { read: 3, write: 4 },
      { read: 4, write: 4 },
      { read: 4, write: 5 },
      { read: 8, write: 9 },
    ]);
  });
});

describe('LockServer', () => {
  it('grants one writer or many readers, atomically over resources', async () => {
    const clock = new ManualClock(1_000);
    const s = new LockServer({ clock, logger: silentLogger });
    const a = { uid: 'a', owner: 'n1', resources: ['b/x', 'b/y'] };
    expect(await s.lock(a)).toBe(true);
    expect(await s.lock({ uid: 'b', owner: 'n2', resources: ['b/y'] })).toBe(false);
    expect(await s.rlock({ uid: 'r', owner: 'n2', resources: ['b/x'] })).toBe(false);
    expect(await s.lock({ uid: 'c', owner: 'n2', resources: ['b/z', 'b/x'] })).toBe(false);
    expect(await s.lock({ uid: 'c', owner: 'n2', resources: ['b/z'] })).toBe(true);
    expect(await s.unlock(a)).toBe(true);
    expect(await s.rlock({ uid: 'r1', owner: 'n2', resources: ['b/x'] })).toBe(true);
    expect(await s.rlock({ uid: 'r2', owner: 'n3', resources: ['b/x'] })).toBe(true);
    expect(await s.lock({ uid: 'w', owner: 'n3', resources: ['b/x'] })).toBe(false);
    expect(await s.runlock({ uid: 'r1', owner: 'n2', resources: ['b/x'] })).toBe(true);
    expect(await s.runlock({ uid: 'r2', owner: 'n3', resources: ['b/x'] })).toBe(true);
    expect(await s.lock({ uid: 'w', owner: 'n3', resources: ['b/x'] })).toBe(true);
    await expect(s.lock({ uid: '', owner: 'x', resources: ['a'] })).rejects.toThrow(SvcError);
  });

  it('expires a grant that is not refreshed for the validity period', async () => {
    const clock = new ManualClock(1_000);
    const s = new LockServer({ clock, logger: silentLogger });
    const a = { uid: 'a', owner: 'n1', resources: ['b/x'] };
    expect(await s.lock(a)).toBe(true);
    await clock.advance(LOCK_VALIDITY_MS - 1);
    expect(await s.refresh(a)).toBe(true);
    await clock.advance(LOCK_VALIDITY_MS);
    expect(await s.lock({ uid: 'b', owner: 'n2', resources: ['b/x'] })).toBe(false);
    await clock.advance(1);
    expect(await s.refresh(a)).toBe(false);
    expect(await s.lock({ uid: 'b', owner: 'n2', resources: ['b/x'] })).toBe(true);
    expect(s.size()).toBe(1);
  });

  it('a lock request that arrives after its own release (a timed-out attempt, delivered late) is refused, for the validity period', async () => {
    const clock = new ManualClock(1_000);
    const s = new LockServer({ clock, logger: silentLogger });
    const late = { uid: 'late', owner: 'n1', resources: ['b/x'] };
    // The sender gave up on its request and released; the release overtook the request.
    expect(await s.unlock(late)).toBe(false);
    expect(await s.lock(late)).toBe(false);
    expect(await s.runlock({ ...late, uid: 'late-r' })).toBe(false);
    expect(await s.rlock({ ...late, uid: 'late-r' })).toBe(false);
    // Nothing lingers: another holder gets the resource at once.
    expect(await s.lock({ uid: 'next', owner: 'n2', resources: ['b/x'] })).toBe(true);
    expect(await s.unlock({ uid: 'next', owner: 'n2', resources: ['b/x'] })).toBe(true);
    // After the validity period the early release is forgotten.
    await clock.advance(LOCK_VALIDITY_MS + 1);
    s.sweep();
    expect(await s.lock(late)).toBe(true);
  });

  it("drops a restarted node's earlier grants when its new incarnation asks, and only those", async () => {
    const s = new LockServer({ clock: new ManualClock(1_000), logger: silentLogger });
    expect(await s.lock({ uid: 'old-w', owner: 'n1:9000#aaaa', resources: ['b/x'] })).toBe(true);
    expect(await s.rlock({ uid: 'old-r', owner: 'n1:9000#aaaa', resources: ['b/y'] })).toBe(true);
    expect(await s.rlock({ uid: 'other', owner: 'n2:9000#cccc', resources: ['b/y'] })).toBe(true);
    // The same incarnation, or another node, changes nothing.
    expect(await s.lock({ uid: 'x', owner: 'n1:9000#aaaa', resources: ['b/x'] })).toBe(false);
    expect(await s.lock({ uid: 'x', owner: 'n2:9000#cccc', resources: ['b/x'] })).toBe(false);
    // n1 restarted: its first request frees what the killed process held.
    expect(await s.lock({ uid: 'new', owner: 'n1:9000#bbbb', resources: ['b/x'] })).toBe(true);
    expect(await s.refresh({ uid: 'old-r', owner: 'n1:9000#aaaa', resources: ['b/y'] })).toBe(false);
    expect(await s.refresh({ uid: 'other', owner: 'n2:9000#cccc', resources: ['b/y'] })).toBe(true);
    expect(await s.lock({ uid: 'w2', owner: 'n2:9000#cccc', resources: ['b/y'] })).toBe(false);
  });
});

describe('DistLocker over real lock servers', () => {
  it('excludes writers across nodes and shares readers', async () => {
    const clock = new ManualClock(1_000_000);
    const c = await lockCluster(4, clock);
    const n1 = c.locker('n1', clock);
    const n2 = c.locker('n2', clock);
    expect(n1.quorum).toEqual({ read: 2, write: 3 });

    const w = await n1.acquire(['bkt/obj'], { write: true });
    // The timeout names what each locker answered last.
    const lines: Record<string, unknown>[] = [];
    const logged = c.locker('n2', clock, createLogger('warn', { write: (l: string) => lines.push(JSON.parse(l) as Record<string, unknown>) }));
    expect(await refused(logged.acquire(['bkt/obj'], { write: true, timeoutMs: 0 }))).toBe('SlowDown');
    expect(lines.find((l) => l['event'] === 'lock_timeout')).toMatchObject({
      resources: ['bkt/obj'],
      write: true,
      granted: 0,
      quorum: 3,
      lockers: Object.fromEntries(c.nodes.map((n) => [n.origin, 'refused'])),
    });
    expect(await refused(n2.acquire(['bkt/obj'], { write: true, timeoutMs: 0 }))).toBe('SlowDown');
    expect(await refused(n2.acquire(['bkt/obj'], { write: false, timeoutMs: 0 }))).toBe('SlowDown');
    const other = await n2.acquire(['bkt/other'], { write: true, timeoutMs: 0 });
    await other.release();
    await w.release();
    expect(c.nodes.every((n) => n.locks.size() === 0)).toBe(true);

    const r1 = await n1.acquire(['bkt/obj'], { write: false, timeoutMs: 0 });
    const r2 = await n2.acquire(['bkt/obj'], { write: false, timeoutMs: 0 });
    expect(await refused(n2.acquire(['bkt/obj'], { write: true, timeoutMs: 0 }))).toBe('SlowDown');
    await r1.release();
    await r2.release();
    const w2 = await n2.acquire(['bkt/obj'], { write: true, timeoutMs: 0 });
    await w2.release();
  });

  it('closing releases what the node still holds and waits for releases on their way', async () => {
    const clock = new ManualClock(1_000_000);
    const c = await lockCluster(4, clock);
    const n1 = c.locker('n1', clock);
    await n1.acquire(['bkt/kept'], { write: true });
    const dropped = await n1.acquire(['bkt/dropped'], { write: false });
    // Fire and forget, as the namespace locker releases.
    void dropped.release();
    await n1.close();
    expect(c.nodes.map((n) => n.locks.size())).toEqual([0, 0, 0, 0]);
    // Another node gets both at once.
    const n2 = c.locker('n2', clock);
    await (await n2.acquire(['bkt/kept', 'bkt/dropped'], { write: true, timeoutMs: 0 })).release();
  });

  it('waits for a lock released by its holder', async () => {
    const clock = new ManualClock(1_000_000);
    const c = await lockCluster(3, clock);
    const n1 = c.locker('n1', clock);
    const n2 = c.locker('n2', clock);
    const w = await n1.acquire(['bkt/obj'], { write: true });
    let got = false;
    const waiting = n2.acquire(['bkt/obj'], { write: true, timeoutMs: 60_000 }).then((h) => {
      got = true;
      return h;
    });
    // Let a few refused attempts happen (each sleeps on the manual clock).
    for (let i = 0; i < 3; i++) await clock.advance(5);
    expect(got).toBe(false);
    await w.release();
    for (let i = 0; i < 20 && !got; i++) {
      await clock.advance(5);
      await new Promise((r) => setTimeout(r, 5));
    }
    expect(got).toBe(true);
    await (await waiting).release();
  });

  it('a lock held by a killed holder expires after the validity period', async () => {
    const serverClock = new ManualClock(1_000_000);
    const c = await lockCluster(4, serverClock);
    // The holder's own clock never advances: its refresh never runs, exactly
    // as if the process had been killed while holding the lock.
    const dead = c.locker('dead', new ManualClock(1_000_000));
    await dead.acquire(['bkt/obj'], { write: true });
    const n2 = c.locker('n2', serverClock);
    await serverClock.advance(LOCK_VALIDITY_MS / 2);
    expect(await refused(n2.acquire(['bkt/obj'], { write: true, timeoutMs: 0 }))).toBe('SlowDown');
    await serverClock.advance(LOCK_VALIDITY_MS / 2 + 1);
    const h = await n2.acquire(['bkt/obj'], { write: true, timeoutMs: 0 });
    await h.release();
  });

  it('refreshes a held lock so it outlives the validity period', async () => {
    const clock = new ManualClock(1_000_000);
    const c = await lockCluster(4, clock);
    const n1 = c.locker('n1', clock);
    const n2 = c.locker('n2', clock);
    const h = await n1.acquire(['bkt/obj'], { write: true });
    for (let t = 0; t < 2 * LOCK_VALIDITY_MS; t += 10_000) {
      await clock.advance(10_000);
      // Each refresh is a real RPC round; give it time to land.
      await new Promise((r) => setTimeout(r, 30));
    }
    expect(h.lost.aborted).toBe(false);
    expect(await refused(n2.acquire(['bkt/obj'], { write: true, timeoutMs: 0 }))).toBe('SlowDown');
    await h.release();
  });

  it('loses the lock when the refresh quorum fails, and fails fast without quorum', async () => {
    const clock = new ManualClock(1_000_000);
    const c = await lockCluster(4, clock);
    const n1 = c.locker('n1', clock);
    const h = await n1.acquire(['bkt/obj'], { write: true });
    await c.kill(2);
    await c.kill(3);
    await clock.advance(10_000);
    await until(() => h.lost.aborted);
    expect((h.lost.reason as SvcError).code).toBe('ErasureWriteQuorum');
    // 2 of 4 lockers: reads have quorum (2), writes do not (3).
    expect(await refused(n1.acquire(['bkt/x'], { write: true, timeoutMs: 0 }))).toBe('ErasureWriteQuorum');
    expect(n1.quorumAvailable(true)).toBe(false);
    expect(n1.quorumAvailable(false)).toBe(true);
    const r = await n1.acquire(['bkt/x'], { write: false, timeoutMs: 0 });
    await r.release();
  });

  it('two lockers: a write needs both (split-brain guard)', async () => {
    const clock = new ManualClock(1_000_000);
    const c = await lockCluster(2, clock);
    const n1 = c.locker('n1', clock);
    await (await n1.acquire(['b/o'], { write: true })).release();
    await c.kill(1);
    const code = await refused(n1.acquire(['b/o'], { write: true, timeoutMs: 0 }));
    // The first attempt discovers the dead peer (refused quorum), the next fails fast.
    expect(['SlowDown', 'ErasureWriteQuorum']).toContain(code);
    expect(await refused(n1.acquire(['b/o'], { write: true, timeoutMs: 0 }))).toBe('ErasureWriteQuorum');
    await (await n1.acquire(['b/o'], { write: false, timeoutMs: 0 })).release();
  });
});
