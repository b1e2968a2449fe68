/**
 * The per-process hashing service for upload bodies: the MD5 (ETag) and,
 * for signed payloads, SHA-256 of every concurrent upload, hashed together
 * in the SIMD lanes of the multi-buffer kernels (`mb-hash.ts`) on a libuv
 * pool thread, off the event loop.
 *
 * Why a service: one stream per lane only pays when the lanes are full. A
 * lone stream on the multi-buffer code is slower than OpenSSL (measured on
 * an AVX2 machine with SHA extensions: MD5 OpenSSL 661 MiB per CPU-second;
 * multi-buffer 1 lane 422, 4 lanes 1 412, 8 lanes 2 634; SHA-256 OpenSSL
 * 1 493 with SHA-NI, multi-buffer 8 lanes 1 392). So:
 *
 * - per algorithm, a calibration on first use measures OpenSSL against 4
 *   lanes; `auto` uses the lanes only where they win by half again for
 *   both MD5 and SHA-256 (SHA-256 wins only on CPUs without SHA
 *   extensions), and only for bodies that need both (signed payloads):
 *   moving MD5 alone measured no gain end to end;
 * - a new upload joins the lanes only while at least `MIN_STREAMS - 1`
 *   others are hashing and its body is not small (`LANE_MIN_BYTES`); a lone
 *   or small upload stays on OpenSSL, on the event loop, as before;
 * - the batcher makes one pool-thread trip per batch (MD5 and SHA-256 side
 *   by side), once a chunk of every lane-hashed body waits (up to 8) or a
 *   millisecond has passed. Each
 *   stream has at most one chunk in flight; `update` resolves once the
 *   previous chunk is hashed, so a body's next piece waits for its last
 *   hash while the erasure encoder works on the piece itself.
 *
 * `SVC_HASH_MULTIBUFFER=on|off|auto` (default `auto`): `on` sends every
 * upload through the lanes (tests, benchmarks), `off` never.
 */
import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { type HashMode, parseHashMode } from '../util/config.ts';
import { SvcError } from '../util/errors.ts';
import { type MbAlg, MbHash, mbHashKernels, mbUpdate, mbUpdateAsync } from './mb-hash.ts';

export { type HashMode, parseHashMode };

/** Uploads hashing at once before a new one joins the lanes (below three, the kernel runs scalar code). */
export const MIN_STREAMS = 3;

/**
 * Smallest body (declared size) that joins the lanes in `auto` mode: a small
 * body is hashed in microseconds on the event loop, less than the trip to a
 * pool thread costs (measured: 4 KiB PUTs at 16 concurrent lost a quarter of
 * their rate through the lanes), and pool threads are the drives' too.
 */
export const LANE_MIN_BYTES = 1024 * 1024;

/** SIMD lanes of one kernel pass (AVX2: 8 × 32-bit). */
const LANES = 8;

/** Longest a queued chunk waits for others to fill the lanes, ms. */
const GATHER_MS = 1;

/** Lanes must beat OpenSSL by this factor to be used in `auto` mode. */
const WIN_FACTOR = 1.5;

/** MiB per second of one OpenSSL stream and of four multi-buffer lanes together, on this CPU. */
function calibrate(alg: MbAlg): { openssl: number; lanes4: number } {
  const chunk = Buffer.alloc(64 * 1024, 0x5a);
  const rounds = 16; // 1 MiB per stream
  const time = (fn: () => void) => {
    fn(); // warm
    const t = performance.now();
    fn();
    return (performance.now() - t) / 1000;
  };
  const ssl = time(() => {
    const h = createHash(alg);
    for (let i = 0; i < rounds; i++) h.update(chunk);
    h.digest();
  });
  const mb = time(() => {
    const hs = Array.from({ length: 4 }, () => new MbHash(alg));
    for (let i = 0; i < rounds; i++) mbUpdate(hs.map((h) => [h, chunk] as const));
  });
  return { openssl: 1 / Math.max(ssl, 1e-9), lanes4: 4 / Math.max(mb, 1e-9) };
}

interface Job {
  readonly items: (readonly [MbHash, Uint8Array])[];
  resolve(): void;
  reject(err: unknown): void;
}

export interface HashServiceStats {
  /** Addon calls made. */
  batches: number;
  /** Chunks hashed through them. */
  chunks: number;
  /** Uploads that used the lanes / stayed on OpenSSL. */
  laneStreams: number;
  sslStreams: number;
}

