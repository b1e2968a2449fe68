/**
 * The per-process hashing service for upload bodies: the MD5 (ETag) and,
 * for signed payloads, SHA-256 of every large upload, hashed off the event
 * loop on a libuv pool thread, the MD5 of concurrent uploads together in
 * the SIMD lanes of the multi-buffer kernels (`mb-hash.ts`).
 *
 * How a body goes through it: `update` copies each arriving piece into a
 * staging buffer of `STAGE_BYTES` (1 MiB) and returns at once; a full buffer
 * joins the queue of its body. The batcher takes the oldest queued buffer of
 * every body that has one and hashes them in one pool-thread trip (MD5 and
 * SHA-256 side by side) as soon as every open body has one waiting (up to 8,
 * the lanes of one pass), or a millisecond after the first one waited. A
 * body may have `STAGE_DEPTH` buffers queued or being hashed; past that its
 * next piece waits, which keeps memory bounded (3 MiB a body at most; 2 and
 * 4 measured the same CPU per byte with 4 concurrent uploads) while the
 * bodies stay far enough ahead for the batches to fill.
 *
 * Why this shape (measured on an AVX-512 EPYC with SHA-NI, per CPU-second):
 * one OpenSSL stream hashes MD5 at ~700 MB and SHA-256 at ~1 800 MB;
 * the AVX-512VL lanes hash MD5 at ~2 300 MB for 4 streams and ~4 800 for 8
 * (AVX2: ~1 900 / 3 900), but SHA-256 at only ~1 000 / 1 900, while the SHA
 * extensions with 2–4 streams interleaved on one core reach ~3 400–4 400
 * (`mbHashInterleave`). A batch of fewer than three streams runs outside the
 * lanes (one stream through the process's own OpenSSL code on the same
 * state, `mbHashSingle`, no slower than node:crypto), so every large upload
 * can use the service from its first byte: a burst's first uploads join the
 * lanes as soon as others arrive, which a choice at open time (OpenSSL or
 * lanes for the body's whole life) could not do. Hashing 1 MiB at a time makes the pool trips and promise
 * work per byte negligible; hashing the socket's 64 KiB pieces as they came
 * cost about as much main-thread time as the lanes saved.
 *
 * `SVC_HASH_MULTIBUFFER=on|off|auto` (default `auto`): `auto` sends bodies
 * of at least `LANE_MIN_BYTES` (or unknown size) here on CPUs with a SIMD
 * kernel (AVX2; MD5's lanes then always beat one OpenSSL stream), and runs
 * SHA-256 in the lanes only where a start-up calibration finds them half
 * again faster than the scalar kernel at four streams (CPUs without SHA
 * extensions); small bodies stay on node:crypto on the event loop, where
 * they take microseconds. `on` sends every body here with both algorithms
 * in the lanes (tests, benchmarks); `off` none.
 */
import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { type HashMode, parseHashMode } from '../util/config.ts';
import { SvcError } from '../util/errors.ts';
import { BufferPool } from './buffer-pool.ts';
import { type MbAlg, MbHash, mbHashInterleave, mbHashKernels, mbHashSingle, mbUpdate, mbUpdateAsync } from './mb-hash.ts';

export { type HashMode, parseHashMode };

/**
 * Smallest body (declared size) that uses the service in `auto` mode: a
 * small body is hashed in microseconds on the event loop, less than the
 * copy and the trip to a pool thread cost (measured: 4 KiB PUTs at 16
 * concurrent lost a quarter of their rate through the lanes), and pool
 * threads are the drives' too.
 */
export const LANE_MIN_BYTES = 1024 * 1024;

/** Bytes of a body staged per queued buffer (a multiple of the 64-byte hash block). */
export const STAGE_BYTES = 1024 * 1024;

/** Staged buffers a body may have queued or being hashed before its next piece waits. */
export const STAGE_DEPTH = 2;

/** SIMD lanes of one kernel pass (AVX2: 8 × 32-bit). */
const LANES = 8;

/** Longest a queued buffer waits for other bodies' buffers to fill the lanes, ms. */
const GATHER_MS = 1;

