import { describe, expect, it } from 'vitest';
import { ManualClock } from '../util/clock.ts';
import { silentLogger } from '../util/logger.ts';
import { ClockSkews, CONFIRM_MS } from './clock-skew.ts';
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

/** A ClockSkews on `clock` whose log warnings are collected. */
function skewsWarning(clock: ManualClock): { k: ClockSkews; warnings: unknown[] } {
  const warnings: unknown[] = [];
  const logger = { ...silentLogger, warn: (o: unknown) => warnings.push(o) } as unknown as typeof silentLogger;
  return { k: new ClockSkews({ clock, logger }), warnings };
}

describe('clock skew per peer', () => {
  it('takes the least delayed call, warns once the skew held for a while and then once a minute, and lists every peer', async () => {
    const clock = new ManualClock(5_000_000);
    const { k, warnings } = skewsWarning(clock);
    k.record('b:9000', 15);
    k.record('b:9000', 5);
    k.record('b:9000', 9);
    expect(k.list()).toEqual([{ peer: 'b:9000', skewMs: 5, at: 5_000_000 }]);
    expect(warnings).toEqual([]);
    k.record('c:9000', -3_000);
    k.record('c:9000', -2_900);
    expect(warnings).toEqual([]);
    await clock.advance(CONFIRM_MS);
    k.record('c:9000', -2_950);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ event: 'peer_clock_skew', peer: 'c:9000', skewMs: -3000 });
    await clock.advance(61_000);
    k.record('c:9000', -3_000);
    expect(warnings).toHaveLength(2);
  });

  it('does not take calls that queued while this node was frozen for a clock off', async () => {
    const clock = new ManualClock(5_000_000);
    const { k, warnings } = skewsWarning(clock);
    k.record('b:9000', 3);
    await clock.advance(12_000);
    // SIGCONT: the calls sent during the 12 s stop arrive at once, each as late as it waited.
    for (const late of [12_000, 9_000, 6_000, 2_500]) k.record('b:9000', late);
    await clock.advance(CONFIRM_MS);
    k.record('b:9000', 4);
    await clock.advance(CONFIRM_MS);
    k.record('b:9000', 2);
    expect(warnings).toEqual([]);
    expect(k.list()[0]!.skewMs).toBe(2);
  });
});
