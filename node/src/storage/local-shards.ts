/**
 * Shard files of a `LocalDrive`: written once and fsync'd (write-behind
 * flushes while they stream in; large files with O_DIRECT), read as
 * streams (into two reused buffers for a GET's shard reads), and verified
 * frame by frame (skipped for a file this process checked as it wrote it
 * and that is unchanged since).
 */
import type { Stats } from 'node:fs';
import { constants as fsc } from 'node:fs';
import * as fsp from 'node:fs/promises';
import { dirname } from 'node:path';
import { BITROT_HASH_SIZE, bitrotVerify, FrameStreamCheck, frameShardFileSize, shardFileDataSize, shardSize } from '../erasure/index.ts';
import { nativeAddon } from '../erasure/native.ts';
import { hasCode, SvcError } from '../util/errors.ts';
import type { FileVersion, PartState } from './drive.ts';
import { type DriveFs, errno } from './local-fs.ts';

interface WriteChecked {
  ino: number;
  size: number;
  mtimeMs: number;
  ctimeMs: number;
  blockSize: number;
  dataBytes: number;
}

const WRITE_CHECKED_MAX = 1024;
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
/**
 * Bytes staged per O_DIRECT write. Each write costs about 0.1 ms of CPU
 * whatever its size (the pool-thread trip, pinning, the request and its
 * completion; scratch runs of 256 MiB in 512 KiB / 1 MiB / 2 MiB writes:
 * 73-96 / 43-50 / 29-41 CPU ms), so fewer, larger writes are cheaper: a
 * 64 MiB PUT's 2 MB of shard per MB in 2 MiB writes saves about a write per
 * MB against 1 MiB ones. (The PUT path's frames skip the stage: see
 * `#writeDirect`. Writing them in place one 512 KiB frame at a time saved
 * the copy but took twice the writes: no better in alternating runs; the PUT
 * now groups about 2 MiB of frames per drive.)
 */
const DIRECT_STAGE = 2 << 20;
/** Fewest bytes of whole pages a chunk written in place must hold (smaller ones are staged, to keep writes large). */
const DIRECT_IN_PLACE_MIN = 256 << 10;
/** Declared file size from which createFile writes with O_DIRECT (smaller files stay buffered). */
const DIRECT_MIN_BYTES = 1 << 20;
/** Aligned staging buffers kept for reuse across writes (one per drive of four 4-drive uploads). */
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

/** Writes `bufs` back to back from file offset `pos`, all of them (a short `pwritev` goes on where it stopped). */
async function writevFullyAt(fh: fsp.FileHandle, bufs: Uint8Array[], pos: number): Promise<void> {
  let left = bufs;
  let at = pos;
  while (left.length > 0) {
    const { bytesWritten } = await fh.writev(left, at);
    if (bytesWritten === 0) throw new SvcError('InternalError', 'pwritev(2) wrote nothing');
    at += bytesWritten;
    let skip = bytesWritten;
    const rest: Uint8Array[] = [];
    for (const b of left) {
      if (skip >= b.length) skip -= b.length;
      else {
        rest.push(skip > 0 ? b.subarray(skip) : b);
        skip = 0;
      }
    }
    left = rest;
  }
}

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

export class ShardFiles {
  readonly #fs: DriveFs;
  /** Shard files whose frames createFile checked as it wrote them (consumed by verifyFile). */
  readonly #writeChecked = new Map<string, WriteChecked>();
  /** Large shard files go through O_DIRECT (until the file system refuses it). */
  #direct: boolean;

  /** `directIo`: see `LocalDriveOptions.directIo`. */
  constructor(fs: DriveFs, directIo: boolean | undefined) {
    this.#fs = fs;
    this.#direct = directIo !== false && process.platform === 'linux' && typeof nativeAddon?.alignOffset === 'function' && fsc.O_DIRECT !== undefined;
  }

