/**
 * Bitrot protection of shard files.
 *
 * A shard file is the concatenation, per erasure block, of
 * `[hash (BITROT_HASH_SIZE bytes)][shard block]`; every shard block but the
 * last is `shardBlockSize` bytes, so block b starts at file offset
 * `b × (BITROT_HASH_SIZE + shardBlockSize)` and a ranged read seeks straight
 * to it.
 *
 * The hash is XXH64 with seed 0, stored big-endian (xxHash's canonical
 * form). Bitrot detection needs no keyed or cryptographic hash; XXH64 runs at
 * memory speed and is the same bytes whether the native addon computes it
 * or `@node-rs/xxhash` does, so the format does not depend on the addon.
 */
import { Xxh64 } from '@node-rs/xxhash';
import { SvcError } from '../util/errors.ts';
import { XXH64_SIZE, xxh64Into, xxh64IntoMany, xxh64Matches } from './xxh64.ts';

export const BITROT_HASH_SIZE = XXH64_SIZE;
export const BITROT_ALGORITHM = 'xxh64';

/**
 * XXH64 of `block` written into `out` at `offset` (8 bytes, big-endian):
 * the addon for small blocks, `@node-rs/xxhash` for large ones (measured;
 * see `xxh64.ts`).
 */
export const bitrotHashInto: (block: Uint8Array, out: Uint8Array, offset: number) => void = xxh64Into;

/** The bitrot hashes of all shards of a stripe: hash i at bytes `8 i .. 8 i + 8`. */
export function bitrotHashShards(shards: Uint8Array[], out = new Uint8Array(shards.length * BITROT_HASH_SIZE)): Uint8Array {
  xxh64IntoMany(shards, out);
  return out;
}

/** Scratch for hashes computed together, copied to their frames after. */
let manyScratch = new Uint8Array(16 * BITROT_HASH_SIZE);
function scratchFor(n: number): Uint8Array {
  if (manyScratch.length < n * BITROT_HASH_SIZE) manyScratch = new Uint8Array(n * BITROT_HASH_SIZE);
  return manyScratch;
}

/** Each `frames[i]`'s hash (its first BITROT_HASH_SIZE bytes) from `shards[i]`, all in one call. */
export function bitrotHashFrames(shards: readonly Uint8Array[], frames: readonly Uint8Array[]): void {
  const out = scratchFor(shards.length);
  xxh64IntoMany(shards, out);
  for (let i = 0; i < shards.length; i++) frames[i]!.set(out.subarray(i * BITROT_HASH_SIZE, (i + 1) * BITROT_HASH_SIZE), 0);
}

/**
 * Index of the first of `count` whole frames at the start of `buf`
 * (`BITROT_HASH_SIZE + blockSize` bytes each) whose hash does not match its
 * block; -1 when all match. One call hashes them all.
 */
export function bitrotVerifyFrames(buf: Uint8Array, blockSize: number, count: number): number {
  const frame = BITROT_HASH_SIZE + blockSize;
  const blocks: Uint8Array[] = new Array(count);
  for (let i = 0; i < count; i++) blocks[i] = buf.subarray(i * frame + BITROT_HASH_SIZE, (i + 1) * frame);
  const out = scratchFor(count);
  xxh64IntoMany(blocks, out);
  for (let i = 0; i < count; i++) {
    for (let b = 0; b < BITROT_HASH_SIZE; b++) if (out[i * BITROT_HASH_SIZE + b] !== buf[i * frame + b]) return i;
  }
  return -1;
}

/** The bitrot hash of one shard block. */
export function bitrotHash(block: Uint8Array): Uint8Array {
  const out = new Uint8Array(BITROT_HASH_SIZE);
  bitrotHashInto(block, out, 0);
  return out;
}

/** True when `hash` (BITROT_HASH_SIZE bytes at `offset`) matches `block`. */
export function bitrotVerify(block: Uint8Array, hash: Uint8Array, offset = 0): boolean {
  return xxh64Matches(block, hash, offset);
}

/** Size of a framed shard file holding `shardFileBytes` of shard data. */
export function frameShardFileSize(shardFileBytes: number, shardBlockSize: number): number {
  if (shardFileBytes === 0) return 0;
  return Math.ceil(shardFileBytes / shardBlockSize) * BITROT_HASH_SIZE + shardFileBytes;
}

