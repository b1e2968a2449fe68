import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { GF_EXP, GF_LOG, gfDiv, gfInv, gfMul, gfPow, MUL_TABLE } from './gf256.ts';

const byte = fc.integer({ min: 0, max: 255 });
const nonzero = fc.integer({ min: 1, max: 255 });

/** Carry-less multiply with reduction by 0x11d, bit by bit: the definition. */
function slowMul(a: number, b: number): number {
  let p = 0;
  for (let i = 0; i < 8; i++) {
    if (b & 1) p ^= a;
    b >>= 1;
    a <<= 1;
    if (a & 0x100) a ^= 0x11d;
  }
  return p;
}

describe('GF(2^8) over 0x11d', () => {
  it('exp/log tables are a bijection on the non-zero elements', () => {
    const seen = new Set<number>();
    for (let i = 0; i < 255; i++) seen.add(GF_EXP[i]!);
    expect(seen.size).toBe(255);
    expect(seen.has(0)).toBe(false);
    for (let a = 1; a < 256; a++) expect(GF_EXP[GF_LOG[a]!]).toBe(a);
  });

  it('multiplication matches the bitwise definition for every pair', () => {
    for (let a = 0; a < 256; a++) {
      for (let b = 0; b < 256; b++) {
        const want = slowMul(a, b);
        if (gfMul(a, b) !== want || MUL_TABLE[a * 256 + b] !== want) {
          expect([a, b, gfMul(a, b), MUL_TABLE[a * 256 + b]]).toEqual([a, b, want, want]);
        }
      }
    }
  });

  it('known products', () => {
    expect(gfMul(2, 0x80)).toBe(0x1d);
    expect(gfMul(3, 7)).toBe(9);
    expect(gfInv(2)).toBe(0x8e);
  });

  it('field laws', () => {
    fc.assert(
      fc.property(byte, byte, byte, (a, b, c) => {
        expect(gfMul(a, b)).toBe(gfMul(b, a));
        expect(gfMul(a, gfMul(b, c))).toBe(gfMul(gfMul(a, b), c));
        expect(gfMul(a, b ^ c)).toBe(gfMul(a, b) ^ gfMul(a, c));
        expect(gfMul(a, 1)).toBe(a);
        expect(gfMul(a, 0)).toBe(0);
      }),
    );
    fc.assert(
      fc.property(nonzero, byte, (a, b) => {
        expect(gfMul(a, gfInv(a))).toBe(1);
        expect(gfMul(gfDiv(b, a), a)).toBe(b);
      }),
    );
  });

  it('powers', () => {
    expect(gfPow(2, 8)).toBe(0x1d);
    expect(gfPow(5, 0)).toBe(1);
    expect(gfPow(0, 3)).toBe(0);
    for (let a = 1; a < 256; a++) expect(gfPow(a, 255)).toBe(1);
  });

  it('0 has no inverse', () => {
    expect(() => gfInv(0)).toThrow(RangeError);
    expect(() => gfDiv(1, 0)).toThrow(RangeError);
  });
});
