/**
 * A drive on the local filesystem.
 *
 * Layout under the drive root (never created by us: a missing root is
 * `DiskNotFound`):
 *   .svc.sys/tmp/<uuid>/…        write staging; .svc.sys/tmp/.trash/<uuid> async deletes
 *   .svc.sys/multipart/…         multipart staging
 *   .svc.sys/buckets/…           bucket metadata records
 *   <bucket>/<key>/xl.meta       all versions of an object (+ inline data)
 *   <bucket>/<key>/<dataDir>/part.N   shard files of a non-inline version
 *
 * Durability: data files are fsync'd once when written; every file that
 * publishes state (xl.meta, records) is written to a temp file, fsync'd,
 * renamed over the target, and the directory fsync'd.
 */
import { randomUUID } from 'node:crypto';
import type { Dirent, Stats } from 'node:fs';
import { constants as fsc } from 'node:fs';
import * as fsp from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { BITROT_HASH_SIZE, bitrotVerify, FrameStreamCheck, frameShardFileSize, shardFileDataSize, shardSize } from '../erasure/index.ts';
import { type NativeAddon, nativeAddon } from '../erasure/native.ts';
import { blocks } from '../util/blocks.ts';
import { hasCode, SvcError } from '../util/errors.ts';
import type { Logger } from '../util/logger.ts';
import { silentLogger } from '../util/logger.ts';
import {
  BUCKETS_DIR,
  type DiskInfo,
  type Drive,
  type DriveIssue,
  type FileVersion,
  type MakeVolOptions,
  MULTIPART_DIR,
  type PartState,
  type RenameDataResult,
  SYS_VOL,
  TMP_DIR,
  TRASH_DIR,
  type VolInfo,
  type WalkEntry,
  type WalkOptions,
  XL_META,
} from './drive.ts';
import { readFormatFile } from './format.ts';
import { DIR_OBJECT_SUFFIX, keyOfEntry } from './object-path.ts';
import { baseVersionId, decodeXlMeta, encodeXlMeta, mergeVersion, supersededId } from './xl-meta.ts';
import { compareKeys } from '../util/key-order.ts';

export interface LocalDriveOptions {
  /** Endpoint string for logs (defaults to the root path). */
  endpoint?: string;
  /** Drive identity from format.json, if known. */
  id?: string;
  logger?: Logger;
  /**
   * Whole-file reads and durable metadata writes as one native pool job each
   * (default: when the addon is built); false keeps them on node:fs/promises
   * (the drive conformance suite runs both).
   */
  nativeFiles?: boolean;
  /**
   * Shard files of at least `DIRECT_MIN_BYTES` written with O_DIRECT
   * (default: when the addon can align buffers; a file system that refuses
   * O_DIRECT turns it off for the drive on first use).
   */
  directIo?: boolean;
}

/** The addon's whole-file jobs (`native/fileio.c`), when built. */
type FileJobs = Pick<NativeAddon, 'fileRead' | 'fileWriteDurable'>;

function readWithJob(jobs: FileJobs, path: string): Promise<Buffer> {
  return new Promise((resolve, reject) => jobs.fileRead(path, (err, data) => (err ? reject(err) : resolve(data!))));
}

function writeWithJob(jobs: FileJobs, tmp: string, dst: string, data: Uint8Array, parentSyncs: 1 | 2, floor: string): Promise<void> {
  return new Promise((resolve, reject) => jobs.fileWriteDurable(tmp, dst, data, parentSyncs, floor, (err) => (err ? reject(err) : resolve())));
}

const VOL_RE = /^[^/\\\0]+$/;

function errno(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | undefined)?.code;
}

interface WriteChecked {
  ino: number;
  size: number;
  mtimeMs: number;
  ctimeMs: number;
  blockSize: number;
  dataBytes: number;
}

const WRITE_CHECKED_MAX = 1024;
/** How long a drive problem counts after it was last seen. */
const ISSUE_TTL_MS = 60_000;
/** Free space below which a drive counts as full. */
const FULL_BELOW_BYTES = 1 << 20;
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const PART_RE = /^part\.[0-9]+$/;
/**
 * createFile flushes a large file every this many bytes while it is still
 * being written. Measured on the 64 MiB PUT bench (ext4): the final fsync
 * fell from ~175 ms to ~50 ms and the PUT rose from ~0.17 to ~0.25 GB/s;
 * 1 MiB flushed too often, 4 MiB left more for the end. Linux
 * sync_file_range(SYNC_FILE_RANGE_WRITE) was tried as the flush (RocksDB's
 * bytes_per_sync approach) and left ~130 ms in the final fsync.
 */
const WRITE_BEHIND_BYTES = 2 << 20;
/**
 * O_DIRECT shard writes. A buffered write copies every byte into the page
 * cache in the writing thread (kernel `copy_folio_from_iter`, page
 * allocation, delayed-allocation bookkeeping), and the fdatasyncs then write
 * those pages back from the same threads: `perf` put about 30 % of a
 * 64 MiB PUT's server CPU in that copy alone. With O_DIRECT the device reads
 * the bytes from our memory; what is left is one copy of each frame into an
 * aligned staging buffer, in user space and cache-warm (scratch runs of four
 * concurrent 128 MiB files: 630-2 500 MB per CPU-second buffered with
 * write-behind fdatasyncs, 2 600-7 700 through the staging copy, and faster
 * wall-clock too). Memory, file offsets and lengths are multiples of
 * `DIRECT_ALIGN`; the last block is zero-padded and the file truncated to its
 * length before the fsync, which still makes the data, the size and the
 * device cache durable before anything is acknowledged.
 */
const DIRECT_ALIGN = 4096;
/** Bytes staged per O_DIRECT write. */
const DIRECT_STAGE = 1 << 20;
/** Declared file size from which createFile writes with O_DIRECT (smaller files stay buffered). */
const DIRECT_MIN_BYTES = 1 << 20;
/** Aligned staging buffers kept for reuse across writes. */
const DIRECT_POOL_MAX = 16;
const directPool: Buffer[] = [];

/** `size` bytes whose memory starts on a `DIRECT_ALIGN` boundary (the addon finds it). */
function alignedBuffer(size: number): Buffer {
  const raw = Buffer.allocUnsafeSlow(size + DIRECT_ALIGN);
  const off = nativeAddon!.alignOffset!(raw, DIRECT_ALIGN);
  return raw.subarray(off, off + size);
}

/** A `DIRECT_STAGE`-byte aligned buffer, from the pool when one is free. */
function takeDirectStage(): Buffer {
  return directPool.pop() ?? alignedBuffer(DIRECT_STAGE);
}

function giveDirectStage(b: Buffer): void {
  if (directPool.length < DIRECT_POOL_MAX) directPool.push(b);
}

