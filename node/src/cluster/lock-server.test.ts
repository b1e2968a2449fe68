import { describe, expect, it } from 'vitest';
import { ManualClock } from '../util/clock.ts';
import { silentLogger } from '../util/logger.ts';
import { ClockSkews } from './clock-skew.ts';
import { DEAD_OWNER_AFTER_MS, LOCK_VALIDITY_MS, LockServer } from './lock-server.ts';

const args = (uid: string, owner: string) => ({ uid, owner, resources: ['b/k'] });

describe('lock server: a dead holder', () => {
  it('drops a grant whose owner node is offline and stale, long before its validity; keeps a living owner\'s', async () => {
    const clock = new ManualClock(1_000_000);
    const offline = new Set<string>();
    const s = new LockServer({ clock, logger: silentLogger, ownerAlive: (owner) => !offline.has(owner.slice(0, owner.lastIndexOf('#'))) });
    expect(await s.lock(args('u1', 'node-a:9000#x'))).toBe(true);
    await clock.advance(DEAD_OWNER_AFTER_MS + 1);
    // Its node is still online: the grant stands (it may be a slow refresh).
    expect(await s.lock(args('u2', 'node-b:9000#y'))).toBe(false);
    offline.add('node-a:9000');
    // Offline and not refreshed for 12 s: gone, well before the minute of validity.
    expect(await s.lock(args('u2', 'node-b:9000#y'))).toBe(true);
    expect(DEAD_OWNER_AFTER_MS).toBeLessThan(LOCK_VALIDITY_MS / 4);
  });

  it('keeps a fresh grant even when its owner node just went offline (it refreshed moments ago)', async () => {
    const clock = new ManualClock(1_000_000);
    const s = new LockServer({ clock, logger: silentLogger, ownerAlive: () => false });
    expect(await s.rlock(args('r1', 'node-a:9000#x'))).toBe(true);
    await clock.advance(1_000);
    expect(await s.lock(args('w1', 'node-b:9000#y'))).toBe(false);
    await clock.advance(DEAD_OWNER_AFTER_MS);
    expect(await s.lock(args('w1', 'node-b:9000#y'))).toBe(true);
  });
});

describe('clock skew per peer', () => {
  it('smooths what the calls show, warns once a minute above the bound, and lists every peer', async () => {
    const clock = new ManualClock(5_000_000);
    const warnings: unknown[] = [];
    const logger = { ...silentLogger, warn: (o: unknown) => warnings.push(o) } as unknown as typeof silentLogger;
    const k = new ClockSkews({ clock, logger });
    k.record('b:9000', 5);
    k.record('b:9000', 15);
    expect(k.list()).toEqual([{ peer: 'b:9000', skewMs: 7, at: 5_000_000 }]);
    expect(warnings).toEqual([]);
    k.record('c:9000', -3_000);
    k.record('c:9000', -3_100);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ event: 'peer_clock_skew', peer: 'c:9000', skewMs: -3000 });
    await clock.advance(61_000);
    k.record('c:9000', -3_000);
    expect(warnings).toHaveLength(2);
  });
});