/** Lanes must beat the scalar kernel by this factor to be used in `auto` mode. */
const WIN_FACTOR = 1.5;

/** Staging buffers shared by all bodies; the free list keeps enough for four uploads at full depth (12 MiB). */
const stagePool = new BufferPool(STAGE_BYTES, 4 * (STAGE_DEPTH + 1));

/** Trials per side in `calibrate`; the fastest of each counts. */
const CALIBRATION_TRIALS = 7;

/**
 * MiB per second of four streams through the scalar kernel (each alone
 * through OpenSSL, or interleaved with the SHA extensions) and of four
 * multi-buffer lanes together, on this CPU: the fastest of `CALIBRATION_TRIALS` wall-clock
 * trials of each, taken in turn. Preemption only ever makes a trial slower,
 * so the minimum is the CPU's own speed; one trial a side made the decision
 * a coin toss on a loaded machine (a trial preempted half-way "lost"), and
 * such a server hashed every large upload on the event loop at about a third
 * more CPU per byte. (Thread CPU time is no help: the kernel reports it in
 * 4 ms ticks, longer than a trial.)
 */
function calibrate(alg: MbAlg): { scalar4: number; lanes4: number } {
  const chunk = Buffer.alloc(64 * 1024, 0x5a);
  const rounds = 16; // 1 MiB per stream
  const four = (kernel: string | undefined) => () => {
    const hs = Array.from({ length: 4 }, () => new MbHash(alg));
    for (let i = 0; i < rounds; i++) mbUpdate(hs.map((h) => [h, chunk] as const), kernel);
  };
  const scalar = four('scalar');
  const lanes = four(undefined);
  const time = (fn: () => void) => {
    const t = performance.now();
    fn();
    return (performance.now() - t) / 1000;
  };
  scalar(); // warm
  lanes();
  let bestScalar = Number.POSITIVE_INFINITY;
  let bestLanes = Number.POSITIVE_INFINITY;
  for (let t = 0; t < CALIBRATION_TRIALS; t++) {
    bestScalar = Math.min(bestScalar, time(scalar));
    bestLanes = Math.min(bestLanes, time(lanes));
  }
  return { scalar4: 4 / Math.max(bestScalar, 1e-9), lanes4: 4 / Math.max(bestLanes, 1e-9) };
}

interface Job {
  readonly data: Uint8Array;
  resolve(): void;
  reject(err: unknown): void;
}

/** A body in the service: its hash states and its staged buffers not yet in a batch. */
interface Stream {
  readonly hashes: MbHash[];
  readonly queue: Job[];
}

export interface HashServiceStats {
  /** Pool-thread trips made. */
  batches: number;
  /** Staged buffers hashed through them. */
  chunks: number;
  /** Uploads hashed in the service / on node:crypto on the event loop. */
  laneStreams: number;
  sslStreams: number;
}

/** Hashes of one upload body: MD5 always, SHA-256 when asked. Feed with `update`, read with `finish`. */
export interface BodyHasher {
  /**
   * Hashes `chunk`, or copies it for hashing: `chunk` may change as soon as
   * this returns. A promise means "wait before the next piece" (the body's
   * staged buffers are all queued).
   */
  update(chunk: Uint8Array): Promise<void> | undefined;
  /** Waits for the last chunk; the digests as hex. Ends the stream. */
  finish(): Promise<{ md5: string; sha256?: string }>;
  /** Ends the stream without digests (an aborted body). Idempotent; `finish` calls it. */
  close(): void;
}

export class HashService {
  #mode: HashMode = 'auto';
  readonly #wins = new Map<MbAlg, boolean>();
  readonly #stats: HashServiceStats = { batches: 0, chunks: 0, laneStreams: 0, sslStreams: 0 };
  /** Bodies with at least one staged buffer queued, oldest first. */
  readonly #waiting = new Set<Stream>();
  #running = false;
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** Uploads currently open, on either path. */
  #open = 0;
  /** Of those, the ones hashed in the service. */
  #serviceOpen = 0;

  constructor(mode: HashMode) {
    this.configure(mode);
  }

