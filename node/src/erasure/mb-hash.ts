/**
 * Multi-buffer MD5 and SHA-256: the streams of many concurrent uploads
 * hashed together, one stream per SIMD lane of the native addon
 * (`native/mbhash.c`: 8 lanes in AVX-512VL or AVX2; outside the lanes, one
 * stream alone through the process's OpenSSL code on the same state, or
 * portable C, and up to four SHA-256 streams interleaved on one core with
 * the SHA extensions), bit-exact with node:crypto (`mb-hash.test.ts`).
 *
 * An `MbHash` is one stream. `mbUpdate([[hash, chunk], …])` advances many
 * streams in one addon call: the whole 64-byte blocks of each chunk are
 * hashed in place (no copy), the rest waits in the stream's 64-byte tail.
 * `mbUpdateAsync` does the same on a libuv pool thread, off the event loop.
 * Without the addon (or a build without these functions) every `MbHash`
 * is a plain node:crypto hash: same digests, one stream at a time.
 *
 * The PUT path reaches these through `hash-service.ts`, the per-process
 * service that batches the arriving chunks of all concurrent uploads into
 * one `mbUpdateAsync` call (see docs/s3-api.md, Performance).
 */
import { createHash, type Hash } from 'node:crypto';
import { SvcError } from '../util/errors.ts';
import { nativeAddon } from './native.ts';

export type MbAlg = 'md5' | 'sha256';

interface MbAddon {
  readonly mbHashKernels: readonly string[];
  mbHashIv(alg: number, state: Uint32Array): void;
  mbHashBlocks(alg: number, states: Uint32Array[], datas: Uint8Array[], kernel?: string): void;
  mbHashBlocksAsync(alg: number, states: Uint32Array[], datas: Uint8Array[], cb: (err: Error | null) => void, lanes?: boolean): void;
  readonly mbHashSingle?: Readonly<Record<MbAlg, string>>;
  readonly mbHashInterleave?: Readonly<Record<MbAlg, number>>;
}

const addon: MbAddon | null =
  nativeAddon !== null && typeof (nativeAddon as unknown as Partial<MbAddon>).mbHashBlocks === 'function'
    ? (nativeAddon as unknown as MbAddon)
    : null;

/** Multi-buffer kernels this process can run, fastest first (`avx512`, `avx2`, `scalar`); empty without the addon. */
export const mbHashKernels: readonly string[] = addon?.mbHashKernels ?? [];

/**
 * What hashes one stream alone (the `scalar` kernel, and any batch of fewer
 * than three streams): `openssl`, the process's own OpenSSL code run on our
 * state (as fast as node:crypto), or `portable` C.
 */
export const mbHashSingle: Readonly<Record<MbAlg, string>> = addon?.mbHashSingle ?? { md5: 'portable', sha256: 'portable' };

/**
 * Streams the `scalar` kernel runs interleaved on one core: 4 for SHA-256 on
 * a CPU with the SHA extensions (each stream's rounds are one dependent chain
 * of instructions; the others fill its gaps, 2.4x one stream's rate), else 1.
 */
export const mbHashInterleave: Readonly<Record<MbAlg, number>> = addon?.mbHashInterleave ?? { md5: 1, sha256: 1 };

const ALG: Record<MbAlg, { id: number; words: number; digest: number; littleEndian: boolean }> = {
  md5: { id: 0, words: 4, digest: 16, littleEndian: true },
  sha256: { id: 1, words: 8, digest: 32, littleEndian: false },
};

const BLOCK = 64;

/** One message stream. Update through `mbUpdate`/`mbUpdateAsync` (or `update` for one stream alone). */
export class MbHash {
  readonly alg: MbAlg;
  /** node:crypto stand-in when the addon is missing. */
  readonly #fallback: Hash | undefined;
  readonly #state: Uint32Array;
  readonly #tail = new Uint8Array(BLOCK);
  #tailLen = 0;
  #total = 0;
  #busy = false;
  #done = false;

