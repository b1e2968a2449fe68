import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { crc64nvme, crc64nvmeTs } from './crc64nvme.ts';
import { nativeAddon } from './native.ts';

describe('CRC-64/NVME', () => {
  it('check value and known vectors', () => {
    for (const f of [crc64nvme, crc64nvmeTs]) {
      expect(f(Buffer.from('123456789'))).toBe(0xae8b14860a799888n);
      expect(f(new Uint8Array(0))).toBe(0n);
    }
  });

  it('continues across chunks', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 500 }), fc.nat(500), (data, cut) => {
        const c = Math.min(cut, data.length);
        const whole = crc64nvme(data);
        expect(crc64nvme(data.subarray(c), crc64nvme(data.subarray(0, c)))).toBe(whole);
        expect(crc64nvmeTs(data.subarray(c), crc64nvmeTs(data.subarray(0, c)))).toBe(whole);
      }),
    );
  });

  it.skipIf(nativeAddon === null)('native and TypeScript agree (skipped: addon not built)', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.uint8Array({ maxLength: 300 }), fc.uint8Array({ minLength: 300, maxLength: 20_000 })),
        fc.nat(63),
        fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }),
        (data, offset, prev) => {
          const view = data.subarray(Math.min(offset, data.length));
          expect(nativeAddon!.crc64nvme(view, prev)).toBe(crc64nvmeTs(view, prev));
        },
      ),
      { numRuns: 300 },
    );
    expect(['pclmul', 'table']).toContain(nativeAddon!.crc64nvmeKernel);
  });

  it('rejects an out-of-range previous value', () => {
    expect(() => crc64nvme(new Uint8Array(1), -1n)).toThrow(RangeError);
    expect(() => crc64nvme(new Uint8Array(1), 2n ** 64n)).toThrow(RangeError);
  });
});
