import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AUTO_PARITY, defaultRrsParity, defaultStandardParity, parseParity, quorums, resolveStorageClass } from './storage-class.ts';

const sc = (standard?: string, rrs?: string) => ({
  standard: parseParity('SVC_STORAGE_CLASS_STANDARD', standard),
  rrs: parseParity('SVC_STORAGE_CLASS_RRS', rrs),
});

function code(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    return (e as { code?: string }).code;
  }
  return undefined;
}

describe('storage class', () => {
  it('default parity table', () => {
    const table = [0, 1, 1, 2, 2, 3, 3, 4, 4, 4, 4, 4, 4, 4, 4, 4];
    for (const [i, p] of table.entries()) expect(defaultStandardParity(i + 1)).toBe(p);
    expect(defaultRrsParity(1)).toBe(0);
    expect(defaultRrsParity(4)).toBe(1);
  });
  it('rule 1: EC:<n> format; empty is automatic', () => {
    expect(parseParity('X', 'EC:2')).toEqual({ kind: 'explicit', parity: 2, raw: 'EC:2' });
    expect(parseParity('X', '')).toBe(AUTO_PARITY);
    expect(parseParity('X', undefined)).toBe(AUTO_PARITY);
    for (const bad of ['2', 'EC:', 'EC:-1', 'ec:2', 'EC:2.5', 'RS:2']) expect(code(() => parseParity('X', bad))).toBe('InvalidStorageClassConfig');
  });
  it('rule 2/4: parity at most N/2 of the narrowest pool', () => {
    expect(code(() => resolveStorageClass(sc('EC:3'), [4]))).toBe('InvalidStorageClassConfig');
    expect(resolveStorageClass(sc('EC:2'), [4])[0]).toMatchObject({ standard: 2, standardAuto: false });
    expect(code(() => resolveStorageClass(sc('EC:4'), [16, 6]))).toBe('InvalidStorageClassConfig');
    expect(resolveStorageClass(sc('EC:3'), [16, 6]).map((p) => p.standard)).toEqual([3, 3]);
  });
  it('rule 2: STANDARD >= RRS only when both non-zero; EC:0 valid everywhere', () => {
    expect(code(() => resolveStorageClass(sc('EC:1', 'EC:2'), [8]))).toBe('InvalidStorageClassConfig');
    expect(resolveStorageClass(sc('EC:2', 'EC:0'), [4])[0]).toMatchObject({ standard: 2, rrs: 0 });
    expect(resolveStorageClass(sc('EC:0', 'EC:2'), [4])[0]).toMatchObject({ standard: 0, rrs: 2 });
    expect(resolveStorageClass(sc('EC:0', 'EC:0'), [2])[0]).toMatchObject({ standard: 0, rrs: 0 });
    expect(resolveStorageClass(sc('EC:0'), [1])[0]).toMatchObject({ standard: 0 });
  });
  it('rule 5: explicit RRS fails on a single drive, default resolves to 0', () => {
    expect(code(() => resolveStorageClass(sc(undefined, 'EC:1'), [1]))).toBe('InvalidStorageClassConfig');
    expect(resolveStorageClass(sc(), [1])[0]).toEqual({ standard: 0, rrs: 0, standardAuto: true, rrsAuto: true });
  });
  it('property: automatic parity always satisfies the rules', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 2, max: 16 }), { minLength: 1, maxLength: 4 }), (widths) => {
        const r = resolveStorageClass(sc(), widths);
        r.forEach((p, i) => {
          expect(p.standard).toBeLessThanOrEqual(widths[i]! / 2);
          expect(p.rrs).toBeLessThanOrEqual(p.standard);
        });
      }),
    );
  });
  it('quorums', () => {
    expect(quorums(16, 4)).toEqual({ data: 12, read: 12, write: 12 });
    expect(quorums(2, 1)).toEqual({ data: 1, read: 1, write: 2 });
    expect(quorums(4, 0)).toEqual({ data: 4, read: 4, write: 4 });
  });
});
