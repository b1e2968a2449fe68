/**
 * S3 additional checksums (`x-amz-checksum-*`): incremental hashers for
 * CRC32, CRC32C, CRC64NVME, SHA1 and SHA256, base64 encoding as S3 returns
 * them, and the multipart combinations (composite `-N` and full-object CRC).
 */
import { createHash, type Hash } from 'node:crypto';
import { crc32 as zlibCrc32 } from 'node:zlib';
import { crc32c } from '@node-rs/crc32';
import type { ChecksumAlgorithm } from '../../object/types.ts';

export const CHECKSUM_ALGORITHMS: readonly ChecksumAlgorithm[] = ['CRC32', 'CRC32C', 'CRC64NVME', 'SHA1', 'SHA256'];

/** An incremental hasher producing the raw digest bytes. */
export interface Checksummer {
  update(chunk: Uint8Array): void;
  digest(): Buffer;
}

/** Parses an algorithm name as clients send it (`crc32`, `CRC64NVME`, …); undefined when unknown. */
export function parseChecksumAlgorithm(name: string): ChecksumAlgorithm | undefined {
  const upper = name.trim().toUpperCase();
  return (CHECKSUM_ALGORITHMS as readonly string[]).includes(upper) ? (upper as ChecksumAlgorithm) : undefined;
}

/** The header carrying a checksum of `alg`: `x-amz-checksum-crc32` etc. */
export function checksumHeaderName(alg: ChecksumAlgorithm): string {
  return `x-amz-checksum-${alg.toLowerCase()}`;
}

/** Raw digest length in bytes, for validating client-sent values. */
export function checksumDigestLength(alg: ChecksumAlgorithm): number {
  switch (alg) {
    case 'CRC32':
    case 'CRC32C':
      return 4;
    case 'CRC64NVME':
      return 8;
    case 'SHA1':
      return 20;
    case 'SHA256':
      return 32;
  }
}

