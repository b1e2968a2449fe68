/**
 * CRC-64/NVME, the checksum behind S3's `x-amz-checksum-crc64nvme`:
 * reflected polynomial 0x9A6C9329AC4BC9B5, init and xorout all ones.
 * Native (slicing-by-8 in the addon) when built; otherwise a TypeScript
 * table-driven version on two 32-bit halves (no BigInt in the loop).
 */
import { nativeAddon } from './native.ts';

const TABLE_LO = new Uint32Array(256);
const TABLE_HI = new Uint32Array(256);
{
  const polyLo = 0xac4bc9b5;
  const polyHi = 0x9a6c9329;
  for (let b = 0; b < 256; b++) {
    let lo = b;
    let hi = 0;
    for (let k = 0; k < 8; k++) {
      const lsb = lo & 1;
      lo = ((lo >>> 1) | (hi << 31)) >>> 0;
      hi >>>= 1;
      if (lsb) {
        lo = (lo ^ polyLo) >>> 0;
        hi = (hi ^ polyHi) >>> 0;
      }
    }
    TABLE_LO[b] = lo;
    TABLE_HI[b] = hi;
  }
}

/** The TypeScript implementation (exported for the differential test). */
export function crc64nvmeTs(buf: Uint8Array, prev = 0n): bigint {
  let lo = ~Number(prev & 0xffffffffn) >>> 0;
  let hi = ~Number(prev >> 32n) >>> 0;
  for (let i = 0; i < buf.length; i++) {
    const idx = (lo ^ buf[i]!) & 0xff;
    lo = (((lo >>> 8) | (hi << 24)) ^ TABLE_LO[idx]!) >>> 0;
    hi = ((hi >>> 8) ^ TABLE_HI[idx]!) >>> 0;
  }
  return (BigInt(~hi >>> 0) << 32n) | BigInt(~lo >>> 0);
}

/**
 * CRC-64/NVME of `buf`, continuing from `prev` (the CRC of the bytes before
 * it; 0n to start), as an unsigned 64-bit bigint.
 */
export function crc64nvme(buf: Uint8Array, prev = 0n): bigint {
  if (prev < 0n || prev > 0xffffffffffffffffn) throw new RangeError('crc64nvme: prev must be a 64-bit unsigned value');
  return nativeAddon === null ? crc64nvmeTs(buf, prev) : nativeAddon.crc64nvme(buf, prev);
}