  async createFile(
    vol: string,
    path: string,
    size: number,
    stream: AsyncIterable<Uint8Array>,
    opts: { frameBlockSize?: number } = {},
  ): Promise<void> {
    await this.#fs.checkRoot();
    const p = this.#fs.filePath(vol, path);
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
      await this.#fs.mapErr(err, vol);
    }
  }

  /**
   * Writes `stream` with O_DIRECT. A chunk whose memory sits at its file
   * offset's place within a page (`SHARD_PAGE`; the PUT path places its
   * frames so) and holds at least `DIRECT_IN_PLACE_MIN` whole pages goes to
   * the kernel where it lies: one `pwritev` of the staged page its head
   * completes and its whole pages, its tail staged for the next. Anything
   * else is copied into aligned staging and written a stage at a time. The
   * last block is zero-padded, then the file cut to its length. Returns the
   * bytes taken from the stream.
   */
  async #writeDirect(fh: fsp.FileHandle, stream: AsyncIterable<Uint8Array>, check: FrameStreamCheck | undefined): Promise<number> {
    const alignOffset = nativeAddon!.alignOffset!;
    // One page until a chunk needs the staging path, then a pooled stage.
    let stage = alignedBuffer(DIRECT_ALIGN);
    let pooled = false;
    try {
      // Written up to file offset `written` (aligned); `fill` bytes staged since.
      let written = 0;
      let fill = 0;
      for await (const chunk of stream) {
        check?.push(chunk);
        // Bytes that complete the staged page, then the chunk's whole pages, written from the chunk.
        const head = (DIRECT_ALIGN - ((written + fill) % DIRECT_ALIGN)) % DIRECT_ALIGN;
        const pages = Math.floor((chunk.length - head) / DIRECT_ALIGN) * DIRECT_ALIGN;
        if (pages >= DIRECT_IN_PLACE_MIN && alignOffset(chunk.subarray(head), DIRECT_ALIGN) === 0) {
          if (fill >= DIRECT_ALIGN) {
            // Staged whole pages go first; the partial page stays staged.
            const whole = fill - (fill % DIRECT_ALIGN);
            await writeFullyAt(fh, stage, whole, written);
            written += whole;
            stage.copyWithin(0, whole, fill);
            fill -= whole;
          }
          stage.set(chunk.subarray(0, head), fill);
          const staged = fill + head;
          const body = chunk.subarray(head, head + pages);
          await writevFullyAt(fh, staged > 0 ? [stage.subarray(0, staged), body] : [body], written);
          written += staged + pages;
          const tail = chunk.subarray(head + pages);
          stage.set(tail, 0);
          fill = tail.length;
          continue;
        }
        if (!pooled) {
          const big = takeDirectStage();
          big.set(stage.subarray(0, fill));
          stage = big;
          pooled = true;
        }
        // Each chunk is copied before the next is pulled (the producer recycles frame buffers).
        let pos = 0;
        while (pos < chunk.length) {
          const take = Math.min(DIRECT_STAGE - fill, chunk.length - pos);
          stage.set(chunk.subarray(pos, pos + take), fill);
          fill += take;
          pos += take;
          if (fill === DIRECT_STAGE) {
            await writeFullyAt(fh, stage, DIRECT_STAGE, written);
            written += DIRECT_STAGE;
            fill = 0;
          }
        }
      }
      if (fill > 0) {
        // Only the last block can be short: it is zero-padded to the alignment (the file cut back below).
        const len = Math.ceil(fill / DIRECT_ALIGN) * DIRECT_ALIGN;
        stage.fill(0, fill, len);
        await writeFullyAt(fh, stage, len, written);
        written += fill;
      }
      if (written % DIRECT_ALIGN !== 0) await fh.truncate(written);
      return written;
    } finally {
      if (pooled) giveDirectStage(stage);
    }
  }

  /** `path` opened for an O_DIRECT write, or undefined where the file system refuses O_DIRECT (then never tried again here). */
  async #openDirect(path: string): Promise<fsp.FileHandle | undefined> {
    try {
      return await fsp.open(path, fsc.O_WRONLY | fsc.O_CREAT | fsc.O_TRUNC | fsc.O_DIRECT, 0o666);
    } catch (err) {
      if (errno(err) !== 'EINVAL') throw err;
      this.#direct = false;
      this.#fs.log.info({ event: 'drive_direct_io_unsupported', drive: this.#fs.endpoint }, 'the file system refuses O_DIRECT: shard files are written through the page cache');
      return undefined;
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
    const p = this.#fs.filePath(vol, path);
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
      return this.#fs.mapErr(err, vol);
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
    const p = this.#fs.filePath(vol, path);
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
      await this.#fs.mapErr(err, vol);
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
      const p = this.#fs.filePath(vol, `${path === '' ? '' : `${path}/`}${version.dataDir}/part.${part.number}`);
      const dataBytes = shardFileDataSize(part.size, e.blockSize, e.data);
      let st: Stats;
      try {
        st = await fsp.stat(p);
      } catch (err) {
        const code = errno(err);
        if (code === 'ENOENT' || code === 'ENOTDIR') {
          if (!rootChecked) await this.#fs.checkRoot();
          rootChecked = true;
          out.push('missing');
          continue;
        }
        return this.#fs.mapErr(err, vol);
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
        else return this.#fs.mapErr(err, vol);
      }
    }
    this.#fs.online = true;
    return out;
  }
}
