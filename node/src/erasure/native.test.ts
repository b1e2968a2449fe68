/**
 * Differential fuzz test: every native kernel this CPU runs against the
 * TypeScript oracle. Skipped (and said so) when the addon is not built;
 * `SVC_REQUIRE_NATIVE=1` turns a missing addon into a failure.
 */
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { xxh64 } from '@node-rs/xxhash';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { tsKernel } from './codec-ts.ts';
import { gfMul } from './gf256.ts';
import { nativeAddon, nativeLoadError } from './native.ts';
import { RsCodec } from './rs-codec.ts';

const addon = nativeAddon;
const kernels = addon?.kernels ?? [];

describe('native addon', () => {
  it('is loaded, or the reason it is not is known', () => {
    if (addon === null) {
      console.warn(`native addon not loaded, native differential tests SKIPPED: ${nativeLoadError}`);
      expect(nativeLoadError).toBeTruthy();
      // CI that builds the addon sets this so a broken build cannot pass as a skip.
      expect(process.env.SVC_REQUIRE_NATIVE, 'SVC_REQUIRE_NATIVE=1 but the addon did not load').not.toBe('1');
    } else {
      expect(kernels).toContain('scalar');
      expect(kernels[0]).toBe(addon.kernel);
    }
  });

  describe.skipIf(addon === null)('differential against TypeScript (skipped: addon not built)', () => {
    for (const kernel of kernels) {
      const nativeGf = {
        name: kernel,
        matMul: (c: Uint8Array, r: number, k: number, i: Uint8Array[], o: Uint8Array[], n: number) =>
          addon!.matMul(c, r, k, i, o, n, kernel),
      };

      it(`${kernel}: matMul equals the TS kernel for random matrices, lengths and offsets`, () => {
        fc.assert(
          fc.property(
            fc.integer({ min: 1, max: 12 }),
            fc.integer({ min: 1, max: 34 }),
            fc.oneof(
              fc.integer({ min: 0, max: 200 }),
              fc.integer({ min: 200, max: 5000 }),
              fc.integer({ min: 16 * 1024, max: 17 * 1024 }),
            ),
            fc.integer({ min: 0, max: 63 }),
            fc.integer({ min: 0, max: 2 ** 31 }),
            (rows, cols, len, misalign, seed) => {
              let s = seed | 1;
              const rnd = () => {
                s = (s * 1103515245 + 12345) & 0x7fffffff;
                return s >>> 16;
              };
              const coef = Uint8Array.from({ length: rows * cols }, () => rnd() & 255);
              const backing = new Uint8Array((cols + 2 * rows) * (len + 64) + misalign);
              for (let i = 0; i < backing.length; i++) backing[i] = rnd() & 255;
              const view = (i: number) => backing.subarray(misalign + i * (len + 64), misalign + i * (len + 64) + len);
              const inputs = Array.from({ length: cols }, (_, i) => view(i));
              const want = Array.from({ length: rows }, (_, i) => view(cols + i));
              const got = Array.from({ length: rows }, (_, i) => view(cols + rows + i));
              tsKernel.matMul(coef, rows, cols, inputs, want, len);
              nativeGf.matMul(coef, rows, cols, inputs, got, len);
              for (let r = 0; r < rows; r++) expect(Buffer.from(got[r]!).equals(Buffer.from(want[r]!))).toBe(true);
            },
          ),
          { numRuns: 150 },
        );
      });

      it(`${kernel}: encode and reconstruct match the TS codec, incl. 1-byte and odd shards`, () => {
        fc.assert(
          fc.property(
            fc.integer({ min: 1, max: 16 }),
            fc.integer({ min: 0, max: 16 }),
            fc.oneof(fc.constant(1), fc.integer({ min: 1, max: 4099 }), fc.integer({ min: 16 * 1024, max: 16 * 1024 + 64 })),
            fc.integer(),
            (k, m, len, seed) => {
              const ts = new RsCodec(k, m, tsKernel);
              const nat = new RsCodec(k, m, nativeGf);
              let s = seed | 1;
              const shards = Array.from({ length: k + m }, () =>
                Uint8Array.from({ length: len }, () => (s = (s * 1664525 + 1013904223) | 0) >>> 24),
              );
              const copy = shards.map((x) => Uint8Array.from(x));
              ts.encode(copy);
              nat.encode(shards);
              for (let i = 0; i < k + m; i++) expect(Buffer.from(shards[i]!).equals(Buffer.from(copy[i]!))).toBe(true);
              const present = shards.map((_, i) => ((s = (s * 1664525 + 1013904223) | 0) >>> 30) !== 0 || i >= m);
              let lost = present.filter((p) => !p).length;
              for (let i = 0; i < k + m && lost > m; i++) {
                if (!present[i]) {
                  present[i] = true;
                  lost--;
                }
              }
              for (let i = 0; i < k + m; i++) if (!present[i]) shards[i]!.fill(0x33);
              nat.reconstruct(shards, present);
              for (let i = 0; i < k + m; i++) expect(Buffer.from(shards[i]!).equals(Buffer.from(copy[i]!))).toBe(true);
            },
          ),
          { numRuns: 120 },
        );
      });
    }

    it('the GFNI affine matrices multiply correctly (software emulation of vgf2p8affineqb)', () => {
      expect(addon!.affineCheck()).toBe(true);
    });

    it('xxh64 matches @node-rs/xxhash', () => {
      fc.assert(
        fc.property(fc.uint8Array({ maxLength: 1000 }), (data) => {
          const out = new Uint8Array(10);
          addon!.xxh64Into(data, out, 2);
          expect(Buffer.from(out).readBigUInt64BE(2)).toBe(xxh64(data));
        }),
      );
      const shards = [Buffer.alloc(0), Buffer.alloc(31, 1), Buffer.alloc(100_000, 9)];
      const out = new Uint8Array(24);
      addon!.xxh64Many(shards, out);
      shards.forEach((sh, i) => {
        expect(Buffer.from(out).readBigUInt64BE(8 * i)).toBe(xxh64(sh));
      });
    });

    it('loads in several worker threads at once (one-time init is thread-safe)', async () => {
      const addonPath = fileURLToPath(new URL('../../build/Release/svc_native.node', import.meta.url));
      const code = `
        const { parentPort, workerData } = require('node:worker_threads');
        const a = require(workerData);
        const x = new Uint8Array(100000).fill(7);
        const p = new Uint8Array(100000);
        a.matMul(Uint8Array.of(0x53), 1, 1, [x], [p], x.length);
        parentPort.postMessage({ kernel: a.kernel, crc: a.crc64nvme(Buffer.from('123456789'), 0n), p: p[99999] });
      `;
      const results = await Promise.all(
        Array.from(
          { length: 4 },
          () =>
            new Promise<{ kernel: string; crc: bigint; p: number }>((resolve, reject) => {
              const w = new Worker(code, { eval: true, workerData: addonPath });
              w.once('message', (m) => {
                resolve(m);
                void w.terminate();
              });
              w.once('error', reject);
            }),
        ),
      );
      for (const r of results) {
        expect(r).toEqual({ kernel: addon!.kernel, crc: 0xae8b14860a799888n, p: gfMul(0x53, 7) });
      }
    });

    it('rejects bad arguments instead of touching memory', () => {
      const a = new Uint8Array(8);
      expect(() => addon!.matMul(new Uint8Array(1), 1, 1, [a], [a], 9)).toThrow(RangeError);
      expect(() => addon!.matMul(new Uint8Array(1), 1, 2, [a], [a], 8)).toThrow(RangeError);
      expect(() => addon!.matMul(new Uint8Array(0), 1, 1, [a], [a], 8)).toThrow(RangeError);
      expect(() => addon!.matMul(new Uint8Array(1), 1, 1, [a], [a], 8, 'nope')).toThrow(RangeError);
      expect(() => addon!.xxh64Into(a, a, 1)).toThrow(RangeError);
      expect(() => addon!.xxh64Many([a], new Uint8Array(7))).toThrow(RangeError);
    });
  });
});