/** Writes `buf[0 .. len)` at file offset `pos`, all of it. */
async function writeFullyAt(fh: fsp.FileHandle, buf: Buffer, len: number, pos: number): Promise<void> {
  let off = 0;
  while (off < len) {
    const { bytesWritten } = await fh.write(buf, off, len - off, pos + off);
    if (bytesWritten === 0) throw new SvcError('InternalError', 'write(2) wrote nothing');
    off += bytesWritten;
  }
}

/** `stream`, each chunk pushed through the frame check as it is taken. */
async function* checked(stream: AsyncIterable<Uint8Array>, check: FrameStreamCheck): AsyncGenerator<Uint8Array> {
  for await (const chunk of stream) {
    check.push(chunk);
    yield chunk;
  }
}

/** How long `diskInfo` trusts its last read of format.json (placement asks for diskInfo per PUT). */
const FORMAT_TTL_MS = 1_000;

/**
 * Reads `length` bytes from `offset` in `chunk`-sized pieces into two
 * buffers used in turn, the next piece read while the consumer works on the
 * current one: a chunk's memory is read into again once the consumer pulled
 * the chunk after it (`readFileStream`'s `reuse`). A short file ends the
 * stream early (the consumer's size checks catch it).
 */
async function* reusingReader(fh: fsp.FileHandle, offset: number, length: number, chunk: number, direct = false): AsyncGenerator<Uint8Array> {
  // O_DIRECT (`direct`): each piece is read as the aligned window around it, into aligned memory
  // (at most 2 × DIRECT_ALIGN bytes more than the piece), and handed out as a view of its bytes.
  const size = direct ? Math.min(chunk, length) + 2 * DIRECT_ALIGN : Math.min(chunk, length);
  const bufs = [direct ? alignedBuffer(size) : Buffer.allocUnsafe(size), direct ? alignedBuffer(size) : Buffer.allocUnsafe(size)];
  const lead = [0, 0];
  const want = [0, 0];
  let pos = offset;
  const end = offset + length;
  const readInto = (i: number): Promise<number> | undefined => {
    if (pos >= end) return undefined;
    const n = Math.min(chunk, end - pos);
    const at = pos;
    pos += n;
    if (!direct) return fh.read(bufs[i]!, 0, n, at).then((r) => r.bytesRead);
    const from = at - (at % DIRECT_ALIGN);
    const to = Math.ceil((at + n) / DIRECT_ALIGN) * DIRECT_ALIGN;
    lead[i] = at - from;
    want[i] = n;
    // A read past the end of the file comes back short: only the bytes that exist count.
    return fh.read(bufs[i]!, 0, to - from, from).then((r) => Math.max(0, Math.min(r.bytesRead - lead[i]!, want[i]!)));
  };
  try {
    let cur = 0;
    let pending = readInto(cur);
    while (pending !== undefined) {
      const got = await pending;
      pending = readInto(1 - cur);
      if (got === 0) break;
      yield bufs[cur]!.subarray(lead[cur]!, lead[cur]! + got);
      cur = 1 - cur;
    }
    await pending?.catch(() => undefined);
  } finally {
    await fh.close();
  }
}

export class LocalDrive implements Drive {
  readonly endpoint: string;
  readonly root: string;
  readonly #id: string;
  readonly #log: Logger;
  #online = true;
  readonly #pendingTrash = new Set<Promise<void>>();
  /** Shard files whose frames createFile checked as it wrote them (consumed by verifyFile). */
  readonly #writeChecked = new Map<string, WriteChecked>();
  #format: { at: number; id: string; state: 'ok' | 'missing' | 'corrupt' } | undefined;
  readonly #jobs: FileJobs | undefined;
  /** Large shard files go through O_DIRECT (until the file system refuses it). */
  #direct: boolean;
  /** Recent problems by kind (`DiskInfo.issues`): when first and last seen, and until when they count. */
  readonly #issues = new Map<DriveIssue['kind'], { detail: string; since: number; until: number }>();

  constructor(root: string, opts: LocalDriveOptions = {}) {
    this.root = root;
    this.endpoint = opts.endpoint ?? root;
    this.#id = opts.id ?? '';
    this.#log = opts.logger ?? silentLogger;
    this.#jobs = opts.nativeFiles !== false && typeof nativeAddon?.fileRead === 'function' ? nativeAddon : undefined;
    this.#direct = opts.directIo !== false && process.platform === 'linux' && typeof nativeAddon?.alignOffset === 'function' && fsc.O_DIRECT !== undefined;
  }

