import { describe, expect, it } from 'vitest';
import { choosePool, hashOrder, rankPools, setIndexOf, sipHash24, uuidBytes } from './placement.ts';

describe('placement', () => {
  it('SipHash-2-4 matches the reference vectors of the paper', () => {
    const key = Uint8Array.from({ length: 16 }, (_, i) => i);
    const k0 = Buffer.from(key).readBigUInt64LE(0);
    const k1 = Buffer.from(key).readBigUInt64LE(8);
    const msg = Uint8Array.from({ length: 15 }, (_, i) => i);
    expect(sipHash24(k0, k1, msg)).toBe(0xa129ca6149be45e5n);
    // Empty message (first entry of the reference table: 0x726fdb47dd0e0e31).
    expect(sipHash24(k0, k1, new Uint8Array(0))).toBe(0x726fdb47dd0e0e31n);
    // 8-byte message (vector 8 of the table: 0x93f5f5799a932462).
    expect(sipHash24(k0, k1, msg.subarray(0, 8))).toBe(0x93f5f5799a932462n);
  });

  it('set index is stable, in range, and spreads names', () => {
    const id = uuidBytes('0f0e0d0c-0b0a-0908-0706-050403020100');
    const counts = [0, 0, 0, 0];
    for (let i = 0; i < 400; i++) {
      const s = setIndexOf(`obj-${i}`, id, 4);
      expect(s).toBe(setIndexOf(`obj-${i}`, id, 4));
      counts[s]!++;
    }
    for (const c of counts) expect(c).toBeGreaterThan(50);
  });

  it('hashOrder is a rotation of 1..N', () => {
    for (const n of [1, 2, 4, 16]) {
      const d = hashOrder('bucket/object', n);
      expect([...d].sort((a, b) => a - b)).toEqual(Array.from({ length: n }, (_, i) => i + 1));
      for (let i = 1; i < n; i++) expect(d[i]).toBe((d[i - 1]! % n) + 1);
    }
  });

  it('picks the active pool with the most free space', () => {
    expect(choosePool([10, 30, 20], [true, false, true])).toBe(2);
    expect(choosePool([10], [false])).toBe(-1);
  });

  it('ranks active pools by free space, ties to the lower index', () => {
    expect(rankPools([10, 30, 20, 30], [true, true, true, true])).toEqual([1, 3, 2, 0]);
    expect(rankPools([10, 30, 20], [true, false, true])).toEqual([2, 0]);
    expect(rankPools([], [])).toEqual([]);
  });
});