/** File offset of the frame (hash first) of shard block `blockIndex`. */
export function frameOffset(blockIndex: number, shardBlockSize: number): number {
  return blockIndex * (BITROT_HASH_SIZE + shardBlockSize);
}

/**
 * The byte range of the framed file that holds shard blocks
 * `firstBlock..lastBlock` (inclusive), hashes included; the last block of the
 * file may be short, which `shardFileBytes` (unframed data size) accounts for.
 */
export function frameRange(
  firstBlock: number,
  lastBlock: number,
  shardBlockSize: number,
  shardFileBytes: number,
): { offset: number; length: number } {
  const offset = frameOffset(firstBlock, shardBlockSize);
  const end = Math.min(frameOffset(lastBlock + 1, shardBlockSize), frameShardFileSize(shardFileBytes, shardBlockSize));
  if (firstBlock < 0 || lastBlock < firstBlock || end <= offset) {
    throw new SvcError('InternalError', `frameRange: blocks ${firstBlock}..${lastBlock} outside the shard file`);
  }
  return { offset, length: end - offset };
}

/**
 * Verifies a framed shard stream as it arrives, in chunks of any size, and
 * hands out each shard block once its hash checked. Constructed for the
 * stretch of the file starting at a frame boundary and holding `dataBytes`
 * bytes of shard data (all blocks full but possibly the last).
 *
 * A mismatch throws `FileCorrupt` with the block index: the caller counts the
 * shard as missing for that read and queues a heal.
 */
export class BitrotVerifier {
  readonly #blockSize: number;
  #remaining: number;
  #block = 0;
  /**
   * Assembles a frame that spans chunks; allocated only then, at that
   * frame's size (a small object's reads never pay for a full block).
   */
  #pending: Uint8Array | undefined;
  #fill = 0;

  constructor(shardBlockSize: number, dataBytes: number, firstBlock = 0) {
    if (shardBlockSize <= 0) throw new SvcError('InternalError', 'BitrotVerifier: shard block size must be positive');
    this.#blockSize = shardBlockSize;
    this.#remaining = dataBytes;
    this.#block = firstBlock;
  }