  /** The mode asked for; `off` where the addon has no multi-buffer kernel. */
  get mode(): HashMode {
    return this.#mode;
  }

  configure(mode: HashMode): void {
    this.#mode = mbHashKernels.length === 0 ? 'off' : mode;
  }

  stats(): HashServiceStats {
    return { ...this.#stats };
  }

  /** Uploads currently open. */
  get open(): number {
    return this.#open;
  }

  /** What this process does with upload hashing (calibrates now in `auto`): for the start-up log. */
  describe(): {
    mode: HashMode;
    kernel: string;
    largeUploadsInService: boolean;
    sha256InLanes: boolean;
    single: Readonly<Record<MbAlg, string>>;
    interleave: Readonly<Record<MbAlg, number>>;
  } {
    const largeUploadsInService = this.mode === 'on' || (this.mode === 'auto' && this.lanesWin('md5'));
    return { mode: this.mode, kernel: mbHashKernels[0] ?? 'none', largeUploadsInService, sha256InLanes: largeUploadsInService && this.#lanes().sha256, single: mbHashSingle, interleave: mbHashInterleave };
  }

  /** Whether the lanes beat OpenSSL for `alg` here (measured once). */
  lanesWin(alg: MbAlg): boolean {
    let w = this.#wins.get(alg);
    if (w === undefined) {
      // MD5 has no instructions of its own on any CPU: a SIMD kernel's lanes beat one OpenSSL
      // stream wherever there is one (2.0-2.4x at 4 streams, 3.9x at 8 here), so no timing decides
      // it. SHA-256 depends on the CPU (SHA extensions make the scalar kernel win), so it is measured.
      if (alg === 'md5') w = mbHashKernels.some((k) => k !== 'scalar');
      else {
        const c = calibrate(alg);
        w = c.lanes4 >= WIN_FACTOR * c.scalar4;
      }
      this.#wins.set(alg, w);
    }
    return w;
  }

  /** Per algorithm: batches of three or more streams in the lanes (else each stream alone). */
  #lanes(): Record<MbAlg, boolean> {
    if (this.mode === 'on') return { md5: true, sha256: true };
    return { md5: this.lanesWin('md5'), sha256: this.lanesWin('sha256') };
  }

  #useService(opts: { size: number }): boolean {
    if (this.mode === 'off') return false;
    if (this.mode === 'on') return true;
    return (opts.size < 0 || opts.size >= LANE_MIN_BYTES) && this.lanesWin('md5');
  }

  /** A hasher for one body of `size` bytes (-1: not known). */
  body(opts: { sha256: boolean; size: number }): BodyHasher {
    const algs: MbAlg[] = opts.sha256 ? ['md5', 'sha256'] : ['md5'];
    return this.#useService(opts) ? this.#serviceBody(algs) : this.#sslBody(algs);
  }

