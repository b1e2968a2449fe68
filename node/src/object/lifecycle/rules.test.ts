import { describe, expect, it } from 'vitest';
import { DAY_MS, expiryOf, type LifecycleConfig, type LifecycleRule, nextMidnight, selectUpload, selectVersions, validateLifecycle, type VersionFacts } from './rules.ts';

const T0 = Date.UTC(2031, 2, 10, 15, 30); // 15:30 UTC
const rule = (r: Partial<LifecycleRule>): LifecycleRule => ({ id: r.id ?? 'r', enabled: true, filter: {}, ...r });
const cfg = (...rules: Partial<LifecycleRule>[]): LifecycleConfig => ({ rules: rules.map(rule) });
const v = (id: string, modTime: number, extra: Partial<VersionFacts> = {}): VersionFacts => ({ versionId: id, deleteMarker: false, modTime, size: 100, tags: '', ...extra });

describe('lifecycle rules: current versions', () => {
  it('expires after the days, rounded up to the next midnight UTC, never before', () => {
    const c = cfg({ expiration: { days: 2 } });
    const due = nextMidnight(T0 + 2 * DAY_MS);
    expect(due).toBe(Date.UTC(2031, 2, 13));
    expect(selectVersions(c, 'k', [v('a', T0)], due - 1, true)).toEqual([]);
    expect(selectVersions(c, 'k', [v('a', T0)], due, true)).toEqual([{ kind: 'expire-current', versionId: 'a', ruleId: 'r', due }]);
    // noncurrent versions are not touched by Expiration
    expect(selectVersions(c, 'k', [v('b', T0 + DAY_MS), v('a', T0)], due + 10 * DAY_MS, true).map((a) => a.versionId)).toEqual(['b']);
  });

  it('a date expires every matching current version from that midnight', () => {
    const date = Date.UTC(2031, 5, 1);
    const c = cfg({ expiration: { date } });
    expect(selectVersions(c, 'k', [v('a', T0)], date - 1, false)).toEqual([]);
    expect(selectVersions(c, 'k', [v('a', date + 5)], date + 10, false)[0]?.kind).toBe('expire-current');
  });

  it('filters: prefix, every tag, strict size bounds, And; disabled rules select nothing', () => {
    const c = cfg({ filter: { prefix: 'logs/', tags: [['t', '1'], ['u', '2']], sizeGreaterThan: 10, sizeLessThan: 1000 }, expiration: { days: 1 } });
    const now = T0 + 5 * DAY_MS;
    const ok = v('a', T0, { tags: 'u=2&t=1', size: 11 });
    expect(selectVersions(c, 'logs/x', [ok], now, false)).toHaveLength(1);
    expect(selectVersions(c, 'data/x', [ok], now, false)).toEqual([]);
    expect(selectVersions(c, 'logs/x', [{ ...ok, tags: 't=1' }], now, false)).toEqual([]);
    expect(selectVersions(c, 'logs/x', [{ ...ok, size: 10 }], now, false)).toEqual([]);
    expect(selectVersions(c, 'logs/x', [{ ...ok, size: 1000 }], now, false)).toEqual([]);
    expect(selectVersions(cfg({ enabled: false, expiration: { days: 1 } }), 'k', [ok], now, false)).toEqual([]);
  });

  it('the earliest matching rule wins', () => {
    const c = cfg({ id: 'slow', expiration: { days: 10 } }, { id: 'fast', filter: { prefix: 'a' }, expiration: { days: 1 } });
    expect(selectVersions(c, 'a1', [v('x', T0)], T0 + 20 * DAY_MS, false)[0]?.ruleId).toBe('fast');
  });
});

