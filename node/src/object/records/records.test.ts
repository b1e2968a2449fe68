import { describe, expect, it } from 'vitest';
import { hasCode } from '../../util/errors.ts';
import { decodeRecord, encodeRecord, type RecordKind } from './envelope.ts';
import { decodePoolMeta, encodePoolMeta, type PoolMeta, projectPoolMeta, queuedEntry, withPoolEntries } from './pool-meta.ts';
import { decodeRebalanceMeta, emptyProgress, emptyStopPropagation, encodeRebalanceMeta, type RebalanceMeta, rebalanceRunning } from './rebalance-meta.ts';

const KIND: RecordKind = { magic: 'SVTT', name: 'test.bin', major: 1, minor: 2 };

function corrupt(fn: () => unknown): boolean {
  try {
    fn();
    return false;
  } catch (err) {
    return hasCode(err, 'FileCorrupt');
  }
}

describe('record envelope', () => {
  it('round-trips a body with its minor version', () => {
    const b = encodeRecord(KIND, { a: 1, s: 'x' });
    expect(b.toString('latin1', 0, 4)).toBe('SVTT');
    expect(decodeRecord(KIND, b)).toEqual({ minor: 2, body: { a: 1, s: 'x' } });
  });
  it('refuses a flipped byte, a truncation, another magic and a newer major as FileCorrupt', () => {
    const b = encodeRecord(KIND, { a: 1 });
    for (let i = 12; i < b.length; i++) {
      const c = Buffer.from(b);
      c[i]! ^= 0x40;
      expect(corrupt(() => decodeRecord(KIND, c)), `byte ${i}`).toBe(true);
    }
    expect(corrupt(() => decodeRecord(KIND, b.subarray(0, b.length - 1)))).toBe(true);
    expect(corrupt(() => decodeRecord({ ...KIND, magic: 'SVXX' }, b))).toBe(true);
    expect(() => decodeRecord({ ...KIND, major: 2 }, b)).toThrow(/newer svc/);
    // a newer minor of the same major is readable
    expect(decodeRecord({ ...KIND, minor: 0 }, b).minor).toBe(2);
  });
});

describe('pool.bin', () => {
  const meta: PoolMeta = {
    pools: [
      { cmdline: '/a/d{1...4}', id: 0, lastUpdate: 0, decommission: null },
      { cmdline: '/b/d{1...4}', id: 1, lastUpdate: 1_700_000_000_000, decommission: { ...queuedEntry(1_700_000_000_000, 1000, 400, ['photos', 'logs']), lastError: 'x' } },
    ],
  };
  it('round-trips entries', () => {
    expect(decodePoolMeta(encodePoolMeta(meta))).toEqual(meta);
  });
  it('refuses a malformed entry and a pool listed twice', () => {
    const bad = { pools: [{ ...meta.pools[1]!, decommission: { ...meta.pools[1]!.decommission!, state: 'draining' as never } }] };
    expect(corrupt(() => decodePoolMeta(encodePoolMeta(bad)))).toBe(true);
    expect(corrupt(() => decodePoolMeta(encodePoolMeta({ pools: [meta.pools[0]!, meta.pools[0]!] })))).toBe(true);
  });
  it('follows pools by command line when the pool list changes', () => {
    // pool /a was drained and removed: /b is now pool 0, a new /c is pool 1
    const p = projectPoolMeta(meta, ['/b/d{1...4}', '/c/d{1...4}']);
    expect(p.pools.map((x) => [x.id, x.cmdline, x.decommission?.state ?? null])).toEqual([
      [0, '/b/d{1...4}', 'queued'],
      [1, '/c/d{1...4}', null],
    ]);
    expect(p.removed.map((x) => x.cmdline)).toEqual(['/a/d{1...4}']);
    const cleared = withPoolEntries(meta, [{ ...p.pools[0]!, decommission: null, lastUpdate: 5 }]);
    expect(cleared.pools.find((x) => x.cmdline === '/b/d{1...4}')).toEqual({ cmdline: '/b/d{1...4}', id: 0, lastUpdate: 5, decommission: null });
    expect(cleared.pools).toHaveLength(2);
  });
});

describe('rebalance.bin', () => {
  const meta: RebalanceMeta = {
    id: '6942e265-0000-4000-8000-000000000000',
    startedAt: 10,
    stoppedAt: 0,
    stopPropagation: { ...emptyStopPropagation(), failedPeers: ['node3:9000'] },
    pools: [
      {
        cmdline: '/a/d{1...4}',
        id: 0,
        participating: true,
        state: 'started',
        stopping: false,
        initFreeSpace: 100,
        initCapacity: 1000,
        lastError: null,
        warningCount: 1,
        warnings: [{ bucket: 'b', object: 'o', message: 'left behind', at: 11 }],
        progress: { ...emptyProgress(), objects: 3, bytes: 30, remainingBuckets: ['x'] },
      },
    ],
  };
  it('round-trips, and knows when it is running', () => {
    expect(decodeRebalanceMeta(encodeRebalanceMeta(meta))).toEqual(meta);
    expect(rebalanceRunning(meta)).toBe(true);
    expect(rebalanceRunning({ ...meta, pools: [{ ...meta.pools[0]!, state: 'stopped' }] })).toBe(false);
    expect(rebalanceRunning(undefined)).toBe(false);
  });
  it('refuses a record of the other kind', () => {
    expect(corrupt(() => decodeRebalanceMeta(encodePoolMeta({ pools: [] })))).toBe(true);
  });
});
