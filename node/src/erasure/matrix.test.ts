import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { gfInv } from './gf256.ts';
import { cauchyEncodingMatrix, decodeMatrix, invertMatrix, matMul } from './matrix.ts';

function identity(n: number): Uint8Array {
  const a = new Uint8Array(n * n);
  for (let i = 0; i < n; i++) a[i * n + i] = 1;
  return a;
}

describe('matrices over GF(2^8)', () => {
  it('the Cauchy matrix is systematic with rows 1/(i xor j) below', () => {
    const a = cauchyEncodingMatrix(4, 2);
    expect(Array.from(a.subarray(0, 16))).toEqual(Array.from(identity(4)));
    for (let i = 4; i < 6; i++) for (let j = 0; j < 4; j++) expect(a[i * 4 + j]).toBe(gfInv(i ^ j));
    // First parity row for K = 4: 1/4, 1/5, 1/6, 1/7 (ISA-L's gf_gen_cauchy1_matrix).
    expect(Array.from(a.subarray(16, 20))).toEqual([0x47, 0xa7, 0x7a, 0xba]);
  });

  it('rejects impossible geometries', () => {
    expect(() => cauchyEncodingMatrix(0, 1)).toThrow(RangeError);
    expect(() => cauchyEncodingMatrix(200, 57)).toThrow(RangeError);
    expect(() => cauchyEncodingMatrix(2, -1)).toThrow(RangeError);
  });

  it('inverse times matrix is the identity (random invertible matrices)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 12 }), fc.infiniteStream(fc.integer({ min: 0, max: 255 })), (n, bytes) => {
        const it = bytes[Symbol.iterator]();
        const a = new Uint8Array(n * n).map(() => it.next().value as number);
        const inv = invertMatrix(a, n);
        if (inv === null) return;
        expect(Array.from(matMul(a, inv, n, n, n))).toEqual(Array.from(identity(n)));
        expect(Array.from(matMul(inv, a, n, n, n))).toEqual(Array.from(identity(n)));
      }),
    );
  });

  it('singular matrices are reported as null', () => {
    expect(invertMatrix(Uint8Array.from([1, 2, 1, 2]), 2)).toBeNull();
    expect(invertMatrix(new Uint8Array(9), 3)).toBeNull();
  });

  it('any K rows of the encoding matrix are invertible (MDS), up to N = 32', () => {
    for (const [k, m] of [[2, 2], [4, 4], [8, 8], [12, 4], [16, 16]] as const) {
      const enc = cauchyEncodingMatrix(k, m);
      fc.assert(
        fc.property(fc.shuffledSubarray([...Array(k + m).keys()], { minLength: k, maxLength: k }), (rows) => {
          rows.sort((x, y) => x - y);
          const coef = decodeMatrix(enc, k, rows, [...Array(k).keys()]);
          const sub = new Uint8Array(k * k);
          for (const [i, r] of rows.entries()) sub.set(enc.subarray(r * k, r * k + k), i * k);
          expect(Array.from(matMul(coef, sub, k, k, k))).toEqual(Array.from(identity(k)));
        }),
        { numRuns: 40 },
      );
    }
  });
});
