/**
 * The XXH64 router (addon below NATIVE_INTO_MAX, `@node-rs/xxhash` above)
 * against `@node-rs/xxhash` itself: every length class on both sides of the
 * threshold, misaligned views, output offsets, and the same module loaded
 * without the addon.
 */
import { randomBytes } from 'node:crypto';
import { xxh64 } from '@node-rs/xxhash';
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { cpuHas } from '../../test/helpers/cpu-flags.ts';
import { nativeAddon } from './native.ts';
import { NATIVE_INTO_MAX, XXH64_MANY_LANES, xxh64Into, xxh64IntoMany, xxh64Matches } from './xxh64.ts';

const pool = randomBytes(NATIVE_INTO_MAX * 4 + 64);

function expected(buf: Uint8Array): Uint8Array {
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigUint64(0, xxh64(buf), false);
  return out;
}

const lengths = [
  ...Array.from({ length: 130 }, (_, i) => i),
  255, 256, 257, 4095, 4096, 4097,
  ...Array.from({ length: 40 }, (_, i) => NATIVE_INTO_MAX - 20 + i),
  2 * NATIVE_INTO_MAX + 31, 4 * NATIVE_INTO_MAX,
];

type Router = Pick<typeof import('./xxh64.ts'), 'xxh64Into' | 'xxh64IntoMany' | 'xxh64Matches'>;

function suite(into: Router['xxh64Into'], many: Router['xxh64IntoMany'], matches: Router['xxh64Matches']): void {
  it('xxh64Into equals @node-rs/xxhash for every length class, at any alignment and output offset', () => {
    for (const len of lengths) {
      for (const start of [0, 1, 3, 7]) {
        const buf = pool.subarray(start, start + len);
        const out = new Uint8Array(8 + 13);
        into(buf, out, 13);
        expect(Buffer.from(out.subarray(13)).toString('hex'), `len ${len} start ${start}`).toBe(Buffer.from(expected(buf)).toString('hex'));
        expect(out.subarray(0, 13).every((b) => b === 0)).toBe(true);
      }
    }
  });

  it('xxh64IntoMany writes hash i at 8 i, small and large buffers alike', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 2 * NATIVE_INTO_MAX }), { maxLength: 6 }), fc.integer({ min: 0, max: 63 }), (lens, start) => {
        const bufs = lens.map((l, i) => pool.subarray(start + i, start + i + l));
        const out = new Uint8Array(8 * bufs.length);
        many(bufs, out);
        bufs.forEach((b, i) => expect(out.subarray(8 * i, 8 * i + 8)).toEqual(expected(b)));
      }),
      { numRuns: 60 },
    );
  });

  it('xxh64IntoMany over shard-sized inputs: every group size 1..9, equal and unequal lengths (the side-by-side path and its idle slots)', () => {
    const big = randomBytes(9 * (512 * 1024 + 200));
    for (let n = 1; n <= 9; n++) {
      for (const unequal of [false, true]) {
        const bufs = Array.from({ length: n }, (_, i) => {
          const len = 512 * 1024 + (unequal ? i * 37 - 64 : 0);
          return big.subarray(i * (512 * 1024 + 200) + i, i * (512 * 1024 + 200) + i + len);
        });
        const out = new Uint8Array(8 * n);
        many(bufs, out);
        bufs.forEach((b, i) => expect(Buffer.from(out.subarray(8 * i, 8 * i + 8)).toString('hex'), `n ${n} #${i}`).toBe(Buffer.from(expected(b)).toString('hex')));
      }
    }
  });

  it('xxh64Matches accepts the right hash and refuses a flipped bit, a changed byte or an offset out of range', () => {
    for (const len of [0, 1, 300, NATIVE_INTO_MAX - 1, NATIVE_INTO_MAX, 3 * NATIVE_INTO_MAX]) {
      const buf = Buffer.from(pool.subarray(5, 5 + len));
      const frame = Buffer.concat([Buffer.alloc(3), expected(buf)]);
      expect(matches(buf, frame, 3)).toBe(true);
      for (let bit = 0; bit < 64; bit += 9) {
        const bad = Buffer.from(frame);
        bad[3 + (bit >> 3)]! ^= 1 << (bit & 7);
        expect(matches(buf, bad, 3)).toBe(false);
      }
      if (len > 0) {
        const changed = Buffer.from(buf);
        changed[len >> 1]! ^= 0x40;
        expect(matches(changed, frame, 3)).toBe(false);
      }
      expect(matches(buf, frame, 4)).toBe(false);
      expect(matches(buf, frame, -1)).toBe(false);
    }
  });
}

describe('xxh64 router (addon when built)', () => {
  suite(xxh64Into, xxh64IntoMany, xxh64Matches);

  it('hashes four inputs side by side on a CPU with AVX-512 (DQ, VL)', () => {
    const avx512 = cpuHas('avx2', 'avx512f', 'avx512vl', 'avx512dq');
    expect(XXH64_MANY_LANES).toBe(nativeAddon !== null && avx512 ? 4 : 1);
  });
});

describe('xxh64 router without the addon (SVC_ERASURE_KERNEL=ts)', async () => {
  vi.stubEnv('SVC_ERASURE_KERNEL', 'ts');
  vi.resetModules();
  const native = await import('./native.ts');
  const mod = await import('./xxh64.ts');
  vi.unstubAllEnvs();
  vi.resetModules();
  afterEach(() => vi.unstubAllEnvs());

  it('really runs without the addon', () => {
    expect(native.nativeAddon).toBeNull();
  });
  suite(mod.xxh64Into, mod.xxh64IntoMany, mod.xxh64Matches);
});
