/**
 * The pure-TypeScript GF(2^8) kernel: portable fallback when the native addon
 * is not built, and the oracle the native kernels are fuzzed against.
 *
 * Two paths, both plain table lookups:
 * - bytes: one lookup in the coefficient's 256-entry `MUL_TABLE` row per byte;
 * - words (long, 4-byte-aligned shards): 32-bit loads and stores with two
 *   lookups per word in a 65536-entry "two bytes at once" table for the
 *   coefficient (128 KiB, built on first use, a bounded cache of them kept).
 *   Measured ~3× the byte path per coefficient pass.
 */
import { mulRow } from './gf256.ts';
import { type GfKernel, RsCodec } from './rs-codec.ts';

/** Shards shorter than this use the byte path (a wide table costs ~65 k lookups to build). */
const WIDE_MIN_LEN = 16 * 1024;
/** Wide tables kept (128 KiB each): enough for every coefficient of a 12+4 or 8+8 encode. */
const WIDE_CACHE = 72;

const wideTables = new Map<number, Uint16Array>();

/** `t[x] = c·(x & 0xff) | c·(x >> 8) << 8`: multiplies two packed bytes at once. */
function wideTable(c: number): Uint16Array {
  let t = wideTables.get(c);
  if (t !== undefined) return t;
  const row = mulRow(c);
  t = new Uint16Array(65536);
  for (let hi = 0; hi < 256; hi++) {
    const h = row[hi]! << 8;
    const base = hi << 8;
    for (let lo = 0; lo < 256; lo++) t[base | lo] = h | row[lo]!;
  }
  if (wideTables.size >= WIDE_CACHE) wideTables.delete(wideTables.keys().next().value!);
  wideTables.set(c, t);
  return t;
}

function words(a: Uint8Array, n: number): Uint32Array {
  return new Uint32Array(a.buffer, a.byteOffset, n);
}

/** out[0..len) (=|^=) c · src[0..len), byte by byte. */
function mulBytes(c: number, src: Uint8Array, out: Uint8Array, from: number, len: number, assign: boolean): void {
  if (c === 0) {
    if (assign) out.fill(0, from, len);
  } else if (c === 1) {
    if (assign) out.set(src.subarray(from, len), from);
    else for (let i = from; i < len; i++) out[i]! ^= src[i]!;
  } else {
    const t = mulRow(c);
    if (assign) for (let i = from; i < len; i++) out[i] = t[src[i]!]!;
    else for (let i = from; i < len; i++) out[i]! ^= t[src[i]!]!;
  }
}

/** The same on 32-bit words with a wide table; `n` words, aligned views. */
function mulWords(c: number, src: Uint8Array, out: Uint8Array, n: number, assign: boolean): void {
  const s = words(src, n);
  const o = words(out, n);
  if (c === 0) {
    if (assign) o.fill(0);
    return;
  }
  if (c === 1) {
    if (assign) o.set(s);
    else for (let i = 0; i < n; i++) o[i]! ^= s[i]!;
    return;
  }
  const t = wideTable(c);
  if (assign) {
    for (let i = 0; i < n; i++) {
      const v = s[i]!;
      o[i] = t[v & 0xffff]! | (t[v >>> 16]! << 16);
    }
  } else {
    for (let i = 0; i < n; i++) {
      const v = s[i]!;
      o[i]! ^= t[v & 0xffff]! | (t[v >>> 16]! << 16);
    }
  }
}

export const tsKernel: GfKernel = {
  name: 'ts',
  matMul(coef, rows, cols, inputs, outputs, len) {
    let aligned = len >= WIDE_MIN_LEN;
    for (let j = 0; j < cols && aligned; j++) aligned = (inputs[j]!.byteOffset & 3) === 0;
    for (let r = 0; r < rows && aligned; r++) aligned = (outputs[r]!.byteOffset & 3) === 0;
    const n = aligned ? len >>> 2 : 0;
    for (let r = 0; r < rows; r++) {
      const out = outputs[r]!;
      for (let j = 0; j < cols; j++) {
        const c = coef[r * cols + j]!;
        if (n > 0) mulWords(c, inputs[j]!, out, n, j === 0);
        mulBytes(c, inputs[j]!, out, n * 4, len, j === 0);
      }
    }
  },
};

/** A codec running the TypeScript kernel. */
export function createTsCodec(k: number, m: number): RsCodec {
  return new RsCodec(k, m, tsKernel);
}
