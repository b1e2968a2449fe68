/**
 * The Reed-Solomon codec on top of a matrix-multiply kernel. Everything a
 * kernel has to do is `outputs[r] = Σ_j coef[r·cols + j] · inputs[j]` over
 * GF(2^8), byte-wise; encode and reconstruct differ only in the coefficient
 * matrix, and that matrix algebra (tiny: at most K × K) lives here in
 * TypeScript, shared by the native and the TypeScript kernels.
 */
import { SvcError } from '../util/errors.ts';
import type { ErasureCodec } from './codec.ts';
import { cauchyEncodingMatrix, decodeMatrix } from './matrix.ts';

/** A GF(2^8) matrix-times-shards kernel (the only per-byte work of the codec). */
export interface GfKernel {
  readonly name: string;
  /**
   * For r in 0..rows-1: `outputs[r] = Σ_j coef[r·cols + j] · inputs[j]`.
   * `inputs.length === cols`, `outputs.length === rows`, all `len` bytes long
   * (the caller has checked). Outputs never alias inputs.
   */
  matMul(coef: Uint8Array, rows: number, cols: number, inputs: Uint8Array[], outputs: Uint8Array[], len: number): void;
}

const DECODE_CACHE_LIMIT = 512;

export class RsCodec implements ErasureCodec {
  readonly dataShards: number;
  readonly parityShards: number;
  readonly kernel: string;
  /** The (K+M) × K encoding matrix. */
  readonly matrix: Uint8Array;
  readonly #gf: GfKernel;
  /** Parity rows of the matrix (M × K), what encode multiplies by. */
  readonly #parityRows: Uint8Array;
  readonly #decodeCache = new Map<string, { sources: number[]; targets: number[]; coef: Uint8Array }>();

  constructor(k: number, m: number, gf: GfKernel) {
    this.matrix = cauchyEncodingMatrix(k, m);
    this.dataShards = k;
    this.parityShards = m;
    this.kernel = gf.name;
    this.#gf = gf;
    this.#parityRows = this.matrix.subarray(k * k);
  }

  encode(shards: Uint8Array[]): void {
    const k = this.dataShards;
    const m = this.parityShards;
    if (shards.length !== k + m) {
      throw new SvcError('InternalError', `erasure encode: expected ${k + m} shards, got ${shards.length}`);
    }
    const len = shards[0]!.length;
    for (let i = 1; i < k + m; i++) {
      if (shards[i]!.length !== len) throw new SvcError('InternalError', 'erasure encode: shards differ in length');
    }
    if (m === 0 || len === 0) return;
    this.#gf.matMul(this.#parityRows, m, k, shards.slice(0, k), shards.slice(k), len);
  }

  reconstruct(shards: Uint8Array[], present: boolean[], dataOnly = false): void {
    const k = this.dataShards;
    const n = k + this.parityShards;
    if (shards.length !== n || present.length !== n) {
      throw new SvcError('InternalError', `erasure reconstruct: expected ${n} shards and flags`);
    }
    let count = 0;
    let missingWanted = 0;
    let len = -1;
    for (let i = 0; i < n; i++) {
      if (present[i]) {
        count++;
        if (len === -1) len = shards[i]!.length;
        else if (shards[i]!.length !== len) throw new SvcError('InternalError', 'erasure reconstruct: shards differ in length');
      } else if (i < k || !dataOnly) {
        missingWanted++;
      }
    }
    if (count < k) {
      throw new SvcError('ErasureReadQuorum', undefined, { present: count, needed: k });
    }
    if (missingWanted === 0) return;
    for (let i = 0; i < n; i++) {
      if (!present[i] && (i < k || !dataOnly) && shards[i]!.length !== len) {
        throw new SvcError('InternalError', 'erasure reconstruct: a shard to rebuild has the wrong length');
      }
    }
    const plan = this.#plan(present, dataOnly);
    if (len === 0) return;
    const inputs = plan.sources.map((i) => shards[i]!);
    const outputs = plan.targets.map((i) => shards[i]!);
    this.#gf.matMul(plan.coef, plan.targets.length, k, inputs, outputs, len);
  }

  #plan(present: boolean[], dataOnly: boolean): { sources: number[]; targets: number[]; coef: Uint8Array } {
    let key = dataOnly ? 'd' : 'a';
    for (const p of present) key += p ? '1' : '0';
    const hit = this.#decodeCache.get(key);
    if (hit !== undefined) return hit;
    const k = this.dataShards;
    const sources: number[] = [];
    const targets: number[] = [];
    for (let i = 0; i < present.length; i++) {
      if (present[i]) {
        if (sources.length < k) sources.push(i);
      } else if (i < k || !dataOnly) {
        targets.push(i);
      }
    }
    const plan = { sources, targets, coef: decodeMatrix(this.matrix, k, sources, targets) };
    if (this.#decodeCache.size >= DECODE_CACHE_LIMIT) this.#decodeCache.clear();
    this.#decodeCache.set(key, plan);
    return plan;
  }
}
