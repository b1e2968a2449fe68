/**
 * Loader for the optional native addon (`node/native/`, built by
 * `scripts/build-native.mjs` into `node/build/Release/svc_native.node`).
 * When it is missing or fails to load, everything falls back to TypeScript;
 * `nativeLoadError` says why. `SVC_ERASURE_KERNEL=ts` forces the fallback
 * (benchmarks and tests use it to compare kernels).
 */
import { createRequire } from 'node:module';

export interface NativeAddon {
  /** Kernel the addon dispatched to at load: `gfni`, `gfni-avx2`, `avx2`, `ssse3`, `neon` or `scalar`. */
  readonly kernel: string;
  /** Kernels usable on this CPU that passed the load-time self-test, fastest first. */
  readonly kernels: readonly string[];
  /**
   * Same contract as `GfKernel.matMul`; `kernel` picks one of `kernels`
   * (default: the first).
   */
  matMul(
    coef: Uint8Array,
    rows: number,
    cols: number,
    inputs: Uint8Array[],
    outputs: Uint8Array[],
    len: number,
    kernel?: string,
  ): void;
  /**
   * Software emulation check of the GFNI kernels' affine matrices (true when
   * every c·x comes out right), so they are tested where GFNI cannot run.
   */
  affineCheck(): boolean;
  /** XXH64 (seed 0) of `buf`, written big-endian into `out` at `outOffset` (8 bytes). */
  xxh64Into(buf: Uint8Array, out: Uint8Array, outOffset: number): void;
  /** XXH64 of each `shards[i]` written big-endian at `out[8 i]`. */
  xxh64Many(shards: Uint8Array[], out: Uint8Array): void;
  /** Inputs `xxh64Many` hashes side by side (4 with AVX-512; 1: one at a time). Absent in older builds. */
  readonly xxh64ManyLanes?: number;
  /** CRC-64/NVME implementation in use: `pclmul` (folding) or `table`. */
  readonly crc64nvmeKernel: string;
  /** CRC-64/NVME of `buf` continuing from `prev` (0n to start). */
  crc64nvme(buf: Uint8Array, prev: bigint): bigint;
  /** True when the SSE package cipher was built in (OpenSSL headers found at build time). */
  readonly gcm?: boolean;
  /** Seals packages `firstSeq…` of `plain` into `out` (see crypto/package-cipher.ts); returns the bytes written. */
  gcmSeal(key: Uint8Array, nonce: Uint8Array, firstSeq: number, finalLast: boolean, plain: Uint8Array, out: Uint8Array): number;
  /** Opens whole packages into `out`: the plaintext bytes, or -1 - seq of the package that failed. */
  gcmOpen(key: Uint8Array, nonce: Uint8Array, firstSeq: number, lastOfStream: number, cipher: Uint8Array, out: Uint8Array): number;
  /** The whole regular file at `path`, read in one libuv pool job (fileio.c); errors shaped like node:fs's. */
  fileRead(path: string, callback: (err: NodeJS.ErrnoException | null, data?: Buffer) => void): void;
  /**
   * The whole regular file at `path` read on this thread, only if the kernel
   * can answer from its caches without waiting for the device (the path
   * from the lookup cache, the data from the page cache, 256 KiB at most):
   * the Buffer, or null (read it with a job). A definite answer from the
   * cache (ENOENT, ENOTDIR, EISDIR) throws the Error the job would give.
   */
  fileReadCached(path: string): Buffer | null;
  /** Each whole file of `paths` (1 to 64) in one pool job, one after the other: each slot its Buffer or its Error. */
  fileReadBatch(paths: readonly string[], callback: (err: Error | null, results?: (Buffer | NodeJS.ErrnoException)[]) => void): void;
  /**
   * In one pool job: `data` into the new file `tmp`, fsync, close, rename to
   * `dst` (creating its missing directories below `floor`, never `floor`
   * itself), fsync of `parentSyncs` (1 or 2) directories upwards from dst's;
   * `tmp` removed on a failure before the rename.
   */
  fileWriteDurable(
    tmp: string,
    dst: string,
    data: Uint8Array,
    parentSyncs: 1 | 2,
    floor: string,
    callback: (err: NodeJS.ErrnoException | null) => void,
  ): void;
  /**
   * The same, except that when two or more directories need their fsync the
   * topmost is left to the caller: its path comes back as `top` (null when
   * the job synced them all), and the write is durable only after an fsync
   * of it that started after this callback (`fileSyncDir`).
   */
  fileWriteDurable(
    tmp: string,
    dst: string,
    data: Uint8Array,
    parentSyncs: 1 | 2,
    floor: string,
    leaveTop: true,
    callback: (err: NodeJS.ErrnoException | null, top?: string | null) => void,
  ): void;
  /** Opens, fsyncs and closes the directory `dir` in one pool job (absent in addons built before it). */
  fileSyncDir?(dir: string, callback: (err: NodeJS.ErrnoException | null) => void): void;
  /**
   * Several publishes of one drive in one pool job (1 to 64 items of
   * `[tmp, dst, data, parentSyncs, floor, noReplace?]`): each as
   * `fileWriteDurable` with `leaveTop`, one after the other, then each
   * distinct directory left fsync'd once, after the last rename. Each slot of
   * `results` is null (that item is durable) or its Error (absent in addons
   * built before it). With `noReplace` (only when `fileWriteNoReplace`) an
   * item whose dst exists fails with EEXIST and changes nothing.
   */
  fileWriteDurableBatch?(
    items: readonly (readonly [tmp: string, dst: string, data: Uint8Array, parentSyncs: 1 | 2, floor: string, noReplace?: boolean])[],
    callback: (err: Error | null, results?: (NodeJS.ErrnoException | null)[]) => void,
  ): void;
  /** True when `fileWriteDurableBatch` takes an item's `noReplace` (absent in addons built before it). */
  readonly fileWriteNoReplace?: boolean;
  /** Raises the soft RLIMIT_NOFILE to the hard limit; -1 stands for unlimited. */
  raiseFileLimit(): { soft: number; hard: number; raised: boolean };
  /** Bytes from the start of `view` to its first `alignment`-aligned address (absent in addons built before it). */
  alignOffset?(view: Uint8Array, alignment: number): number;
}

const require = createRequire(import.meta.url);

function load(): { addon: NativeAddon | null; error: string | null } {
  if (process.env.SVC_ERASURE_KERNEL === 'ts') return { addon: null, error: 'disabled by SVC_ERASURE_KERNEL=ts' };
  try {
    return { addon: require('../../build/Release/svc_native.node') as NativeAddon, error: null };
  } catch (err) {
    return { addon: null, error: err instanceof Error ? err.message : String(err) };
  }
}

const loaded = load();

/** The addon, or null when running on the TypeScript fallback. */
export const nativeAddon: NativeAddon | null = loaded.addon;
/** Why the addon is not in use (null when it is). */
export const nativeLoadError: string | null = loaded.error;
