import { describe, expect, it } from 'vitest';
import { code, codeOf } from '../../test/helpers/error-code.ts';
import { ManualClock } from '../util/clock.ts';
import { BucketQuotas, decodeQuota, encodeQuota, parseQuotaRequest } from './quota.ts';
import type { UsageReport } from './usage.ts';

const body = (v: unknown) => Buffer.from(JSON.stringify(v));

describe('quota documents (madmin BucketQuota)', () => {
  it('reads what mc quota set and clear send, and refuses what svc cannot enforce', () => {
    expect(parseQuotaRequest(body({ size: 1024, quotatype: 'hard' }))).toEqual({ size: 1024, type: 'hard' });
    expect(parseQuotaRequest(body({ quota: 2048, size: 0, rate: 0, requests: 0 }))).toEqual({ size: 2048, type: 'hard' });
    expect(parseQuotaRequest(body({ quota: 0, size: 0, rate: 0, requests: 0 }))).toBeUndefined();
    expect(parseQuotaRequest(Buffer.alloc(0))).toBeUndefined();
    expect(code(() => parseQuotaRequest(body({ size: 1, rate: 10 })))).toBe('NotImplemented');
    expect(code(() => parseQuotaRequest(body({ size: 1, quotatype: 'fifo' })))).toBe('InvalidArgument');
    expect(code(() => parseQuotaRequest(body({ size: -1 })))).toBe('InvalidArgument');
    expect(code(() => parseQuotaRequest(body({ size: 1.5 })))).toBe('InvalidArgument');
    expect(code(() => parseQuotaRequest(Buffer.from('{nope')))).toBe('InvalidArgument');
    expect(code(() => parseQuotaRequest(body([1])))).toBe('InvalidArgument');
    expect(decodeQuota(encodeQuota({ size: 77, type: 'hard' }))).toEqual({ size: 77, type: 'hard' });
  });
});

function usage(size: number, scannedAt: number[]): UsageReport {
  return {
    lastUpdate: Math.max(...scannedAt),
    objects: 1,
    versions: 1,
    deleteMarkers: 0,
    size,
    rawSize: size * 2,
    buckets: { b: { objects: 1, versions: 1, deleteMarkers: 0, size, rawSize: size * 2 } },
    pools: [],
    sets: scannedAt.length,
    perSet: scannedAt.map((t, set) => ({ pool: 0, set, scannedAt: t, objects: 0, versions: 0, deleteMarkers: 0, size: 0, rawSize: 0 })),
  };
}

function harness(quota: number | undefined, initial: UsageReport | undefined) {
  const clock = new ManualClock(1_000_000);
  let report = initial;
  let reads = 0;
  const q = new BucketQuotas({
    config: async (b) => (b === 'b' && quota !== undefined ? encodeQuota({ size: quota, type: 'hard' }) : undefined),
    usage: async () => {
      reads++;
      return report;
    },
    clock,
    usageMaxAgeMs: 1_000,
  });
  return {
    q,
    clock,
    reads: () => reads,
    setUsage: (u: UsageReport | undefined) => {
      report = u;
    },
  };
}

describe('BucketQuotas', () => {
  it('admits anything to a bucket without a quota, and never reads the usage for it', async () => {
    const h = harness(undefined, usage(10, [1]));
    const r = await h.q.admit('b', 10 ** 12);
    r.commit(10 ** 12);
    expect(h.reads()).toBe(0);
  });

  it('refuses a write that would take the scanned usage over the quota', async () => {
    const h = harness(100, usage(60, [999_000]));
    expect(await codeOf(h.q.admit('b', 41))).toBe('XSvcAdminBucketQuotaExceeded');
    (await h.q.admit('b', 40)).release();
    // a bucket exactly at its quota refuses any byte more
    h.setUsage(usage(100, [999_000]));
    await h.clock.advance(1_000);
    expect(await codeOf(h.q.admit('b', 1))).toBe('XSvcAdminBucketQuotaExceeded');
  });

  it('counts writes in flight, and stored writes until a scan of every set ended after them', async () => {
    const h = harness(100, usage(50, [999_000, 999_500]));
    const a = await h.q.admit('b', 30);
    expect(await h.q.count('b')).toEqual({ scanned: 50, inFlight: 30, unscanned: 0, total: 80 });
    expect(await codeOf(h.q.admit('b', 21))).toBe('XSvcAdminBucketQuotaExceeded');
    a.commit(30);
    expect(await h.q.count('b')).toEqual({ scanned: 50, inFlight: 0, unscanned: 30, total: 80 });
    expect(await codeOf(h.q.admit('b', 21))).toBe('XSvcAdminBucketQuotaExceeded');
    // a newer scan of one set only: the write may not be in it yet
    await h.clock.advance(5_000);
    h.setUsage(usage(80, [1_004_000, 999_500]));
    expect((await h.q.count('b')).total).toBe(110);
    // every set scanned after the write: the scan counts it, the node no longer does
    await h.clock.advance(2_000);
    h.setUsage(usage(80, [1_004_000, 1_006_000]));
    expect(await h.q.count('b')).toEqual({ scanned: 80, inFlight: 0, unscanned: 0, total: 80 });
    (await h.q.admit('b', 20)).release();
  });

  it('a released write counts no more; commit and release end a reservation once', async () => {
    const h = harness(100, usage(0, [1]));
    const a = await h.q.admit('b', 100);
    expect(await codeOf(h.q.admit('b', 1))).toBe('XSvcAdminBucketQuotaExceeded');
    a.release();
    a.commit(100);
    expect((await h.q.count('b')).total).toBe(0);
  });

  it('two admissions at once never both take the last bytes', async () => {
    const h = harness(100, usage(50, [1]));
    const results = await Promise.allSettled([h.q.admit('b', 40), h.q.admit('b', 40)]);
    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
  });

  it('reads the usage at most once per interval, and keeps the last one when a read fails', async () => {
    const h = harness(100, usage(10, [1]));
    await h.q.count('b');
    await h.q.count('b');
    expect(h.reads()).toBe(1);
    await h.clock.advance(1_000);
    await h.q.count('b');
    expect(h.reads()).toBe(2);
  });

  it('before any scan, counts this node\'s writes only', async () => {
    const h = harness(100, undefined);
    (await h.q.admit('b', 70)).commit(70);
    expect(await codeOf(h.q.admit('b', 31))).toBe('XSvcAdminBucketQuotaExceeded');
  });
});