class Crc32Hasher implements Checksummer {
  #crc = 0;
  update(chunk: Uint8Array): void {
    this.#crc = zlibCrc32(chunk, this.#crc);
  }
  digest(): Buffer {
    const b = Buffer.allocUnsafe(4);
    b.writeUInt32BE(this.#crc >>> 0);
    return b;
  }
}

class Crc32cHasher implements Checksummer {
  #crc = 0;
  update(chunk: Uint8Array): void {
    this.#crc = crc32c(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength), this.#crc);
  }
  digest(): Buffer {
    const b = Buffer.allocUnsafe(4);
    b.writeUInt32BE(this.#crc >>> 0);
    return b;
  }
}

// ---- CRC64NVME: reflected polynomial 0x9a6c9329ac4bc9b5, init and xorout all ones.
// The 64-bit state is kept as two uint32 halves so the inner loop stays in SMI/int32
// arithmetic; slicing-by-8 tables make it fast enough for the data path.
const POLY_HI = 0x9a6c9329;
const POLY_LO = 0xac4bc9b5;
const T_LO: Uint32Array[] = [];
const T_HI: Uint32Array[] = [];
{
  const lo0 = new Uint32Array(256);
  const hi0 = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let lo = i;
    let hi = 0;
    for (let k = 0; k < 8; k++) {
      const lsb = lo & 1;
      lo = ((lo >>> 1) | ((hi & 1) << 31)) >>> 0;
      hi = hi >>> 1;
      if (lsb) {
        lo = (lo ^ POLY_LO) >>> 0;
        hi = (hi ^ POLY_HI) >>> 0;
      }
    }
    lo0[i] = lo;
    hi0[i] = hi;
  }
  T_LO.push(lo0);
  T_HI.push(hi0);
  for (let t = 1; t < 8; t++) {
    const pl = T_LO[t - 1]!;
    const ph = T_HI[t - 1]!;
    const lo = new Uint32Array(256);
    const hi = new Uint32Array(256);
    for (let i = 0; i < 256; i++) {
      // advance the previous table's value by one zero byte
      const vl = pl[i]!;
      const vh = ph[i]!;
      const idx = vl & 0xff;
      lo[i] = (((vl >>> 8) | ((vh & 0xff) << 24)) ^ lo0[idx]!) >>> 0;
      hi[i] = ((vh >>> 8) ^ hi0[idx]!) >>> 0;
    }
    T_LO.push(lo);
    T_HI.push(hi);
  }
}

/** Updates a CRC64NVME state (pre-inverted halves) over `buf`. */
function crc64Update(state: { lo: number; hi: number }, buf: Uint8Array): void {
  let lo = state.lo;
  let hi = state.hi;
  const [l0, l1, l2, l3, l4, l5, l6, l7] = T_LO as [Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array];
  const [h0, h1, h2, h3, h4, h5, h6, h7] = T_HI as [Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array];
  let i = 0;
  const n = buf.length;
  const end8 = n - (n % 8);
  while (i < end8) {
    const a = (lo ^ (buf[i]! | (buf[i + 1]! << 8) | (buf[i + 2]! << 16) | (buf[i + 3]! << 24))) >>> 0;
    const b = (hi ^ (buf[i + 4]! | (buf[i + 5]! << 8) | (buf[i + 6]! << 16) | (buf[i + 7]! << 24))) >>> 0;
    lo =
      l7[a & 0xff]! ^
      l6[(a >>> 8) & 0xff]! ^
      l5[(a >>> 16) & 0xff]! ^
      l4[a >>> 24]! ^
      l3[b & 0xff]! ^
      l2[(b >>> 8) & 0xff]! ^
      l1[(b >>> 16) & 0xff]! ^
      l0[b >>> 24]!;
    hi =
      h7[a & 0xff]! ^
      h6[(a >>> 8) & 0xff]! ^
      h5[(a >>> 16) & 0xff]! ^
      h4[a >>> 24]! ^
      h3[b & 0xff]! ^
      h2[(b >>> 8) & 0xff]! ^
      h1[(b >>> 16) & 0xff]! ^
      h0[b >>> 24]!;
    i += 8;
  }
  for (; i < n; i++) {
    const idx = (lo ^ buf[i]!) & 0xff;
    lo = ((lo >>> 8) | ((hi & 0xff) << 24)) ^ l0[idx]!;
    hi = (hi >>> 8) ^ h0[idx]!;
  }
  state.lo = lo >>> 0;
  state.hi = hi >>> 0;
}

export class Crc64NvmeHasher implements Checksummer {
  #state = { lo: 0xffffffff, hi: 0xffffffff };
  update(chunk: Uint8Array): void {
    crc64Update(this.#state, chunk);
  }
  digest(): Buffer {
    const b = Buffer.allocUnsafe(8);
    b.writeUInt32BE(~this.#state.hi >>> 0, 0);
    b.writeUInt32BE(~this.#state.lo >>> 0, 4);
    return b;
  }
}

class NodeHasher implements Checksummer {
  readonly #h: Hash;
  constructor(alg: string) {
    this.#h = createHash(alg);
  }
  update(chunk: Uint8Array): void {
    this.#h.update(chunk);
  }
  digest(): Buffer {
    return this.#h.digest();
  }
}

export function createChecksummer(alg: ChecksumAlgorithm): Checksummer {
  switch (alg) {
    case 'CRC32':
      return new Crc32Hasher();
    case 'CRC32C':
      return new Crc32cHasher();
    case 'CRC64NVME':
      return new Crc64NvmeHasher();
    case 'SHA1':
      return new NodeHasher('sha1');
    case 'SHA256':
      return new NodeHasher('sha256');
  }
}

/** One-shot base64 checksum of a buffer. */
export function checksumBase64(alg: ChecksumAlgorithm, data: Uint8Array): string {
  const h = createChecksummer(alg);
  h.update(data);
  return h.digest().toString('base64');
}

/** True when `value` is a well-formed base64 digest for `alg`. */
export function isValidChecksumValue(alg: ChecksumAlgorithm, value: string): boolean {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(value)) return false;
  return Buffer.from(value, 'base64').length === checksumDigestLength(alg);
}

/**
 * Composite multipart checksum: the checksum of the concatenated raw part
 * checksums, base64, with `-<parts>` appended.
 */
export function compositeChecksum(alg: ChecksumAlgorithm, partValues: readonly string[]): string {
  const h = createChecksummer(alg);
  for (const v of partValues) h.update(Buffer.from(v, 'base64'));
  return `${h.digest().toString('base64')}-${partValues.length}`;
}

// ---- full-object CRC combination (zlib's crc32_combine approach over GF(2)).

function gf2MatTimes(mat: bigint[], vec: bigint): bigint {
  let sum = 0n;
  let i = 0;
  while (vec !== 0n) {
    if (vec & 1n) sum ^= mat[i]!;
    vec >>= 1n;
    i++;
  }
  return sum;
}

function gf2MatSquare(mat: bigint[]): bigint[] {
  return mat.map((m) => gf2MatTimes(mat, m));
}

/**
 * Combines crc(A) and crc(B) into crc(A‖B) for a reflected CRC of `width`
 * bits with polynomial `poly` (init/xorout all ones, as every S3 CRC uses).
 */
export function crcCombine(width: 32 | 64, poly: bigint, crcA: bigint, crcB: bigint, lenB: number): bigint {
  if (lenB === 0) return crcA;
  // operator for one zero bit
  let odd: bigint[] = [poly];
  let row = 1n;
  for (let n = 1; n < width; n++) {
    odd.push(row);
    row <<= 1n;
  }
  let even = gf2MatSquare(odd); // two zero bits
  odd = gf2MatSquare(even); // four zero bits
  let len = BigInt(lenB);
  let crc = crcA;
  do {
    even = gf2MatSquare(odd);
    if (len & 1n) crc = gf2MatTimes(even, crc);
    len >>= 1n;
    if (len === 0n) break;
    odd = gf2MatSquare(even);
    if (len & 1n) crc = gf2MatTimes(odd, crc);
    len >>= 1n;
  } while (len !== 0n);
  return crc ^ crcB;
}

const CRC_POLY: Partial<Record<ChecksumAlgorithm, { width: 32 | 64; poly: bigint }>> = {
  CRC32: { width: 32, poly: 0xedb88320n },
  CRC32C: { width: 32, poly: 0x82f63b78n },
  CRC64NVME: { width: 64, poly: 0x9a6c9329ac4bc9b5n },
};

/** True when the algorithm supports FULL_OBJECT combination of part values. */
export function supportsFullObject(alg: ChecksumAlgorithm): boolean {
  return CRC_POLY[alg] !== undefined;
}

/** Full-object CRC of a multipart object from its parts' CRCs and sizes. */
export function fullObjectChecksum(alg: ChecksumAlgorithm, parts: readonly { value: string; size: number }[]): string {
  const p = CRC_POLY[alg];
  if (!p) throw new Error(`full-object checksum unsupported for ${alg}`);
  const bytes = p.width / 8;
  let crc: bigint | undefined;
  for (const part of parts) {
    const v = BigInt(`0x${Buffer.from(part.value, 'base64').toString('hex') || '0'}`);
    crc = crc === undefined ? v : crcCombine(p.width, p.poly, crc, v, part.size);
  }
  const out = Buffer.alloc(bytes);
  const hex = (crc ?? 0n).toString(16).padStart(bytes * 2, '0');
  Buffer.from(hex, 'hex').copy(out);
  return out.toString('base64');
}
