/**
 * `.svc.sys` records over two real pools (4 drives each): every pool gets
 * a copy, a copy on one pool only still reads, a write that missed a pool is
 * repaired onto it, deletes are tombstones that outvote a stale copy, and the
 * newest copy wins by lock order even when clocks disagree.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Clock } from '../src/util/clock.ts';
import { systemClock } from '../src/util/clock.ts';
import { codeOf } from './helpers/error-code.ts';
import { makePoolsFixture, type PoolsFixture } from './helpers/pools-fixture.ts';

const enc = (s: string) => Buffer.from(s);
const dec = (b: Uint8Array | undefined) => (b === undefined ? undefined : Buffer.from(b).toString());

describe('sys records across pools', () => {
  let fx: PoolsFixture;
  beforeEach(async () => {
    fx = await makePoolsFixture([
      { drives: 4, standardParity: 2 },
      { drives: 4, standardParity: 1 },
    ]);
  });
  afterEach(async () => fx.cleanup());

  it('a write lands on every pool and reads back from either alone', async () => {
    const r = fx.layer.sysRecords;
    expect(await r.write('pool.bin', enc('v1'))).toEqual({ committed: [0, 1], failed: [] });
    expect(dec(await r.read('pool.bin'))).toBe('v1');
    expect((await r.inspect('pool.bin')).pools.map((p) => p.state)).toEqual(['current', 'current']);
    await fx.poolOffline(0);
    expect(dec(await r.read('pool.bin'))).toBe('v1');
    await fx.poolOnline(0);
    await fx.poolOffline(1);
    expect(dec(await r.read('pool.bin'))).toBe('v1');
  });

  it('a record written before a pool joined reads, and repair copies it to the new pool', async () => {
    await fx.open(1);
    await fx.layer.sysRecords.write('rebalance.bin', enc('before expansion'));
    const r = (await fx.open(2)).sysRecords;
    expect(dec(await r.read('rebalance.bin'))).toBe('before expansion');
    expect((await r.inspect('rebalance.bin')).pools.map((p) => p.state)).toEqual(['current', 'missing']);
    const rep = await r.repair('rebalance.bin');
    expect(rep.repaired).toEqual([1]);
    expect(rep.failed).toEqual([]);
    expect((await r.inspect('rebalance.bin')).pools.map((p) => p.state)).toEqual(['current', 'current']);
    await fx.poolOffline(0);
    expect(dec(await r.read('rebalance.bin'))).toBe('before expansion');
  });

  it('a write that misses an unreachable pool succeeds, names the pool, and is repaired when it returns', async () => {
    const r = fx.layer.sysRecords;
    await r.write('root-heal-t1.json', enc('old'));
    await fx.poolOffline(1);
    const w = await r.write('root-heal-t1.json', enc('new'));
    expect(w.committed).toEqual([0]);
    expect(w.failed.map((f) => [f.pool, f.error.code])).toEqual([[1, 'ErasureWriteQuorum']]);
    expect(await codeOf(r.write('root-heal-t1.json', enc('all'), { require: 'all' }))).toBe('ErasureWriteQuorum');
    await fx.poolOnline(1);
    // Pool 1 holds the older copy: the newest wins, and repair replaces it.
    expect((await r.inspect('root-heal-t1.json')).pools.map((p) => p.state)).toEqual(['current', 'stale']);
    expect(dec(await r.read('root-heal-t1.json'))).toBe('all');
    expect((await r.repair('root-heal-t1.json')).repaired).toEqual([1]);
    await fx.poolOffline(0);
    expect(dec(await r.read('root-heal-t1.json'))).toBe('all');
  });

  it('a delete is a tombstone that outvotes a stale copy, and is removed once every pool has it', async () => {
    const r = fx.layer.sysRecords;
    await r.write('pool.bin', enc('entry'));
    await fx.poolOffline(1);
    expect((await r.delete('pool.bin')).committed).toEqual([0]);
    await fx.poolOnline(1);
    expect(await r.read('pool.bin')).toBeUndefined();
    const view = await r.inspect('pool.bin');
    expect(view.winner?.data).toBeUndefined();
    expect(view.pools.map((p) => p.state)).toEqual(['current', 'stale']);
    expect((await r.repair('pool.bin')).repaired).toEqual([1]);
    await fx.poolOffline(0);
    expect(await r.read('pool.bin')).toBeUndefined();
    await fx.poolOnline(0);
    // Every pool holds the tombstone: the next repair removes it everywhere.
    await r.repair('pool.bin');
    const after = await r.inspect('pool.bin');
    expect(after.winner).toBeUndefined();
    expect(after.pools.map((p) => p.state)).toEqual(['missing', 'missing']);
    // A new write after the delete wins again.
    await r.write('pool.bin', enc('again'));
    expect(dec(await r.read('pool.bin'))).toBe('again');
  });

  it('absent means absent only when every pool answered', async () => {
    const r = fx.layer.sysRecords;
    expect(await r.read('nothing.bin')).toBeUndefined();
    await fx.poolOffline(1);
    expect(await codeOf(r.read('nothing.bin'))).toBe('ErasureReadQuorum');
  });

  it('newest follows the lock order, not the clock: a writer with a slow clock still replaces a copy from the future', async () => {
    const skewed = (offset: number): Clock => ({ ...systemClock, now: () => Date.now() + offset });
    await fx.open(2, { clock: skewed(3_600_000) });
    await fx.layer.sysRecords.write('pool.bin', enc('from the future'));
    const r = (await fx.open(2, { clock: skewed(-3_600_000) })).sysRecords;
    await fx.poolOffline(0);
    await r.write('pool.bin', enc('later, slow clock'));
    await fx.poolOnline(0);
    expect(dec(await r.read('pool.bin'))).toBe('later, slow clock');
  });

  it('update is a read-modify-write; null leaves the record alone, undefined deletes it', async () => {
    const r = fx.layer.sysRecords;
    await r.update('counter.bin', (cur) => enc(String(Number(dec(cur) ?? '0') + 1)));
    await r.update('counter.bin', (cur) => enc(String(Number(dec(cur) ?? '0') + 1)));
    expect(dec(await r.read('counter.bin'))).toBe('2');
    expect(await r.update('counter.bin', () => null)).toBeUndefined();
    expect(dec(await r.read('counter.bin'))).toBe('2');
    await r.update('counter.bin', () => undefined);
    expect(await r.read('counter.bin')).toBeUndefined();
  });

  it('refuses paths inside the staging and multipart areas', async () => {
    expect(await codeOf(fx.layer.sysRecords.write('tmp/x', enc('x')))).toBe('InvalidArgument');
    expect(await codeOf(fx.layer.sysRecords.write('multipart/x', enc('x')))).toBe('InvalidArgument');
    expect(await codeOf(fx.layer.sysRecords.read('a/../b'))).toBe('InvalidObjectName');
  });
});