  constructor(alg: MbAlg) {
    this.alg = alg;
    this.#state = new Uint32Array(ALG[alg].words);
    if (addon === null) this.#fallback = createHash(alg);
    else addon.mbHashIv(ALG[alg].id, this.#state);
  }

  /** This stream alone: same as `mbUpdate([[this, chunk]])`. */
  update(chunk: Uint8Array, kernel?: string): this {
    mbUpdate([[this, chunk]], kernel);
    return this;
  }

  /** The digest (16 bytes for MD5, 32 for SHA-256); the stream is finished afterwards. */
  digest(kernel?: string): Buffer {
    this.#ready();
    this.#done = true;
    if (this.#fallback) return this.#fallback.digest();
    const a = ALG[this.alg];
    const padLen = this.#tailLen < 56 ? BLOCK : 2 * BLOCK;
    const last = new Uint8Array(padLen);
    last.set(this.#tail.subarray(0, this.#tailLen));
    last[this.#tailLen] = 0x80;
    const bits = BigInt(this.#total) * 8n;
    new DataView(last.buffer).setBigUint64(padLen - 8, bits, a.littleEndian);
    addon!.mbHashBlocks(a.id, [this.#state], [last], kernel);
    const out = Buffer.allocUnsafe(a.digest);
    const dv = new DataView(out.buffer, out.byteOffset, out.byteLength);
    for (let i = 0; i < a.words; i++) dv.setUint32(4 * i, this.#state[i]!, a.littleEndian);
    return out;
  }

  #ready(): void {
    if (this.#done) throw new SvcError('InternalError', 'MbHash: digest already taken');
    if (this.#busy) throw new SvcError('InternalError', 'MbHash: an asynchronous update is still running');
  }

  /**
   * Splits `chunk` into: the block that completes the tail (if any), the
   * whole blocks to hash in place, and the rest for the tail (applied by
   * `commit` once the blocks are hashed).
   */
  plan(chunk: Uint8Array): Plan {
    this.#ready();
    let off = 0;
    let first: Uint8Array | undefined;
    if (this.#tailLen > 0) {
      off = Math.min(BLOCK - this.#tailLen, chunk.length);
      this.#tail.set(chunk.subarray(0, off), this.#tailLen);
      this.#tailLen += off;
      if (this.#tailLen === BLOCK) first = this.#tail;
    }
    const whole = off + Math.floor((chunk.length - off) / BLOCK) * BLOCK;
    return { hash: this, first, body: chunk.subarray(off, whole), rest: chunk.subarray(whole), bytes: chunk.length };
  }

  /** After the plan's blocks were hashed: keeps the rest in the tail. */
  commit(p: Plan): void {
    if (p.first) this.#tailLen = 0;
    this.#tail.set(p.rest, this.#tailLen);
    this.#tailLen += p.rest.length;
    this.#total += p.bytes;
  }

  get state(): Uint32Array {
    return this.#state;
  }

  get fallback(): Hash | undefined {
    return this.#fallback;
  }

  set busy(v: boolean) {
    this.#busy = v;
  }
}

interface Plan {
  hash: MbHash;
  first: Uint8Array | undefined;
  body: Uint8Array;
  rest: Uint8Array;
  bytes: number;
}

interface AddonBatch {
  alg: MbAlg;
  states: Uint32Array[];
  datas: Uint8Array[];
}

/**
 * The addon calls of one batch, per algorithm: the tail-completing blocks
 * (`firsts`, one block each, run first) and then the bodies.
 */
function batches(plans: Plan[]): { firsts: AddonBatch[]; bodies: AddonBatch[] } {
  const out: { firsts: AddonBatch[]; bodies: AddonBatch[] } = { firsts: [], bodies: [] };
  for (const alg of ['md5', 'sha256'] as const) {
    const mine = plans.filter((p) => p.hash.alg === alg);
    const firsts = mine.filter((p) => p.first !== undefined);
    const bodies = mine.filter((p) => p.body.length > 0);
    if (firsts.length > 0) out.firsts.push({ alg, states: firsts.map((p) => p.hash.state), datas: firsts.map((p) => p.first!) });
    if (bodies.length > 0) out.bodies.push({ alg, states: bodies.map((p) => p.hash.state), datas: bodies.map((p) => p.body) });
  }
  return out;
}

function plansOf(items: readonly (readonly [MbHash, Uint8Array])[]): Plan[] | null {
  const seen = new Set<MbHash>();
  for (const [h] of items) {
    if (seen.has(h)) throw new SvcError('InternalError', 'mbUpdate: the same stream twice in one batch');
    seen.add(h);
  }
  if (items.length > 0 && items[0]![0].fallback !== undefined) {
    for (const [h, chunk] of items) h.fallback!.update(chunk);
    return null;
  }
  return items.map(([h, chunk]) => h.plan(chunk));
}

/** Appends `chunk` to each stream, all streams hashed together on this thread. */
export function mbUpdate(items: readonly (readonly [MbHash, Uint8Array])[], kernel?: string): void {
  const plans = plansOf(items);
  if (plans === null) return;
  const { firsts, bodies } = batches(plans);
  for (const b of [...firsts, ...bodies]) addon!.mbHashBlocks(ALG[b.alg].id, b.states, b.datas, kernel);
  for (const p of plans) p.hash.commit(p);
}

/**
 * `mbUpdate` on a libuv pool thread. The chunks must stay unchanged until the
 * promise settles; the streams refuse other updates meanwhile. `lanes[alg]`
 * false hashes that algorithm's streams one at a time (the `scalar` kernel:
 * OpenSSL's code where available) instead of in the SIMD lanes.
 */
export async function mbUpdateAsync(items: readonly (readonly [MbHash, Uint8Array])[], lanes: Partial<Record<MbAlg, boolean>> = {}): Promise<void> {
  const plans = plansOf(items);
  if (plans === null) return;
  for (const p of plans) p.hash.busy = true;
  try {
    const { firsts, bodies } = batches(plans);
    // At most one 64-byte block per stream: here, before its body (a pool trip costs more).
    for (const b of firsts) addon!.mbHashBlocks(ALG[b.alg].id, b.states, b.datas);
    // MD5 and SHA-256 states are distinct: both algorithms' bodies run at once. All settle before
    // the streams are freed: one failing must not free a stream the other still writes.
    const runs = await Promise.allSettled(
      bodies.map(
        (b) => new Promise<void>((resolve, reject) => addon!.mbHashBlocksAsync(ALG[b.alg].id, b.states, b.datas, (err) => (err ? reject(err) : resolve()), lanes[b.alg] ?? true)),
      ),
    );
    for (const r of runs) if (r.status === 'rejected') throw r.reason;
    for (const p of plans) p.hash.commit(p);
  } finally {
    for (const p of plans) p.hash.busy = false;
  }
}
