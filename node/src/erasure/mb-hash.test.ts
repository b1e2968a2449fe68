/**
 * Multi-buffer MD5 / SHA-256 against node:crypto, for every kernel this CPU
 * runs: every length class from 0 to 2 MiB (each residue around the 64-byte
 * block and the 56-byte padding edge, powers of two and their neighbours),
 * random chunkings of many streams advanced together, the asynchronous
 * path, and the node:crypto fallback without the addon.
 */
import { createHash, randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { cpuHas } from '../../test/helpers/cpu-flags.ts';
import { type MbAlg, MbHash, mbHashInterleave, mbHashKernels, mbHashSingle, mbUpdate, mbUpdateAsync } from './mb-hash.ts';
import { nativeAddon } from './native.ts';

const MiB = 1024 * 1024;
const data = randomBytes(2 * MiB + 200);
const algs: MbAlg[] = ['md5', 'sha256'];

function want(alg: MbAlg, b: Uint8Array): string {
  return createHash(alg).update(b).digest('hex');
}

/** 0..2 MiB: all of 0..200, every k·64 + {-9..+9} to 1 KiB, then 2^n + {-65,-64,-57,-56,-55,-1,0,1,55,56,57,63,64,65}. */
function lengthClasses(): number[] {
  const s = new Set<number>();
  for (let i = 0; i <= 200; i++) s.add(i);
  for (let k = 64; k <= 1024; k += 64) for (let d = -9; d <= 9; d++) s.add(k + d);
  for (let p = 1024; p <= 2 * MiB; p *= 2) {
    for (const d of [-65, -64, -57, -56, -55, -1, 0, 1, 55, 56, 57, 63, 64, 65]) if (p + d <= 2 * MiB) s.add(p + d);
  }
  return [...s].sort((a, b) => a - b);
}

const cpuHasAvx2 = cpuHas('avx2');
const cpuHasAvx512vl = cpuHas('avx2', 'avx512f', 'avx512vl');
const cpuHasShaNi = cpuHas('sha_ni');

describe('multi-buffer hashing', () => {
  it('is built into the addon, with the AVX-512VL kernel first on a CPU that has it, else AVX2 where there is AVX2', () => {
    if (nativeAddon === null) {
      expect(process.env.SVC_REQUIRE_NATIVE, 'SVC_REQUIRE_NATIVE=1 but the addon did not load').not.toBe('1');
      console.warn('native addon not loaded: multi-buffer kernels SKIPPED (node:crypto fallback tested below)');
      return;
    }
    expect(mbHashKernels).toContain('scalar');
    if (cpuHasAvx512vl) expect(mbHashKernels.slice(0, 2)).toEqual(['avx512', 'avx2']);
    else if (cpuHasAvx2) expect(mbHashKernels[0]).toBe('avx2');
    // One stream alone runs through the OpenSSL that node carries (Linux builds export it), on our
    // state; the kernel tests below hold it to node:crypto's digests like every other kernel.
    if (process.platform === 'linux') expect(mbHashSingle).toEqual({ md5: 'openssl', sha256: 'openssl' });
    // With the SHA extensions the scalar kernel interleaves up to four SHA-256 streams (the
    // kernel tests below hold every grouping, 2 to 4 streams of unequal lengths, to node:crypto).
    expect(mbHashInterleave).toEqual({ md5: 1, sha256: cpuHasShaNi ? 4 : 1 });
  });

  for (const kernel of mbHashKernels) {
    describe(`kernel ${kernel}`, () => {
      for (const alg of algs) {
        it(`${alg}: every length class 0..2 MiB equals node:crypto (one stream)`, () => {
          for (const len of lengthClasses()) {
            const b = data.subarray(3, 3 + len);
            expect(new MbHash(alg).update(b, kernel).digest(kernel).toString('hex'), `${alg} ${kernel} len ${len}`).toBe(want(alg, b));
          }
        });

        it(`${alg}: up to 19 streams of the length classes advanced together, in lockstep chunks`, () => {
          const lens = lengthClasses();
          for (let g = 0; g < lens.length; g += 19) {
            const group = lens.slice(g, g + 19);
            const hs = group.map(() => new MbHash(alg));
            // Feed each stream in 3 pieces (a 1/3 split lands off block boundaries), all streams per batch.
            for (let part = 0; part < 3; part++) {
              mbUpdate(
                group.map((len, i) => [hs[i]!, data.subarray(i + Math.floor((len * part) / 3), i + Math.floor((len * (part + 1)) / 3))] as const),
                kernel,
              );
            }
            group.forEach((len, i) => expect(hs[i]!.digest(kernel).toString('hex'), `${alg} len ${len}`).toBe(want(alg, data.subarray(i, i + len))));
          }
        });

        it(`${alg}: random streams, random chunkings, random batch membership`, () => {
          fc.assert(
            fc.property(
              fc.array(fc.record({ len: fc.integer({ min: 0, max: 300_000 }), start: fc.integer({ min: 0, max: 63 }), cuts: fc.array(fc.nat(), { maxLength: 8 }) }), {
                minLength: 1,
                maxLength: 12,
              }),
              fc.integer({ min: 0, max: 2 ** 31 - 1 }),
              (streams, seed) => {
                const pieces = streams.map(({ len, start, cuts }) => {
                  const points = [...new Set(cuts.map((c) => c % (len + 1)))].sort((a, b) => a - b);
                  const bounds = [0, ...points, len];
                  return bounds.slice(1).map((end, i) => data.subarray(start + bounds[i]!, start + end));
                });
                const hs = streams.map(() => new MbHash(alg));
                const next = streams.map(() => 0);
                let r = seed;
                for (;;) {
                  const batch: [MbHash, Uint8Array][] = [];
                  for (let i = 0; i < hs.length; i++) {
                    r = (Math.imul(r, 1103515245) + 12345) >>> 0;
                    if (next[i]! < pieces[i]!.length && (r >>> 16) % 4 !== 0) batch.push([hs[i]!, pieces[i]![next[i]!++]!]);
                  }
                  if (batch.length > 0) mbUpdate(batch, kernel);
                  else if (next.every((n, i) => n >= pieces[i]!.length)) break;
                }
                streams.forEach(({ len, start }, i) => expect(hs[i]!.digest(kernel).toString('hex')).toBe(want(alg, data.subarray(start, start + len))));
              },
            ),
            { numRuns: 40 },
          );
        });
      }
    });
  }

  it('mbUpdateAsync hashes off the event loop to the same digests, MD5 and SHA-256 streams mixed', async () => {
    const specs = Array.from({ length: 10 }, (_, i) => ({ alg: algs[i % 2]!, len: 1000 + i * 77_777 }));
    const hs = specs.map((s) => new MbHash(s.alg));
    const chunk = 65_537;
    for (let off = 0; off < 2 * MiB; off += chunk) {
      const batch = specs.flatMap((s, i) => (off < s.len ? [[hs[i]!, data.subarray(off, Math.min(off + chunk, s.len))] as const] : []));
      if (batch.length === 0) break;
      const pending = mbUpdateAsync(batch);
      if (nativeAddon !== null) expect(() => batch[0]![0].update(data.subarray(0, 1))).toThrow(/asynchronous update/);
      await pending;
    }
    specs.forEach((s, i) => expect(hs[i]!.digest().toString('hex')).toBe(want(s.alg, data.subarray(0, s.len))));
  });

  it('refuses the same stream twice in a batch and a second digest', () => {
    const h = new MbHash('md5');
    expect(() => mbUpdate([[h, data.subarray(0, 10)], [h, data.subarray(0, 10)]])).toThrow(/same stream twice/);
    h.digest();
    expect(() => h.digest()).toThrow(/digest already taken/);
  });
});

describe('multi-buffer hashing without the addon (SVC_ERASURE_KERNEL=ts)', async () => {
  vi.stubEnv('SVC_ERASURE_KERNEL', 'ts');
  vi.resetModules();
  const mod = await import('./mb-hash.ts');
  vi.unstubAllEnvs();
  vi.resetModules();

  it('falls back to node:crypto with the same digests', async () => {
    expect(mod.mbHashKernels).toEqual([]);
    for (const alg of algs) {
      const a = new mod.MbHash(alg);
      const b = new mod.MbHash(alg);
      mod.mbUpdate([[a, data.subarray(0, 1000)], [b, data.subarray(0, 77)]]);
      await mod.mbUpdateAsync([[a, data.subarray(1000, 5000)]]);
      expect(a.digest().toString('hex')).toBe(want(alg, data.subarray(0, 5000)));
      expect(b.digest().toString('hex')).toBe(want(alg, data.subarray(0, 77)));
    }
  });
});