  /** Size of the frame being assembled (hash + block), 0 once all data arrived. */
  #frameLen(): number {
    return this.#remaining === 0 ? 0 : BITROT_HASH_SIZE + Math.min(this.#blockSize, this.#remaining);
  }

  /**
   * Consumes `chunk`, returning the shard blocks it completed, verified. The
   * returned arrays are fresh when the block spanned chunks, otherwise views
   * into `chunk`.
   */
  push(chunk: Uint8Array): Uint8Array[] {
    const done: Uint8Array[] = [];
    let pos = 0;
    while (pos < chunk.length) {
      const frameLen = this.#frameLen();
      if (frameLen === 0) {
        throw new SvcError('FileCorrupt', 'shard file is longer than its metadata says', { block: this.#block });
      }
      if (this.#fill === 0 && chunk.length - pos >= frameLen) {
        done.push(this.#check(chunk.subarray(pos, pos + frameLen)));
        pos += frameLen;
        continue;
      }
      const take = Math.min(frameLen - this.#fill, chunk.length - pos);
      if (this.#pending === undefined || this.#pending.length < frameLen) this.#pending = new Uint8Array(frameLen);
      this.#pending.set(chunk.subarray(pos, pos + take), this.#fill);
      this.#fill += take;
      pos += take;
      if (this.#fill === frameLen) {
        this.#fill = 0;
        done.push(this.#check(this.#pending.slice(0, frameLen)));
      }
    }
    return done;
  }

  /** Throws `FileCorrupt` when the stream ended before all expected data arrived. */
  end(): void {
    if (this.#remaining !== 0) {
      throw new SvcError('FileCorrupt', 'shard file is shorter than its metadata says', {
        block: this.#block,
        missingDataBytes: this.#remaining,
      });
    }
  }

  #check(frame: Uint8Array): Uint8Array {
    const block = frame.subarray(BITROT_HASH_SIZE);
    if (!bitrotVerify(block, frame, 0)) {
      throw new SvcError('FileCorrupt', undefined, { block: this.#block });
    }
    this.#remaining -= block.length;
    this.#block++;
    return block;
  }
}

/**
 * Async form of `BitrotVerifier`: yields verified shard blocks of a framed
 * stream (e.g. a file read stream), throwing `FileCorrupt` on a mismatch, a
 * short or an over-long stream.
 */
export async function* verifyShardStream(
  source: AsyncIterable<Uint8Array>,
  shardBlockSize: number,
  dataBytes: number,
  firstBlock = 0,
): AsyncGenerator<Uint8Array> {
  const v = new BitrotVerifier(shardBlockSize, dataBytes, firstBlock);
  for await (const chunk of source) yield* v.push(chunk);
  v.end();
}

/**
 * Checks the frames of a framed shard stream while it is written, in chunks
 * of any size (frame-sized from the erasure layer, network-sized from an
 * RPC upload), without copying: whole frames inside a chunk are hashed in
 * one call, a frame split across chunks is hashed incrementally, so each
 * chunk is done with before the next arrives. The total size is unknown up
 * front: every frame but the last must be full. A full frame that does not
 * match throws `FileCorrupt` at once; `finish()` checks the last one.
 */
export class FrameStreamCheck {
  readonly blockSize: number;
  /** Shard data bytes in frames checked so far. */
  dataBytes = 0;
  /** Hash bytes of the current frame, gathered across chunks. */
  readonly #hash = new Uint8Array(BITROT_HASH_SIZE);
  #hashLen = 0;
  /** Data bytes of the current frame seen so far. */
  #dataLen = 0;
  #hasher: Xxh64 | undefined;
  /** File offset of the current frame (for errors). */
  #frameStart = 0;
  #pos = 0;

  constructor(blockSize: number) {
    if (!(blockSize > 0)) throw new SvcError('InternalError', 'FrameStreamCheck: block size must be positive');
    this.blockSize = blockSize;
  }

  push(chunk: Uint8Array): void {
    const frame = BITROT_HASH_SIZE + this.blockSize;
    let off = 0;
    while (off < chunk.length) {
      if (this.#hashLen === 0 && chunk.length - off >= frame) {
        // Whole frames inside this chunk: hashed together in one call, no state.
        const count = Math.floor((chunk.length - off) / frame);
        const bad = bitrotVerifyFrames(chunk.subarray(off, off + count * frame), this.blockSize, count);
        if (bad >= 0) {
          this.#frameStart = this.#pos + bad * frame;
          this.#corrupt();
        }
        this.dataBytes += count * this.blockSize;
        off += count * frame;
        this.#pos += count * frame;
        this.#frameStart = this.#pos;
        continue;
      }
      if (this.#hashLen < BITROT_HASH_SIZE) {
        const take = Math.min(BITROT_HASH_SIZE - this.#hashLen, chunk.length - off);
        this.#hash.set(chunk.subarray(off, off + take), this.#hashLen);
        this.#hashLen += take;
        off += take;
        this.#pos += take;
        continue;
      }
      const take = Math.min(this.blockSize - this.#dataLen, chunk.length - off);
      this.#hasher ??= new Xxh64();
      this.#hasher.update(chunk.subarray(off, off + take));
      this.#dataLen += take;
      off += take;
      this.#pos += take;
      if (this.#dataLen === this.blockSize) this.#endFrame();
    }
  }

  /** End of the stream: checks the last (short) frame. Throws `FileCorrupt` on a mismatch or a torn frame. */
  finish(): void {
    if (this.#hashLen === 0) return;
    if (this.#dataLen === 0) {
      throw new SvcError('FileCorrupt', 'shard stream ends inside a frame header', { offset: this.#frameStart });
    }
    this.#endFrame();
  }

  #endFrame(): void {
    const h = this.#hasher!.digest();
    const want = new DataView(this.#hash.buffer, this.#hash.byteOffset, BITROT_HASH_SIZE).getBigUint64(0, false);
    if (h !== want) this.#corrupt();
    this.dataBytes += this.#dataLen;
    this.#hasher = undefined;
    this.#hashLen = 0;
    this.#dataLen = 0;
    this.#frameStart = this.#pos;
  }

  #corrupt(): never {
    throw new SvcError('FileCorrupt', 'shard frame failed its bitrot check while written', { offset: this.#frameStart });
  }
}
