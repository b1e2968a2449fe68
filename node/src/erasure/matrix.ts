/**
 * Matrices over GF(2^8), stored row-major in a flat `Uint8Array`.
 *
 * The encoding matrix is the systematic Cauchy matrix ISA-L's
 * `gf_gen_cauchy1_matrix` builds: a K × K identity on top (data shards pass
 * through unchanged), then for each parity row i in K..K+M-1 and column j in
 * 0..K-1 the element 1 / (i XOR j). Because every row index i ≥ K and every
 * column index j < K, i XOR j is never 0, and every square sub-matrix of the
 * Cauchy part is non-singular; together with the identity rows, any K of the
 * K+M rows form an invertible matrix (the code is MDS).
 */
import { gfInv, gfMul } from './gf256.ts';

/** Largest K+M the Cauchy construction allows in GF(2^8) (row index ≤ 255). */
export const MAX_TOTAL_SHARDS = 256;

/** The (K+M) × K systematic Cauchy encoding matrix. */
export function cauchyEncodingMatrix(k: number, m: number): Uint8Array {
  if (!Number.isInteger(k) || !Number.isInteger(m) || k < 1 || m < 0 || k + m > MAX_TOTAL_SHARDS) {
    throw new RangeError(`invalid erasure geometry ${k}+${m}`);
  }
  const a = new Uint8Array((k + m) * k);
  for (let i = 0; i < k; i++) a[i * k + i] = 1;
  for (let i = k; i < k + m; i++) {
    for (let j = 0; j < k; j++) a[i * k + j] = gfInv(i ^ j);
  }
  return a;
}

/** Product of an (r × n) and an (n × c) matrix. */
export function matMul(a: Uint8Array, b: Uint8Array, r: number, n: number, c: number): Uint8Array {
  const out = new Uint8Array(r * c);
  for (let i = 0; i < r; i++) {
    for (let j = 0; j < c; j++) {
      let acc = 0;
      for (let t = 0; t < n; t++) acc ^= gfMul(a[i * n + t]!, b[t * c + j]!);
      out[i * c + j] = acc;
    }
  }
  return out;
}

/**
 * Inverse of an n × n matrix by Gauss-Jordan elimination with row swaps.
 * Returns null when the matrix is singular.
 */
export function invertMatrix(src: Uint8Array, n: number): Uint8Array | null {
  const a = Uint8Array.from(src);
  const inv = new Uint8Array(n * n);
  for (let i = 0; i < n; i++) inv[i * n + i] = 1;
  for (let col = 0; col < n; col++) {
    let pivot = col;
    while (pivot < n && a[pivot * n + col] === 0) pivot++;
    if (pivot === n) return null;
    if (pivot !== col) {
      swapRows(a, n, pivot, col);
      swapRows(inv, n, pivot, col);
    }
    const scale = gfInv(a[col * n + col]!);
    if (scale !== 1) {
      for (let j = 0; j < n; j++) {
        a[col * n + j] = gfMul(a[col * n + j]!, scale);
        inv[col * n + j] = gfMul(inv[col * n + j]!, scale);
      }
    }
    for (let row = 0; row < n; row++) {
      if (row === col) continue;
      const f = a[row * n + col]!;
      if (f === 0) continue;
      for (let j = 0; j < n; j++) {
        a[row * n + j]! ^= gfMul(f, a[col * n + j]!);
        inv[row * n + j]! ^= gfMul(f, inv[col * n + j]!);
      }
    }
  }
  return inv;
}

function swapRows(a: Uint8Array, n: number, r1: number, r2: number): void {
  for (let j = 0; j < n; j++) {
    const t = a[r1 * n + j]!;
    a[r1 * n + j] = a[r2 * n + j]!;
    a[r2 * n + j] = t;
  }
}

/**
 * The coefficient rows that rebuild the shards in `targets` from the K shards
 * in `sources` (indices into the K+M rows of `enc`): row t of the result,
 * applied to the source shards, yields shard `targets[t]`.
 *
 * Data shard d comes from row d of inv(enc[sources]); parity shard p from
 * enc[p] × inv(enc[sources]).
 */
export function decodeMatrix(enc: Uint8Array, k: number, sources: readonly number[], targets: readonly number[]): Uint8Array {
  if (sources.length !== k) throw new RangeError(`decode needs exactly ${k} source rows`);
  const sub = new Uint8Array(k * k);
  for (let r = 0; r < k; r++) sub.set(enc.subarray(sources[r]! * k, sources[r]! * k + k), r * k);
  const inv = invertMatrix(sub, k);
  if (inv === null) throw new RangeError('erasure decode matrix is singular');
  const out = new Uint8Array(targets.length * k);
  for (let t = 0; t < targets.length; t++) {
    const target = targets[t]!;
    if (target < k) {
      out.set(inv.subarray(target * k, target * k + k), t * k);
    } else {
      out.set(matMul(enc.subarray(target * k, target * k + k), inv, 1, k, k), t * k);
    }
  }
  return out;
}