describe('lifecycle rules: noncurrent versions and delete markers', () => {
  it('counts noncurrent days from the successor, keeping the newest N noncurrent ones', () => {
    const c = cfg({ noncurrentExpiration: { days: 3, newerNoncurrentVersions: 1 } });
    // newest first: current d, then c (noncurrent since d), b (since c), a (since b)
    const vs = [v('d', T0 + 30 * DAY_MS), v('c', T0 + 20 * DAY_MS), v('b', T0 + 10 * DAY_MS), v('a', T0)];
    const now = T0 + 40 * DAY_MS;
    // c is the 1 kept; b and a are due
    expect(selectVersions(c, 'k', vs, now, true).map((a) => [a.kind, a.versionId])).toEqual([
      ['delete-noncurrent', 'b'],
      ['delete-noncurrent', 'a'],
    ]);
    // b became noncurrent at c's creation (T0+20d): due 3 days later at midnight
    const bDue = nextMidnight(T0 + 23 * DAY_MS);
    expect(selectVersions(c, 'k', vs, bDue - 1, true).map((a) => a.versionId)).toEqual(['a']);
    // an unversioned bucket has no noncurrent versions
    expect(selectVersions(c, 'k', vs, now, false)).toEqual([]);
  });

  it('an expired object delete marker goes with ExpiredObjectDeleteMarker at once, with Days once old enough, not while versions remain', () => {
    const marker = v('m', T0, { deleteMarker: true, size: 0 });
    expect(selectVersions(cfg({ expiration: { expiredObjectDeleteMarker: true } }), 'k', [marker], T0, true)[0]?.kind).toBe('delete-marker');
    const byDays = cfg({ expiration: { days: 2 } });
    expect(selectVersions(byDays, 'k', [marker], T0 + DAY_MS, true)).toEqual([]);
    expect(selectVersions(byDays, 'k', [marker], T0 + 3 * DAY_MS, true)[0]?.kind).toBe('delete-marker');
    expect(selectVersions(cfg({ expiration: { expiredObjectDeleteMarker: true } }), 'k', [marker, v('a', T0 - DAY_MS)], T0, true)).toEqual([]);
  });
});

describe('lifecycle rules: uploads, expiry header, validation', () => {
  it('aborts uploads by initiation age and prefix', () => {
    const c = cfg({ filter: { prefix: 'tmp/' }, abortIncompleteMultipartUpload: { days: 1 } });
    expect(selectUpload(c, 'tmp/a', T0, nextMidnight(T0 + DAY_MS))).toEqual({ ruleId: 'r', due: nextMidnight(T0 + DAY_MS) });
    expect(selectUpload(c, 'tmp/a', T0, nextMidnight(T0 + DAY_MS) - 1)).toBeUndefined();
    expect(selectUpload(c, 'keep/a', T0, T0 + 9 * DAY_MS)).toBeUndefined();
  });

  it('gives the x-amz-expiration date and rule of a current version', () => {
    const c = cfg({ id: 'gone-in-3', expiration: { days: 3 } });
    expect(expiryOf(c, 'k', { modTime: T0, size: 1, tags: '' })).toEqual({ date: Date.UTC(2031, 2, 14), ruleId: 'gone-in-3' });
  });

  it('refuses what S3 refuses', () => {
    const bad: Partial<LifecycleRule>[] = [
      {},
      { expiration: { days: 0 } },
      { expiration: { days: 1, expiredObjectDeleteMarker: true } },
      { expiration: { date: T0 } },
      { filter: { tags: [['a', '1']] }, expiration: { expiredObjectDeleteMarker: true } },
      { filter: { tags: [['a', '1']] }, abortIncompleteMultipartUpload: { days: 1 } },
      { filter: { sizeGreaterThan: 10, sizeLessThan: 5 }, expiration: { days: 1 } },
      { noncurrentExpiration: { days: 1, newerNoncurrentVersions: 101 } },
    ];
    for (const b of bad) expect(() => validateLifecycle(cfg(b))).toThrow();
    expect(() => validateLifecycle(cfg({ id: 'x', expiration: { days: 1 } }, { id: 'x', expiration: { days: 2 } }))).toThrow(/unique/);
    expect(validateLifecycle(cfg({ id: '', expiration: { days: 1 } })).rules[0]!.id).not.toBe('');
  });
});
