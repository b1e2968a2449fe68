import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hasCode } from '../util/errors.ts';
import { createTsCodec, tsKernel } from './codec-ts.ts';
import { gfMul } from './gf256.ts';

const GEOMETRIES: [number, number][] = [
  [1, 0],
  [2, 2],
  [4, 2],
  [4, 4],
  [8, 4],
  [12, 4],
  [8, 8],
  [16, 16],
];

function randomShards(n: number, len: number, rnd: () => number): Uint8Array[] {
  return Array.from({ length: n }, () => Uint8Array.from({ length: len }, () => Math.floor(rnd() * 256)));
}

function seeded(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 2 ** 32;
  };
}

describe('TypeScript Reed-Solomon codec', () => {
  it('parity is the Cauchy matrix applied byte by byte (4+2 by hand)', () => {
    const codec = createTsCodec(4, 2);
    const shards = randomShards(6, 33, seeded(7));
    codec.encode(shards);
    for (let p = 0; p < 2; p++) {
      for (let b = 0; b < 33; b++) {
        let want = 0;
        for (let j = 0; j < 4; j++) want ^= gfMul(codec.matrix[(4 + p) * 4 + j]!, shards[j]![b]!);
        expect(shards[4 + p]![b]).toBe(want);
      }
    }
  });

  it('the word path (long aligned shards) equals the byte-by-byte definition, incl. coefficients 0 and 1', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 16 * 1024, max: 20_000 }),
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 1, max: 3 }),
        fc.integer(),
        fc.boolean(),
        (len, rows, cols, seed, misalign) => {
          const rnd = seeded(seed);
          const coef = Uint8Array.from({ length: rows * cols }, () => {
            const x = rnd();
            return x < 0.15 ? 0 : x < 0.3 ? 1 : Math.floor(rnd() * 256);
          });
          const off = misalign ? 1 : 0;
          const view = () => {
            const b = new Uint8Array(len + 8);
            for (let i = 0; i < b.length; i++) b[i] = Math.floor(rnd() * 256);
            return b.subarray(off, off + len);
          };
          const inputs = Array.from({ length: cols }, view);
          const outputs = Array.from({ length: rows }, view);
          tsKernel.matMul(coef, rows, cols, inputs, outputs, len);
          for (let r = 0; r < rows; r++) {
            for (let i = 0; i < len; i += 97) {
              let want = 0;
              for (let j = 0; j < cols; j++) want ^= gfMul(coef[r * cols + j]!, inputs[j]![i]!);
              if (outputs[r]![i] !== want) expect([r, i, outputs[r]![i]]).toEqual([r, i, want]);
            }
            // The last bytes (the scalar tail after the words).
            for (let i = len - 5; i < len; i++) {
              let want = 0;
              for (let j = 0; j < cols; j++) want ^= gfMul(coef[r * cols + j]!, inputs[j]![i]!);
              expect(outputs[r]![i]).toBe(want);
            }
          }
        },
      ),
      { numRuns: 20 },
    );
  });

  for (const [k, m] of GEOMETRIES) {
    it(`${k}+${m}: any ≤ ${m} lost shards are rebuilt exactly`, () => {
      const codec = createTsCodec(k, m);
      fc.assert(
        fc.property(
          fc.integer({ min: 1, max: 300 }),
          fc.integer(),
          fc.shuffledSubarray([...Array(k + m).keys()], { minLength: 0, maxLength: m }),
          fc.boolean(),
          (len, seed, lost, dataOnly) => {
            const shards = randomShards(k + m, len, seeded(seed));
            codec.encode(shards);
            const original = shards.map((s) => Uint8Array.from(s));
            const present = shards.map(() => true);
            for (const i of lost) {
              present[i] = false;
              shards[i]!.fill(0xaa);
            }
            codec.reconstruct(shards, present, dataOnly);
            for (let i = 0; i < k + m; i++) {
              if (dataOnly && i >= k && !present[i]) {
                expect(shards[i]!.every((b) => b === 0xaa)).toBe(true);
              } else {
                expect(shards[i]).toEqual(original[i]);
              }
            }
          },
        ),
        { numRuns: 30 },
      );
    });
  }

  it('more than M lost shards throws ErasureReadQuorum', () => {
    const codec = createTsCodec(4, 2);
    const shards = randomShards(6, 16, seeded(1));
    codec.encode(shards);
    const err = (() => {
      try {
        codec.reconstruct(shards, [false, true, false, true, false, true]);
      } catch (e) {
        return e;
      }
      return null;
    })();
    expect(hasCode(err, 'ErasureReadQuorum')).toBe(true);
  });

  it('EC:0: encode is a no-op, reconstruct with anything missing throws ErasureReadQuorum', () => {
    const codec = createTsCodec(4, 0);
    const shards = randomShards(4, 10, seeded(3));
    const copy = shards.map((s) => Uint8Array.from(s));
    codec.encode(shards);
    expect(shards).toEqual(copy);
    codec.reconstruct(shards, [true, true, true, true]);
    expect(shards).toEqual(copy);
    expect(() => codec.reconstruct(shards, [true, false, true, true])).toThrow(
      expect.objectContaining({ code: 'ErasureReadQuorum' }),
    );
  });

  it('rejects mismatched shard counts and lengths', () => {
    const codec = createTsCodec(2, 2);
    expect(() => codec.encode(randomShards(3, 4, seeded(1)))).toThrow(expect.objectContaining({ code: 'InternalError' }));
    const bad = randomShards(4, 4, seeded(1));
    bad[3] = new Uint8Array(5);
    expect(() => codec.encode(bad)).toThrow(expect.objectContaining({ code: 'InternalError' }));
  });

  it('zero-length shards encode and reconstruct as no-ops', () => {
    const codec = createTsCodec(2, 2);
    const shards = randomShards(4, 0, seeded(1));
    codec.encode(shards);
    codec.reconstruct(shards, [false, true, true, false]);
    expect(shards.every((s) => s.length === 0)).toBe(true);
  });
});