/** Hashes of one upload body: MD5 always, SHA-256 when asked. Feed with `update`, read with `finish`. */
export interface BodyHasher {
  /**
   * Hashes `chunk`: on OpenSSL at once (undefined); in the lanes, queued after the previous
   * chunk, the promise settling once that one is hashed (`chunk` unchanged until the next
   * `update` or `finish` resolves).
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
  #queue: Job[] = [];
  #running = false;
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** Uploads currently open, on either path. */
  #open = 0;
  /** Of those, the ones hashed in the lanes. */
  #laneOpen = 0;

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
  describe(): { mode: HashMode; kernel: string; signedUploadsInLanes: boolean } {
    const signedUploadsInLanes = this.mode === 'on' || (this.mode === 'auto' && this.#bothWin());
    return { mode: this.mode, kernel: mbHashKernels[0] ?? 'none', signedUploadsInLanes };
  }

  /** Whether the lanes beat OpenSSL for `alg` here (measured once). */
  lanesWin(alg: MbAlg): boolean {
    let w = this.#wins.get(alg);
    if (w === undefined) {
      const c = calibrate(alg);
      w = c.lanes4 >= WIN_FACTOR * c.openssl;
      this.#wins.set(alg, w);
    }
    return w;
  }

  /**
   * `auto`: a body that needs both digests, is not small, while enough
   * others run, on a CPU where the lanes win for both. MD5 alone is not
   * worth the trip (measured on an AVX2 machine with SHA-NI: large PUTs,
   * MD5 in the lanes and SHA-256 on OpenSSL, lost 0–17 % per CPU-second).
   */
  #useLanes(othersOpen: number, opts: { sha256: boolean; size: number }): boolean {
    if (this.mode === 'off') return false;
    if (this.mode === 'on') return true;
    return opts.sha256 && othersOpen >= MIN_STREAMS - 1 && (opts.size < 0 || opts.size >= LANE_MIN_BYTES) && this.#bothWin();
  }

  #bothWin(): boolean {
    return this.lanesWin('md5') && this.lanesWin('sha256');
  }

  /** A hasher for one body of `size` bytes (-1: not known). */
  body(opts: { sha256: boolean; size: number }): BodyHasher {
    const inLanes = this.#useLanes(this.#open, opts);
    this.#open++;
    if (inLanes) this.#laneOpen++;
    this.#stats[inLanes ? 'laneStreams' : 'sslStreams']++;
    const algs: MbAlg[] = opts.sha256 ? ['md5', 'sha256'] : ['md5'];
    // Both digests on one path: the lanes (one batched chunk per update) or OpenSSL on this thread.
    const lanes = inLanes ? algs.map((a) => new MbHash(a)) : [];
    const ssl = inLanes ? [] : algs.map((a) => createHash(a));
    const [md5, sha] = inLanes ? lanes : ssl;
    let pending: Promise<void> | undefined;
    let closed = false;
    const close = () => {
      if (closed) return;
      closed = true;
      this.#open--;
      if (inLanes) this.#laneOpen--;
    };
    return {
      update: (chunk) => {
        if (closed) return Promise.reject(new SvcError('InternalError', 'body hasher used after it was closed'));
        if (!inLanes) {
          for (const h of ssl) h.update(chunk);
          return undefined;
        }
        return (async () => {
          if (pending !== undefined) await pending;
          pending = this.#submit(lanes.map((h) => [h, chunk] as const));
          // A body abandoned mid-way never awaits its last chunk: its failure must not go unhandled.
          pending.catch(() => undefined);
        })();
      },
      finish: async () => {
        try {
          if (pending !== undefined) await pending;
          const md5Hex = md5!.digest().toString('hex');
          return sha === undefined ? { md5: md5Hex } : { md5: md5Hex, sha256: sha.digest().toString('hex') };
        } finally {
          close();
        }
      },
      close,
    };
  }

  #submit(items: (readonly [MbHash, Uint8Array])[]): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#queue.push({ items, resolve, reject });
      this.#kick();
    });
  }

  /**
   * Starts a batch once a chunk of every lane-hashed body waits (up to 8,
   * the lanes of one pass), else within `GATHER_MS`: a batch of one or two
   * chunks runs on the kernel's scalar code, slower than OpenSSL (measured:
   * dispatching whatever one event-loop turn had gave 1.6 chunks a batch
   * and lost 18 % of large-PUT throughput per CPU-second).
   */
  #kick(): void {
    if (this.#running || this.#queue.length === 0) return;
    if (this.#queue.length >= Math.max(1, Math.min(LANES, this.#laneOpen))) {
      if (this.#timer !== undefined) clearTimeout(this.#timer);
      this.#timer = undefined;
      void this.#batch();
      return;
    }
    this.#timer ??= setTimeout(() => {
      this.#timer = undefined;
      if (!this.#running && this.#queue.length > 0) void this.#batch();
    }, GATHER_MS);
  }

  /** One pool-thread trip for everything queued; then the next, when due. */
  async #batch(): Promise<void> {
    this.#running = true;
    const jobs = this.#queue;
    this.#queue = [];
    this.#stats.batches++;
    this.#stats.chunks += jobs.length;
    try {
      await mbUpdateAsync(jobs.flatMap((j) => j.items));
      for (const j of jobs) j.resolve();
    } catch (err) {
      for (const j of jobs) j.reject(err);
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