  /** node:crypto on the event loop. */
  #sslBody(algs: MbAlg[]): BodyHasher {
    this.#open++;
    this.#stats.sslStreams++;
    const [md5, sha] = algs.map((a) => createHash(a));
    let closed = false;
    const close = () => {
      if (closed) return;
      closed = true;
      this.#open--;
    };
    return {
      update: (chunk) => {
        if (closed) return Promise.reject(new SvcError('InternalError', 'body hasher used after it was closed'));
        md5!.update(chunk);
        sha?.update(chunk);
        return undefined;
      },
      finish: async () => {
        try {
          const md5Hex = md5!.digest('hex');
          return sha === undefined ? { md5: md5Hex } : { md5: md5Hex, sha256: sha.digest('hex') };
        } finally {
          close();
        }
      },
      close,
    };
  }

  /** Staged and batched on a pool thread (see the top of this file). */
  #serviceBody(algs: MbAlg[]): BodyHasher {
    this.#open++;
    this.#serviceOpen++;
    this.#stats.laneStreams++;
    const stream: Stream = { hashes: algs.map((a) => new MbHash(a)), queue: [] };
    let closed = false;
    let cur: Buffer | undefined;
    let fill = 0;
    /** Staged buffers queued or being hashed. */
    let outstanding = 0;
    let failed: unknown;
    const waiters: (() => void)[] = [];
    /** Resolves after the next staged buffer settles. */
    const settled = () => new Promise<void>((r) => waiters.push(r));
    const stage = () => {
      const buf = cur!;
      const len = fill;
      cur = undefined;
      fill = 0;
      outstanding++;
      this.#enqueue(stream, buf.subarray(0, len))
        .catch((err: unknown) => {
          failed ??= err;
        })
        .finally(() => {
          // Back to the pool only once the pool thread is done with it.
          stagePool.release(buf);
          outstanding--;
          for (const w of waiters.splice(0)) w();
        });
    };
    const room = async () => {
      while (outstanding >= STAGE_DEPTH) await settled();
      if (failed !== undefined) throw failed;
    };
    const close = () => {
      if (closed) return;
      closed = true;
      this.#open--;
      this.#serviceOpen--;
      if (cur !== undefined) stagePool.release(cur);
      cur = undefined;
      // Its buffers still queued are released unhashed now; one already in a batch settles there.
      for (const j of stream.queue.splice(0)) j.resolve();
      this.#waiting.delete(stream);
    };
    return {
      update: (chunk) => {
        if (closed) return Promise.reject(new SvcError('InternalError', 'body hasher used after it was closed'));
        if (failed !== undefined) return Promise.reject(failed);
        let pos = 0;
        while (pos < chunk.length) {
          cur ??= stagePool.acquire();
          const take = Math.min(STAGE_BYTES - fill, chunk.length - pos);
          cur.set(chunk.subarray(pos, pos + take), fill);
          fill += take;
          pos += take;
          if (fill === STAGE_BYTES) stage();
        }
        return outstanding >= STAGE_DEPTH ? room() : undefined;
      },
      finish: async () => {
        try {
          if (closed) throw new SvcError('InternalError', 'body hasher used after it was closed');
          if (fill > 0) stage();
          while (outstanding > 0) await settled();
          if (failed !== undefined) throw failed;
          const [md5, sha] = stream.hashes;
          const md5Hex = md5!.digest().toString('hex');
          return sha === undefined ? { md5: md5Hex } : { md5: md5Hex, sha256: sha.digest().toString('hex') };
        } finally {
          close();
        }
      },
      close,
    };
  }

  #enqueue(stream: Stream, data: Uint8Array): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      stream.queue.push({ data, resolve, reject });
      this.#waiting.add(stream);
      this.#kick();
    });
  }

  /**
   * Starts a batch once every open body has a buffer waiting (up to 8, the
   * lanes of one pass), else within `GATHER_MS`: a batch of one or two
   * streams runs each alone, so waiting a little for others fills the lanes.
   */
  #kick(): void {
    if (this.#running || this.#waiting.size === 0) return;
    if (this.#waiting.size >= Math.max(1, Math.min(LANES, this.#serviceOpen))) {
      if (this.#timer !== undefined) clearTimeout(this.#timer);
      this.#timer = undefined;
      void this.#batch();
      return;
    }
    this.#timer ??= setTimeout(() => {
      this.#timer = undefined;
      if (!this.#running && this.#waiting.size > 0) void this.#batch();
    }, GATHER_MS);
  }

  /** One pool-thread trip for the oldest waiting buffer of every body; then the next, when due. */
  async #batch(): Promise<void> {
    this.#running = true;
    const live: [Stream, Job][] = [];
    for (const s of this.#waiting) {
      live.push([s, s.queue.shift()!]);
      if (s.queue.length === 0) this.#waiting.delete(s);
    }
    this.#stats.batches++;
    this.#stats.chunks += live.length;
    try {
      await mbUpdateAsync(
        live.flatMap(([s, j]) => s.hashes.map((h) => [h, j.data] as const)),
        this.#lanes(),
      );
      for (const [, j] of live) j.resolve();
    } catch (err) {
      for (const [, j] of live) j.reject(err);
    } finally {
      this.#running = false;
    }
    this.#kick();
  }
}

/**
 * The process's service: `auto` until the server applies its configured
 * `SVC_HASH_MULTIBUFFER` (`configure`, at start-up).
 */
export const hashService = new HashService('auto');