  /** `path` opened for an O_DIRECT write, or undefined where the file system refuses O_DIRECT (then never tried again here). */
  async #openDirect(path: string): Promise<fsp.FileHandle | undefined> {
    try {
      return await fsp.open(path, fsc.O_WRONLY | fsc.O_CREAT | fsc.O_TRUNC | fsc.O_DIRECT, 0o666);
    } catch (err) {
      if (errno(err) !== 'EINVAL') throw err;
      this.#direct = false;
      this.#log.info({ event: 'drive_direct_io_unsupported', drive: this.endpoint }, 'the file system refuses O_DIRECT: shard files are written through the page cache');
      return undefined;
    }
  }

  /**
   * Copies `stream` into aligned staging buffers and writes them with
   * O_DIRECT; the last block zero-padded, then the file cut to its length.
   * Returns the bytes taken from the stream.
   */
  async #writeDirect(fh: fsp.FileHandle, stream: AsyncIterable<Uint8Array>, check: FrameStreamCheck | undefined): Promise<number> {
    const stage = takeDirectStage();
    try {
      let written = 0;
      for await (const block of blocks(check === undefined ? stream : checked(stream, check), stage)) {
        // Only the last block can be short: it is zero-padded to the alignment (the file cut back below).
        const len = Math.ceil(block.length / DIRECT_ALIGN) * DIRECT_ALIGN;
        stage.fill(0, block.length, len);
        await writeFullyAt(fh, stage, len, written);
        written += block.length;
      }
      if (written % DIRECT_ALIGN !== 0) await fh.truncate(written);
      return written;
    } finally {
      giveDirectStage(stage);
    }
  }

  /** A whole file: one native pool job, or node:fs's readFile (open, fstat, read, close). */
  #readWhole(path: string): Promise<Buffer> {
    return this.#jobs ? readWithJob(this.#jobs, path) : fsp.readFile(path);
  }

  /**
   * Prepares `.svc.sys` (tmp, multipart, buckets) and moves leftovers of
   * interrupted writes in `tmp` to the trash. The root itself must exist.
   */
  async init(): Promise<void> {
    await this.#checkRoot();
    for (const d of [TMP_DIR, TRASH_DIR, MULTIPART_DIR, BUCKETS_DIR]) {
      await fsp.mkdir(join(this.root, SYS_VOL, d), { recursive: true });
    }
    const tmp = join(this.root, SYS_VOL, TMP_DIR);
    for (const name of await fsp.readdir(tmp)) {
      if (name === '.trash') continue;
      await this.#trash(join(tmp, name));
    }
    // Leftovers of a previous run's trash are removed in the background too.
    const trash = join(this.root, SYS_VOL, TRASH_DIR);
    for (const name of await fsp.readdir(trash)) this.#rmAsync(join(trash, name));
  }

  /** Waits for background trash removal (tests, shutdown). */
  async flush(): Promise<void> {
    while (this.#pendingTrash.size > 0) await Promise.all([...this.#pendingTrash]);
  }

  isOnline(): boolean {
    return this.#online;
  }

  /**
   * Records a problem of this drive for `ttlMs` (re-noting extends it and
   * keeps its first sighting): `DiskInfo.issues` carries it to the admin
   * API, the readiness detail and the console, from any node.
   */
  noteIssue(kind: DriveIssue['kind'], detail: string, ttlMs = ISSUE_TTL_MS): void {
    const now = Date.now();
    const cur = this.#issues.get(kind);
    this.#issues.set(kind, { detail, since: cur !== undefined && cur.until > now ? cur.since : now, until: now + ttlMs });
  }

  clearIssue(kind: DriveIssue['kind']): void {
    this.#issues.delete(kind);
  }

  /** Whether a small file can be created in the drive's temp folder now. */
  async #writable(): Promise<boolean> {
    const probe = join(this.root, SYS_VOL, TMP_DIR, `${randomUUID()}.probe`);
    try {
      await fsp.writeFile(probe, '');
      await fsp.unlink(probe);
      return true;
    } catch {
      return false;
    }
  }

  /** Issues still in force. */
  issues(): DriveIssue[] {
    const now = Date.now();
    const out: DriveIssue[] = [];
    for (const [kind, i] of this.#issues) {
      if (i.until <= now) this.#issues.delete(kind);
      else out.push({ kind, detail: i.detail, since: i.since });
    }
    return out;
  }

  async diskInfo(): Promise<DiskInfo> {
    try {
      const root = await this.#checkRoot();
      const s = await fsp.statfs(this.root);
      const total = s.blocks * s.bsize;
      const free = s.bavail * s.bsize;
      const fmt = await this.#formatIdentity();
      // Full while less than a MiB is free; space freed clears it at once (a refused write noted it for a minute).
      if (free < FULL_BELOW_BYTES) this.noteIssue('full', `${free} bytes free: writes are refused (XSvcStorageFull)`, 10_000);
      else this.clearIssue('full');
      // Read-only (a refused write noted it for a minute): a write probe clears it the moment the
      // file system takes writes again (remounted), or the set would refuse writes it can take.
      if (this.#issues.has('read-only') && (await this.#writable())) this.clearIssue('read-only');
      const issues = this.issues();
      return {
        id: fmt.id,
        format: fmt.state,
        mountId: `${root.dev}:${root.ino}`,
        endpoint: this.endpoint,
        online: true,
        total,
        free,
        used: total - s.bfree * s.bsize,
        ...(issues.length > 0 ? { issues } : {}),
      };
    } catch (err) {
      if (hasCode(err, 'DiskNotFound')) return { id: this.#id, endpoint: this.endpoint, online: false, total: 0, used: 0, free: 0 };
      throw err;
    }
  }

  /**
   * The identity the drive's format.json gives it now (read at most once a
   * second): a drive emptied or swapped while the process runs shows up here
   * as `missing`, which is what keeps it out of its set until heal formats
   * it. Without a format file the configured id (if any) is not claimed.
   */
  async #formatIdentity(): Promise<{ id: string; state: 'ok' | 'missing' | 'corrupt' }> {
    const now = performance.now();
    if (this.#format !== undefined && now - this.#format.at < FORMAT_TTL_MS) return this.#format;
    let id = '';
    let state: 'ok' | 'missing' | 'corrupt';
    try {
      const st = await readFormatFile(this.root);
      if (st.state === 'formatted') {
        id = st.format.erasure.this;
        state = 'ok';
      } else state = st.state === 'unformatted' ? 'missing' : 'corrupt';
    } catch {
      state = 'missing';
    }
    this.#format = { at: now, id, state };
    return this.#format;
  }

  /** Forgets the cached format identity (after this process wrote a format file). */
  forgetFormat(): void {
    this.#format = undefined;
  }

  // ---- path helpers

  #volPath(vol: string): string {
    if (!VOL_RE.test(vol) || vol === '.' || vol === '..') throw new SvcError('InvalidArgument', `bad volume name`);
    return join(this.root, vol);
  }

  #filePath(vol: string, path: string): string {
    const base = this.#volPath(vol);
    if (path === '') return base;
    if (path.includes('\0') || path.startsWith('/')) throw new SvcError('InvalidArgument', 'bad path');
    for (const seg of path.split('/')) {
      if (seg === '' || seg === '.' || seg === '..') throw new SvcError('InvalidArgument', 'path escapes its volume');
    }
    return join(base, path);
  }

  /** The root's stat, or `DiskNotFound` (and offline) when it is not a directory any more. */
  async #checkRoot(): Promise<Stats> {
    const st = await fsp.stat(this.root).catch(() => undefined);
    this.#online = st?.isDirectory() === true;
    if (!this.#online) throw new SvcError('DiskNotFound', undefined, { endpoint: this.endpoint });
    return st!;
  }

  /** Maps a filesystem error to the drive's error codes. */
  async #mapErr(err: unknown, vol: string, notFound: 'FileNotFound' | 'VolumeNotFound' = 'FileNotFound'): Promise<never> {
    if (err instanceof SvcError) throw err;
    const code = errno(err);
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      await this.#checkRoot();
      if (notFound === 'FileNotFound') {
        try {
          await fsp.stat(this.#volPath(vol));
        } catch {
          throw new SvcError('VolumeNotFound', `volume ${vol} not found`);
        }
      }
      throw new SvcError(notFound);
    }
    if (code === 'EMFILE' || code === 'ENFILE') {
      // The process, not the drive, is short: the drive stays online and the request is shed.
      this.#log.warn({ event: 'drive_descriptors_exhausted', endpoint: this.endpoint, code }, 'out of file descriptors on a drive operation');
      throw new SvcError('SlowDown', 'the server is out of file descriptors; retry later', { endpoint: this.endpoint }, { cause: err });
    }
    if (code === 'ENOSPC' || code === 'EDQUOT') {
      // Full: the write is refused with its own code (507), the drive stays online for reads and deletes.
      this.noteIssue('full', `writes refused: no space left (${code})`);
      this.#log.warn({ event: 'drive_full', endpoint: this.endpoint, code }, 'drive full: write refused');
      throw new SvcError('XSvcStorageFull', `drive ${this.endpoint} is full`, { endpoint: this.endpoint }, { cause: err });
    }
    if (code === 'EIO' || code === 'EROFS' || code === 'EACCES' || code === 'EPERM') {
      this.noteIssue(code === 'EROFS' ? 'read-only' : 'faulty', code === 'EROFS' ? 'writes refused: the file system is read-only' : `I/O error ${code}`);
      this.#log.warn({ event: 'drive_io_error', endpoint: this.endpoint, code }, 'drive I/O error');
      throw new SvcError('DiskNotFound', `drive error ${code}`, { endpoint: this.endpoint }, { cause: err });
    }
    throw new SvcError('InternalError', undefined, { endpoint: this.endpoint }, { cause: err });
  }

  async #fsyncDir(dir: string): Promise<void> {
    const fh = await fsp.open(dir, fsc.O_RDONLY | fsc.O_DIRECTORY);
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
  }

  #rmAsync(path: string): void {
    const p = fsp
      .rm(path, { recursive: true, force: true })
      .catch((err: unknown) => {
        this.#log.warn({ event: 'drive_trash_remove_failed', endpoint: this.endpoint, err }, 'trash removal failed');
      })
      .finally(() => this.#pendingTrash.delete(p));
    this.#pendingTrash.add(p);
  }

  /** Moves a file or tree into the trash (atomic, instant) and removes it in the background. */
  async #trash(path: string): Promise<void> {
    const dst = join(this.root, SYS_VOL, TRASH_DIR, randomUUID());
    await fsp.rename(path, dst);
    this.#rmAsync(dst);
  }

  /** Writes `data` to `dst` atomically: tmp file, fsync, rename, fsync directory. */
  /**
   * Publishes `data` at `dst` in volume `vol`: a temp file written and
   * fsync'd, renamed into place (missing directories of `dst` created; the
   * native job never creates the volume itself), then dst's directory
   * fsync'd, and its parent too when `parentSyncs` is 2 (a directory just
   * created). One native pool job, or the same steps on node:fs.
   */
  async #atomicWrite(vol: string, dst: string, data: Uint8Array, parentSyncs: 1 | 2 = 1): Promise<void> {
    const tmpDir = join(this.root, SYS_VOL, TMP_DIR);
    const tmp = join(tmpDir, `${randomUUID()}.tmp`);
    if (this.#jobs) {
      try {
        return await writeWithJob(this.#jobs, tmp, dst, data, parentSyncs, this.#volPath(vol));
      } catch (err) {
        // The temp directory's own parents are gone (a wiped drive being formatted again):
        // recreate them below the drive's root, never the root itself (a drive that is gone
        // must stay gone, not come back empty), then try once more.
        if (errno(err) !== 'ENOENT' || (err as NodeJS.ErrnoException).path !== tmp) throw err;
        for (const dir of [join(this.root, SYS_VOL), tmpDir]) {
          await fsp.mkdir(dir).catch((e: unknown) => {
            if (errno(e) !== 'EEXIST') throw e;
          });
        }
        return await writeWithJob(this.#jobs, tmp, dst, data, parentSyncs, this.#volPath(vol));
      }
    }
    await fsp.mkdir(tmpDir, { recursive: true });
    const fh = await fsp.open(tmp, 'w');
    try {
      await fh.writeFile(data);
      await fh.sync();
    } finally {
      await fh.close();
    }
    try {
      await fsp.mkdir(dirname(dst), { recursive: true });
      await fsp.rename(tmp, dst);
    } catch (err) {
      await fsp.rm(tmp, { force: true });
      throw err;
    }
    await this.#fsyncDir(dirname(dst));
    if (parentSyncs === 2) await this.#fsyncDir(dirname(dirname(dst)));
  }

  /** Removes empty directories from `dir` up to (not including) the volume root. */
  async #prune(vol: string, dir: string): Promise<void> {
    const stop = this.#volPath(vol);
    let d = dir;
    while (d.length > stop.length && d.startsWith(stop)) {
      try {
        await fsp.rmdir(d);
      } catch {
        return;
      }
      d = dirname(d);
    }
  }

  // ---- volumes

  async makeVol(vol: string, opts: MakeVolOptions = {}): Promise<void> {
    await this.#checkRoot();
    try {
      await fsp.mkdir(this.#volPath(vol));
    } catch (err) {
      if (errno(err) === 'EEXIST') throw new SvcError('VolumeExists');
      await this.#mapErr(err, vol, 'VolumeNotFound');
    }
    if (opts.healing !== undefined) this.noteIssue('healing', opts.healing.detail, opts.healing.ttlMs);
  }

  async listVols(): Promise<VolInfo[]> {
    await this.#checkRoot();
    const out: VolInfo[] = [];
    try {
      for (const d of await fsp.readdir(this.root, { withFileTypes: true })) {
        if (!d.isDirectory() || d.name.startsWith('.')) continue;
        const st = await fsp.stat(join(this.root, d.name));
        out.push({ name: d.name, created: Math.round(st.birthtimeMs || st.mtimeMs) });
      }
    } catch (err) {
      await this.#mapErr(err, '', 'VolumeNotFound');
    }
    return out.sort((a, b) => compareKeys(a.name, b.name));
  }

  async statVol(vol: string): Promise<VolInfo> {
    try {
      const st = await fsp.stat(this.#volPath(vol));
      if (!st.isDirectory()) throw new SvcError('VolumeNotFound');
      this.#online = true;
      return { name: vol, created: Math.round(st.birthtimeMs || st.mtimeMs) };
    } catch (err) {
      return this.#mapErr(err, vol, 'VolumeNotFound');
    }
  }

  async deleteVol(vol: string, force: boolean): Promise<void> {
    const p = this.#volPath(vol);
    try {
      if (force) {
        await fsp.stat(p);
        await this.#trash(p);
      } else {
        await fsp.rmdir(p);
      }
    } catch (err) {
      if (errno(err) === 'ENOTEMPTY' || errno(err) === 'EEXIST') throw new SvcError('VolumeNotEmpty');
      await this.#mapErr(err, vol, 'VolumeNotFound');
    }
  }

  // ---- plain files

  async writeAll(vol: string, path: string, data: Uint8Array): Promise<void> {
    await this.#checkRoot();
    try {
      await this.#atomicWrite(vol, this.#filePath(vol, path), data);
    } catch (err) {
      await this.#mapErr(err, vol);
    }
  }

  async readAll(vol: string, path: string): Promise<Uint8Array> {
    try {
      const data = await this.#readWhole(this.#filePath(vol, path));
      this.#online = true;
      return data;
    } catch (err) {
      return this.#mapErr(err, vol);
    }
  }

  async createFile(
    vol: string,
    path: string,
    size: number,
    stream: AsyncIterable<Uint8Array>,
    opts: { frameBlockSize?: number } = {},
  ): Promise<void> {
    await this.#checkRoot();
    const p = this.#filePath(vol, path);
    this.#writeChecked.delete(p);
    let fh: fsp.FileHandle | undefined;
    let flushing: Promise<void> | undefined;
    try {
      await fsp.mkdir(dirname(p), { recursive: true });
      const direct = this.#direct && size >= DIRECT_MIN_BYTES ? await this.#openDirect(p) : undefined;
      fh = direct ?? (await fsp.open(p, 'w'));
      let written = 0;
      // Frame check of the bytes handed to write(2), while they are ours.
      const check = opts.frameBlockSize !== undefined && opts.frameBlockSize > 0 ? new FrameStreamCheck(opts.frameBlockSize) : undefined;
      // Write-behind (buffered writes): while the stream continues, the bytes
      // written so far are flushed (one fdatasync in flight at a time), so the
      // disk works during the upload instead of only in the final fsync.
      let flushedTo = 0;
      let flushErr: unknown;
      if (direct !== undefined) written = await this.#writeDirect(direct, stream, check);
      else for await (const chunk of stream) {
        check?.push(chunk);
        let off = 0;
        while (off < chunk.length) {
          const { bytesWritten } = await fh.write(chunk, off, chunk.length - off);
          off += bytesWritten;
        }
        written += chunk.length;
        if (flushErr !== undefined) throw flushErr;
        if (flushing === undefined && written - flushedTo >= WRITE_BEHIND_BYTES) {
          flushedTo = written;
          flushing = fh.datasync().then(
            () => {
              flushing = undefined;
            },
            (err: unknown) => {
              flushErr = err;
              flushing = undefined;
            },
          );
        }
      }
      if (flushing !== undefined) await flushing;
      if (flushErr !== undefined) throw flushErr;
      check?.finish();
      if (size >= 0 && written !== size) {
        throw new SvcError('IncompleteBody', `expected ${size} bytes, got ${written}`);
      }
      // Durability comes from this fsync alone (the write-behind flushes only
      // start the disk early); never one per block.
      await fh.sync();
      if (check !== undefined && check.dataBytes > 0) {
        const st = await fh.stat();
        const { ino, size: fileSize, mtimeMs, ctimeMs } = st;
        this.#rememberChecked(p, { ino, size: fileSize, mtimeMs, ctimeMs, blockSize: check.blockSize, dataBytes: check.dataBytes });
      }
      await fh.close();
      fh = undefined;
    } catch (err) {
      this.#writeChecked.delete(p);
      await flushing; // settles without throwing; the handle is closed after it
      await fh?.close().catch(() => undefined);
      await fsp.rm(p, { force: true }).catch(() => undefined);
      await this.#mapErr(err, vol);
    }
  }

  #rememberChecked(p: string, rec: WriteChecked): void {
    // Bounded: an entry is consumed by verifyFile; writes abandoned before it leave a few.
    if (this.#writeChecked.size >= WRITE_CHECKED_MAX) {
      const oldest = this.#writeChecked.keys().next().value;
      if (oldest !== undefined) this.#writeChecked.delete(oldest);
    }
    this.#writeChecked.set(p, rec);
  }

  async readFileStream(
    vol: string,
    path: string,
    offset: number,
    length: number,
    opts: { chunkSize?: number; reuse?: boolean } = {},
  ): Promise<AsyncIterable<Uint8Array>> {
    const p = this.#filePath(vol, path);
    let fh: fsp.FileHandle;
    // Large reads into reused buffers (a GET's shard reads) bypass the page cache as the shard
    // files were written (O_DIRECT; see DIRECT_ALIGN).
    let direct = opts.reuse === true && length >= DIRECT_MIN_BYTES && this.#direct;
    try {
      if (direct) {
        try {
          fh = await fsp.open(p, fsc.O_RDONLY | fsc.O_DIRECT);
        } catch (err) {
          if (errno(err) !== 'EINVAL') throw err;
          direct = false;
          fh = await fsp.open(p, 'r');
        }
      } else fh = await fsp.open(p, 'r');
    } catch (err) {
      return this.#mapErr(err, vol);
    }
    if (length <= 0) {
      await fh.close();
      return (async function* () {})();
    }
    const hwm = opts.chunkSize !== undefined && opts.chunkSize > 0 && opts.chunkSize <= 4 << 20 ? opts.chunkSize : 1 << 20;
    if (opts.reuse === true) return reusingReader(fh, offset, length, hwm, direct);
    return fh.createReadStream({ start: offset, end: offset + length - 1, highWaterMark: hwm, autoClose: true });
  }

  async verifyFile(vol: string, path: string, shardBlockSize: number, dataBytes: number): Promise<void> {
    const p = this.#filePath(vol, path);
    try {
      const st = await fsp.stat(p);
      const want = frameShardFileSize(dataBytes, shardBlockSize);
      if (st.size !== want) throw new SvcError('FileCorrupt', `shard file is ${st.size} bytes, expected ${want}`);
      // Written by createFile with every frame checked against the bytes
      // handed to the file system, fsync'd, and unchanged since (same inode,
      // size, mtime, ctime): that check is this verification.
      const rec = this.#writeChecked.get(p);
      this.#writeChecked.delete(p);
      if (
        rec !== undefined &&
        rec.blockSize === shardBlockSize &&
        rec.dataBytes === dataBytes &&
        rec.ino === st.ino &&
        rec.size === st.size &&
        rec.mtimeMs === st.mtimeMs &&
        rec.ctimeMs === st.ctimeMs
      ) {
        return;
      }
      await this.#verifyFrames(p, shardBlockSize, dataBytes);
    } catch (err) {
      await this.#mapErr(err, vol);
    }
  }

  /** Reads a shard file frame by frame into one reusable buffer; `FileCorrupt` on any mismatch or short read. */
  async #verifyFrames(p: string, shardBlockSize: number, dataBytes: number): Promise<void> {
    const fh = await fsp.open(p, 'r');
    try {
      const buf = Buffer.allocUnsafe(BITROT_HASH_SIZE + Math.min(shardBlockSize, Math.max(dataBytes, 1)));
      let pos = 0;
      for (let left = dataBytes, block = 0; left > 0; block++) {
        const len = BITROT_HASH_SIZE + Math.min(shardBlockSize, left);
        const { bytesRead } = await fh.read(buf, 0, len, pos);
        const frame = buf.subarray(0, len);
        if (bytesRead !== len || !bitrotVerify(frame.subarray(BITROT_HASH_SIZE), frame, 0)) {
          throw new SvcError('FileCorrupt', 'shard failed its bitrot check', { block });
        }
        pos += len;
        left -= len - BITROT_HASH_SIZE;
      }
    } finally {
      await fh.close();
    }
  }

  async checkParts(vol: string, path: string, version: FileVersion, opts: { deep: boolean }): Promise<PartState[]> {
    const e = version.erasure;
    if (!e || version.inline || version.dataDir === '') return version.parts.map(() => 'ok');
    const full = shardSize(e.blockSize, e.data);
    const out: PartState[] = [];
    // A missing part on a wiped drive is the drive's absence: the root is checked once per call.
    let rootChecked = false;
    for (const part of version.parts) {
      const p = this.#filePath(vol, `${path === '' ? '' : `${path}/`}${version.dataDir}/part.${part.number}`);
      const dataBytes = shardFileDataSize(part.size, e.blockSize, e.data);
      let st: Stats;
      try {
        st = await fsp.stat(p);
      } catch (err) {
        const code = errno(err);
        if (code === 'ENOENT' || code === 'ENOTDIR') {
          if (!rootChecked) await this.#checkRoot();
          rootChecked = true;
          out.push('missing');
          continue;
        }
        return this.#mapErr(err, vol);
      }
      if (!st.isFile() || st.size !== frameShardFileSize(dataBytes, full)) {
        out.push('corrupt');
        continue;
      }
      if (!opts.deep) {
        out.push('ok');
        continue;
      }
      try {
        await this.#verifyFrames(p, full, dataBytes);
        out.push('ok');
      } catch (err) {
        if (hasCode(err, 'FileCorrupt')) out.push('corrupt');
        else return this.#mapErr(err, vol);
      }
    }
    this.#online = true;
    return out;
  }

  async renameFile(srcVol: string, srcPath: string, dstVol: string, dstPath: string): Promise<void> {
    await this.#checkRoot();
    const src = this.#filePath(srcVol, srcPath);
    const dst = this.#filePath(dstVol, dstPath);
    try {
      await fsp.mkdir(dirname(dst), { recursive: true });
      await fsp.rename(src, dst);
      await this.#fsyncDir(dirname(dst));
    } catch (err) {
      await this.#mapErr(err, srcVol);
    }
  }

  async delete(vol: string, path: string, opts: { recursive: boolean }): Promise<void> {
    const p = this.#filePath(vol, path);
    try {
      if (opts.recursive) {
        await this.#trash(p);
      } else {
        const st = await fsp.lstat(p);
        if (st.isDirectory()) await fsp.rmdir(p);
        else await fsp.unlink(p);
      }
    } catch (err) {
      if (errno(err) === 'ENOTEMPTY') throw new SvcError('VolumeNotEmpty', 'directory not empty');
      await this.#mapErr(err, vol);
    }
    if (vol !== SYS_VOL || path.startsWith(MULTIPART_DIR + '/')) await this.#prune(vol, dirname(p));
  }

  async listDir(vol: string, path: string): Promise<string[]> {
    try {
      const ents = await fsp.readdir(this.#filePath(vol, path), { withFileTypes: true });
      return ents.map((d) => (d.isDirectory() ? d.name + '/' : d.name)).sort(compareKeys);
    } catch (err) {
      return this.#mapErr(err, vol);
    }
  }

  // ---- object metadata and commit

  async readXlMeta(vol: string, path: string): Promise<Uint8Array> {
    return this.readAll(vol, path === '' ? XL_META : `${path}/${XL_META}`);
  }

  /** Current journal of an object; [] when it has no xl.meta. */
  /**
   * Current journal of an object; [] when it has no xl.meta, after checking
   * the drive is there (`probeRoot`; a caller whose next step fails on a
   * missing drive anyway may skip that stat).
   */
  async #readVersions(vol: string, path: string, probeRoot = true): Promise<FileVersion[]> {
    try {
      return decodeXlMeta(await this.#readWhole(join(this.#filePath(vol, path), XL_META)));
    } catch (err) {
      const code = errno(err);
      if (code === 'ENOENT' || code === 'ENOTDIR') {
        if (probeRoot) await this.#checkRoot();
        return [];
      }
      return this.#mapErr(err, vol);
    }
  }

  async #writeVersions(vol: string, path: string, versions: FileVersion[], newDir = true): Promise<void> {
    const dir = this.#filePath(vol, path);
    if (versions.length === 0) {
      await fsp.rm(join(dir, XL_META), { force: true });
      await this.#fsyncDir(dir);
      await this.#prune(vol, dir);
      return;
    }
    // A new object directory must itself survive power loss: fsync its parent too.
    await this.#atomicWrite(vol, join(dir, XL_META), encodeXlMeta(versions), newDir ? 2 : 1);
  }

  /*
   * Commit of one drive. Crash points and why each is safe:
   *  1. before the data-dir move: nothing changed on this drive; staging is
   *     swept from tmp at the next start.
   *  2. after the data dir moved in, before xl.meta: the data dir is not
   *     referenced by any xl.meta, so it is invisible (garbage for the scanner).
   *  3. after xl.meta is renamed in: the version is published on this drive,
   *     with its data already fsync'd; the object layer decides visibility by
   *     read quorum across drives, so a drive-local publish alone never makes a
   *     half-written object visible. A replaced version (same id) stays in the
   *     journal as a superseded copy with its data in place, so the previous
   *     state keeps its votes until the object layer, at write quorum, drops
   *     it (`deleteVersion` of the superseded id).
   */
  async renameData(
    srcVol: string,
    srcPath: string,
    version: FileVersion,
    dstVol: string,
    dstPath: string,
  ): Promise<RenameDataResult> {
    // The drive and the volume must be there. With the native jobs an
    // existing journal read proves both; for a new object the metadata write
    // itself fails when either is missing (it never creates the volume), and
    // the error is mapped then (DiskNotFound / VolumeNotFound). Only a data
    // directory's mkdir could create the volume, so that case checks it
    // first. A new inline object thus costs two thread-pool crossings per
    // drive (read, publish), not six.
    const checkVol = async () => {
      try {
        await fsp.stat(this.#volPath(dstVol));
      } catch (err) {
        await this.#mapErr(err, dstVol, 'VolumeNotFound');
      }
    };
    if (!this.#jobs) {
      await this.#checkRoot();
      await checkVol();
    }
    const stage = this.#filePath(srcVol, srcPath);
    const dst = this.#filePath(dstVol, dstPath);
    try {
      const current = await this.#readVersions(dstVol, dstPath, !this.#jobs);
      if (current.length === 0) await this.#refuseDataDirKey(dstVol, dstPath);
      if (this.#jobs && current.length === 0 && version.dataDir !== '') await checkVol();
      const merged = mergeVersion(current, version);
      const replaced = merged.replaced;
      let versions = merged.versions;
      if (replaced && (replaced.inline || replaced.dataDir !== version.dataDir)) {
        versions = mergeVersion(versions, { ...replaced, versionId: supersededId(replaced) }).versions;
      }
      // The native metadata write creates the object's directory itself when it renames into it.
      if (version.dataDir !== '' || !this.#jobs) await fsp.mkdir(dst, { recursive: true });
      if (version.dataDir !== '') {
        await fsp.rename(join(stage, version.dataDir), join(dst, version.dataDir));
      }
      await this.#writeVersions(dstVol, dstPath, versions, current.length === 0);
      const superseded = versions
        .filter((v) => v.versionId !== version.versionId && baseVersionId(v.versionId) === version.versionId)
        .map((v) => v.versionId);
      return { ...(replaced ? { replaced } : {}), ...(superseded.length > 0 ? { superseded } : {}) };
    } catch (err) {
      return this.#mapErr(err, dstVol);
    }
  }

  /**
   * A new object whose folder would be a data folder of an object above it
   * (`victim/<its data dir>`) is refused: its metadata would sit among that
   * object's shards, and deleting the object would take it along. Only UUID
   * segments can be data folders; each is checked against its parent's
   * journal on this drive.
   */
  async #refuseDataDirKey(vol: string, path: string): Promise<void> {
    const segs = path.split('/');
    for (let i = 1; i < segs.length; i++) {
      if (!UUID_RE.test(segs[i]!)) continue;
      let named: FileVersion[];
      try {
        named = decodeXlMeta(await this.#readWhole(join(this.#filePath(vol, segs.slice(0, i).join('/')), XL_META)), false);
      } catch {
        continue; // no object above (or an unreadable journal: its heal decides)
      }
      if (named.some((v) => v.dataDir === segs[i])) {
        throw new SvcError('XSvcObjectNameReserved', `the key segment ${segs[i]} is a data folder of the object "${segs.slice(0, i).join('/')}"; this key cannot be stored`, { path });
      }
    }
  }

  async undoRenameData(
    srcVol: string,
    srcPath: string,
    version: FileVersion,
    dstVol: string,
    dstPath: string,
    replaced: FileVersion | undefined,
  ): Promise<void> {
    await this.#checkRoot();
    const stage = this.#filePath(srcVol, srcPath);
    const dst = this.#filePath(dstVol, dstPath);
    try {
      const sup = replaced ? supersededId(replaced) : undefined;
      let versions = (await this.#readVersions(dstVol, dstPath)).filter((v) => v.versionId !== version.versionId && v.versionId !== sup);
      if (replaced) versions = mergeVersion(versions, replaced).versions;
      // Restore the metadata first: once it no longer names the new data dir,
      // moving that dir out is invisible.
      await this.#writeVersions(dstVol, dstPath, versions);
      // The new data dir goes back into staging (a multipart upload stays
      // completable); the caller discards staging when it is a plain PUT.
      if (version.dataDir !== '' && (!replaced || replaced.dataDir !== version.dataDir)) {
        await fsp.mkdir(stage, { recursive: true });
        await fsp.rename(join(dst, version.dataDir), join(stage, version.dataDir)).catch((err: unknown) => {
          if (errno(err) !== 'ENOENT') throw err;
        });
        if (versions.length === 0) await this.#prune(dstVol, dst);
      }
    } catch (err) {
      await this.#mapErr(err, dstVol);
    }
  }

  async commitRenameData(srcVol: string, srcPath: string): Promise<void> {
    try {
      await this.#trash(this.#filePath(srcVol, srcPath));
    } catch (err) {
      if (errno(err) === 'ENOENT') return;
      await this.#mapErr(err, srcVol);
    }
  }

  async writeMetadata(vol: string, path: string, version: FileVersion, opts: { update?: boolean } = {}): Promise<void> {
    await this.#checkRoot();
    try {
      await fsp.stat(this.#volPath(vol));
    } catch (err) {
      await this.#mapErr(err, vol, 'VolumeNotFound');
    }
    try {
      const current = await this.#readVersions(vol, path);
      let next = version;
      if (opts.update) {
        const old = current.find((v) => v.versionId === version.versionId);
        if (!old) throw new SvcError('FileNotFound');
        // Only metadata changes: this drive's geometry (its shard index), data
        // dir, parts and inline shard stay as stored.
        next = {
          ...old,
          modTime: version.modTime,
          userMeta: version.userMeta,
          contentHeaders: version.contentHeaders,
          tags: version.tags,
          sysMeta: version.sysMeta,
        };
      }
      const { versions, replaced } = mergeVersion(current, next);
      // A new version replacing an id also ends that id's superseded copies.
      const gone = opts.update
        ? []
        : versions.filter((v) => v.versionId !== next.versionId && baseVersionId(v.versionId) === next.versionId);
      if (!opts.update && replaced) gone.push(replaced);
      const kept = versions.filter((v) => !gone.includes(v));
      await this.#writeVersions(vol, path, kept);
      for (const g of gone) {
        if (g.dataDir === '' || g.dataDir === next.dataDir) continue;
        await this.#trash(join(this.#filePath(vol, path), g.dataDir)).catch((err: unknown) => {
          if (errno(err) !== 'ENOENT') throw err;
        });
      }
    } catch (err) {
      await this.#mapErr(err, vol);
    }
  }

  async deleteVersion(vol: string, path: string, versionId: string): Promise<void> {
    await this.#checkRoot();
    try {
      const current = await this.#readVersions(vol, path);
      // Deleting a version also deletes its superseded copies (a base id
      // names them all; a superseded id names only itself).
      const victims = current.filter((v) => v.versionId === versionId || baseVersionId(v.versionId) === versionId);
      if (victims.length === 0) throw new SvcError('FileNotFound');
      const rest = current.filter((v) => !victims.includes(v));
      const dir = this.#filePath(vol, path);
      // Metadata first: once the version is unlisted its data is unreachable,
      // so a crash before the data removal leaves garbage, not a broken version.
      if (rest.length === 0) {
        await fsp.rm(join(dir, XL_META), { force: true });
        await this.#fsyncDir(dir);
      } else await this.#writeVersions(vol, path, rest, false);
      const shared = new Set(rest.map((v) => v.dataDir));
      for (const v of victims) {
        if (v.dataDir === '' || shared.has(v.dataDir)) continue;
        await this.#trash(join(dir, v.dataDir)).catch((err: unknown) => {
          if (errno(err) !== 'ENOENT') throw err;
        });
      }
      if (rest.length === 0) await this.#prune(vol, dir);
    } catch (err) {
      await this.#mapErr(err, vol);
    }
  }

  // ---- walk

  walkDir(vol: string, opts: WalkOptions): AsyncIterable<WalkEntry> {
    return this.#walkRoot(vol, opts);
  }

  async *#walkRoot(vol: string, opts: WalkOptions): AsyncGenerator<WalkEntry> {
    const prefix = opts.prefix ?? '';
    const cut = prefix.lastIndexOf('/') + 1;
    const baseKey = prefix.slice(0, cut);
    const filter = prefix.slice(cut);
    let baseDir: string;
    try {
      // '/' (a prefix starting with '/') would name the volume itself: no key starts with '/'
      if (baseKey === '/') throw new SvcError('InvalidArgument', 'empty path segment');
      baseDir = baseKey === '' ? this.#volPath(vol) : this.#filePath(vol, baseKey.slice(0, -1));
    } catch {
      return; // a prefix with '..' or empty segments names no stored object
    }
    try {
      await fsp.stat(this.#volPath(vol));
    } catch (err) {
      await this.#mapErr(err, vol, 'VolumeNotFound');
    }
    if (filter === '' && baseKey !== '') {
      // A prefix ending in '/' names a directory object too ('dir/' is stored
      // beside the directory, as `dir__XLDIR__`); it sorts before its children.
      yield* this.#dirObject(baseDir, baseKey, opts.marker);
    }
    yield* this.#walk(baseDir, baseKey, filter, opts, undefined);
  }

  /** Yields the directory object `key` (ending in '/') stored beside `dir`, when present and after the marker. */
  async *#dirObject(dir: string, key: string, marker: string | undefined): AsyncGenerator<WalkEntry, void> {
    if (marker !== undefined && compareKeys(key, marker) <= 0) return;
    try {
      yield { name: key, meta: await this.#readWhole(join(`${dir}${DIR_OBJECT_SUFFIX}`, XL_META)) };
    } catch (err) {
      const code = errno(err);
      if (code === 'ENOENT' || code === 'ENOTDIR') return;
      return this.#mapErr(err, '');
    }
  }

  /**
   * Data directories in the object directory `dir` that `named` (its
   * xl.meta's data dirs) does not hold: UUID names holding nothing but
   * `part.N` files, untouched (mtime and ctime) for `ageMs`. A key below the
   * object that happens to be a UUID holds an xl.meta or directories, so it
   * is never one.
   */
  async #orphansIn(dir: string, named: ReadonlySet<string>, ageMs: number): Promise<string[]> {
    let ents: Dirent[];
    try {
      ents = await fsp.readdir(dir, { withFileTypes: true });
    } catch {
      return [];
    }
    const cutoff = Date.now() - ageMs;
    const out: string[] = [];
    for (const d of ents) {
      if (!d.isDirectory() || !UUID_RE.test(d.name) || named.has(d.name)) continue;
      const p = join(dir, d.name);
      try {
        const inside = await fsp.readdir(p, { withFileTypes: true });
        if (!inside.every((f) => f.isFile() && PART_RE.test(f.name))) continue;
        const st = await fsp.stat(p);
        let newest = Math.max(st.mtimeMs, st.ctimeMs);
        for (const f of inside) {
          const fst = await fsp.stat(join(p, f.name));
          newest = Math.max(newest, fst.mtimeMs, fst.ctimeMs);
        }
        if (newest <= cutoff) out.push(d.name);
      } catch {
        // Gone or unreadable while looked at: not reported.
      }
    }
    return out.sort();
  }

  /** Data dirs named by the xl.meta in `dir` (not sub-objects). */
  async #dataDirsOf(dir: string): Promise<Set<string>> {
    try {
      const vs = decodeXlMeta(await this.#readWhole(join(dir, XL_META)), false);
      return new Set(vs.map((v) => v.dataDir).filter((d) => d !== ''));
    } catch {
      return new Set();
    }
  }

  async *#walk(
    dir: string,
    keyPrefix: string,
    filter: string,
    opts: WalkOptions,
    skipKnown: Set<string> | undefined,
  ): AsyncGenerator<WalkEntry> {
    let ents: Dirent[];
    try {
      ents = await fsp.readdir(dir, { withFileTypes: true });
    } catch (err) {
      const code = errno(err);
      if (code === 'ENOENT' || code === 'ENOTDIR') {
        await this.#checkRoot();
        return;
      }
      return this.#mapErr(err, '');
    }
    const hasMeta = ents.some((d) => d.name === XL_META && d.isFile());
    const skip = skipKnown ?? (hasMeta ? await this.#dataDirsOf(dir) : new Set<string>());
    type Item = { key: string; obj: boolean; name: string };
    const items: Item[] = [];
    for (const d of ents) {
      if (!d.isDirectory() || skip.has(d.name) || !d.name.startsWith(filter)) continue;
      const key = keyOfEntry(keyPrefix, d.name);
      items.push({ key, obj: true, name: d.name });
      if (!key.endsWith('/')) items.push({ key: key + '/', obj: false, name: d.name });
    }
    items.sort((a, b) => compareKeys(a.key, b.key) || (a.obj ? -1 : 1));
    const marker = opts.marker;
    const dataDirs = new Map<string, Set<string>>();
    for (const it of items) {
      const child = join(dir, it.name);
      if (it.obj) {
        if (marker !== undefined && compareKeys(it.key, marker) <= 0) continue;
        let meta: Uint8Array | undefined;
        try {
          meta = await this.#readWhole(join(child, XL_META));
        } catch (err) {
          const code = errno(err);
          if (code !== 'ENOENT' && code !== 'ENOTDIR') return this.#mapErr(err, '');
        }
        let named: Set<string> | undefined;
        if (meta !== undefined) {
          try {
            const vs = decodeXlMeta(meta, false);
            named = new Set(vs.map((v) => v.dataDir).filter((d) => d !== ''));
            dataDirs.set(it.name, named);
          } catch {
            // A corrupt xl.meta still lists (the object layer votes it out); it proves nothing about data dirs.
          }
        }
        const orphans = opts.orphanAgeMs !== undefined && (meta === undefined || named !== undefined) ? await this.#orphansIn(child, named ?? new Set(), opts.orphanAgeMs) : [];
        if (meta === undefined && orphans.length === 0) continue;
        yield { name: it.key, ...(meta !== undefined ? { meta } : {}), ...(orphans.length > 0 ? { orphans } : {}) };
      } else {
        if (marker !== undefined && compareKeys(marker, it.key) >= 0 && !marker.startsWith(it.key)) continue;
        const sub = this.#walk(child, it.key, '', { ...opts, recursive: true }, dataDirs.get(it.name));
        if (opts.recursive) {
          yield* sub;
        } else {
          // A common prefix exists when anything at all is stored below it.
          for await (const _ of sub) {
            yield { name: it.key, prefix: true };
            break;
          }
        }
      }
    }
  }
}
