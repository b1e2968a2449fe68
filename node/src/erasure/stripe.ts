/**
 * Cutting a data block into K equal shards (and back). Pure arithmetic and
 * copying; the codec does the parity.
 */
import { SvcError } from '../util/errors.ts';
import { BITROT_HASH_SIZE, bitrotHashFrames } from './bitrot.ts';
import type { ErasureCodec } from './codec.ts';

/** Objects are encoded in blocks of 1 MiB (spec: encode block). */
export const BLOCK_SIZE = 1024 * 1024;

/** Bytes per shard for a block of `blockLen` bytes over K data shards. */
export function shardSize(blockLen: number, k: number): number {
  return Math.ceil(blockLen / k);
}

/**
 * Bytes of shard data one drive holds for an object of `size` bytes encoded
 * in `blockSize` blocks: full blocks give `ceil(blockSize / K)` each, the
 * final short block `ceil(rest / K)`.
 */
export function shardFileDataSize(size: number, blockSize: number, k: number): number {
  const full = Math.floor(size / blockSize);
  return full * shardSize(blockSize, k) + shardSize(size - full * blockSize, k);
}

/**
 * Distance between consecutive shards in the one buffer `encodeStripe`
 * allocates: rounded up to 64 bytes, and moved off multiples of 4 KiB, where
 * equal low address bits make the N streams collide in the same cache sets
 * (PERFORMANCE.md: aligned 128 KiB strides lost up to 45 %).
 */
export function shardStride(size: number): number {
  let stride = (size + 63) & ~63;
  if (stride % 4096 === 0) stride += 64;
  return stride;
}

/** Bytes `encodeStripe` needs for all N shards of a block of `blockLen` bytes. */
export function stripeBufferSize(codec: ErasureCodec, blockLen: number): number {
  return shardStride(shardSize(blockLen, codec.dataShards)) * (codec.dataShards + codec.parityShards);
}

/** The caller's buffer when it is large enough, a fresh one when none is given. */
function stripeBuffer(fn: string, buffer: Uint8Array | undefined, need: number): Uint8Array {
  if (buffer === undefined) return Buffer.allocUnsafe(need);
  if (buffer.length < need) throw new SvcError('InternalError', `${fn}: buffer of ${buffer.length} bytes, need ${need}`);
  return buffer;
}

/**
 * Splits `block` into K data shards of `shardSize(block.length, K)` bytes
 * (the last zero-padded) and computes the M parity shards. All N shards are
 * views into a single buffer: `buffer` when given (at least
 * `stripeBufferSize` bytes; the caller owns its reuse), a fresh one otherwise.
 *
 * Reusing a buffer matters: a fresh 1.4 MiB allocation is page-faulted in on
 * first write, which costs more CPU than the 12+4 encode itself (see the
 * codec benchmark); a writer that double-buffers per stream avoids it.
 */
export function encodeStripe(codec: ErasureCodec, block: Uint8Array, buffer?: Uint8Array): Uint8Array[] {
  const k = codec.dataShards;
  const n = k + codec.parityShards;
  const size = shardSize(block.length, k);
  const stride = shardStride(size);
  const buf = stripeBuffer('encodeStripe', buffer, stride * n);
  const shards: Uint8Array[] = new Array(n);
  for (let i = 0; i < n; i++) shards[i] = buf.subarray(i * stride, i * stride + size);
  for (let i = 0; i < k; i++) {
    const start = Math.min(i * size, block.length);
    const end = Math.min(start + size, block.length);
    const shard = shards[i]!;
    shard.set(block.subarray(start, end));
    if (end - start < size) shard.fill(0, end - start);
  }
  codec.encode(shards);
  return shards;
}

/** Distance between consecutive frames in `encodeFramedStripe`'s buffer. */
export function frameStride(size: number): number {
  return shardStride(BITROT_HASH_SIZE + size);
}

/** Bytes `encodeFramedStripe` needs for a block of `blockLen` bytes. */
export function framedStripeBufferSize(codec: ErasureCodec, blockLen: number): number {
  return frameStride(shardSize(blockLen, codec.dataShards)) * (codec.dataShards + codec.parityShards);
}

export interface FramedStripe {
  /** Shard i's bitrot frame, `[XXH64 (8 B)][shard]`, ready to append to its shard file. */
  readonly frames: Uint8Array[];
  /** Shard i alone (a view into `frames[i]` after the hash). */
  readonly shards: Uint8Array[];
}

/**
 * `encodeStripe` plus bitrot framing with no extra copy: each shard is
 * encoded in place right after room for its hash, so `frames[i]` is exactly
 * the bytes shard file i gets for this block. One buffer holds all N frames:
 * `buffer` when given (at least `framedStripeBufferSize` bytes, or what
 * `layout` needs; the caller must not reuse it before the frames are
 * written), a fresh one otherwise. `layout`: where the frames go (default:
 * offset 0, `frameStride` of this block's shard size).
 */
export function encodeFramedStripe(codec: ErasureCodec, block: Uint8Array, buffer?: Uint8Array, layout?: FrameLayout): FramedStripe {
  const k = codec.dataShards;
  const n = k + codec.parityShards;
  const size = shardSize(block.length, k);
  const stride = layout?.stride ?? frameStride(size);
  const offset = layout?.offset ?? 0;
  if (offset < 0 || stride < BITROT_HASH_SIZE + size) throw new SvcError('InternalError', `encodeFramedStripe: bad layout (offset ${offset}, stride ${stride})`);
  const buf = stripeBuffer('encodeFramedStripe', buffer, offset + (n - 1) * stride + BITROT_HASH_SIZE + size);
  const stripe = framedViews(offset === 0 ? buf : buf.subarray(offset), n, stride, size);
  for (let i = 0; i < k; i++) {
    const start = Math.min(i * size, block.length);
    const end = Math.min(start + size, block.length);
    const shard = stripe.shards[i]!;
    shard.set(block.subarray(start, end));
    if (end - start < size) shard.fill(0, end - start);
  }
  return encodeFramed(codec, stripe);
}

/** The N frames of `size`-byte shards, `stride` apart in `buf`. */
function framedViews(buf: Uint8Array, n: number, stride: number, size: number): FramedStripe {
  const frames: Uint8Array[] = new Array(n);
  const shards: Uint8Array[] = new Array(n);
  for (let i = 0; i < n; i++) {
    frames[i] = buf.subarray(i * stride, i * stride + BITROT_HASH_SIZE + size);
    shards[i] = frames[i]!.subarray(BITROT_HASH_SIZE);
  }
  return { frames, shards };
}

/** Parity of a stripe whose data shards are in place, then every frame's hash. */
function encodeFramed(codec: ErasureCodec, stripe: FramedStripe): FramedStripe {
  codec.encode(stripe.shards);
  bitrotHashFrames(stripe.shards, stripe.frames);
  return stripe;
}

/**
 * Where the frames of a full block lie in a stripe buffer: frame i at
 * `offset + i × stride`. The default (`encodeFramedStripe`'s) is offset 0
 * and `frameStride`; a writer may choose another, e.g. to place frames at
 * the page offset they will have in their shard files.
 */
export interface FrameLayout {
  offset: number;
  stride: number;
}

function layoutOf(codec: ErasureCodec, buffer: Uint8Array, blockSize: number, layout: FrameLayout | undefined, fn: string): { size: number; offset: number; stride: number } {
  const size = shardSize(blockSize, codec.dataShards);
  const offset = layout?.offset ?? 0;
  const stride = layout?.stride ?? frameStride(size);
  const n = codec.dataShards + codec.parityShards;
  if (offset < 0 || stride < BITROT_HASH_SIZE + size) throw new SvcError('InternalError', `${fn}: bad layout (offset ${offset}, stride ${stride})`);
  stripeBuffer(fn, buffer, offset + (n - 1) * stride + BITROT_HASH_SIZE + size);
  return { size, offset, stride };
}

/**
 * Copies `src` to offset `at` of a block of `blockSize` bytes laid out as the
 * data shards of a framed stripe for a full block (`layout`, by default
 * `encodeFramedStripe`'s): bytes land where the encoder would copy them, so
 * a writer can fill the stripe straight from the arriving pieces (no block
 * buffer, no second copy). `at + src.length` must not pass `blockSize`.
 */
export function fillFramedStripe(codec: ErasureCodec, buffer: Uint8Array, blockSize: number, at: number, src: Uint8Array, layout?: FrameLayout): void {
  if (at < 0 || at + src.length > blockSize) throw new SvcError('InternalError', `fillFramedStripe: ${src.length} bytes at ${at} pass the block of ${blockSize}`);
  const { size, offset, stride } = layoutOf(codec, buffer, blockSize, layout, 'fillFramedStripe');
  let pos = 0;
  while (pos < src.length) {
    const b = at + pos;
    const i = Math.floor(b / size);
    const inShard = b - i * size;
    const take = Math.min(size - inShard, src.length - pos);
    buffer.set(src.subarray(pos, pos + take), offset + i * stride + BITROT_HASH_SIZE + inShard);
    pos += take;
  }
}

/**
 * `encodeFramedStripe` of a block already in `buffer` (`fillFramedStripe`
 * wrote its first `blockLen` bytes of a `blockSize`-byte block's layout).
 * A full block is encoded where it lies; a short (last) block has smaller
 * shards, so its bytes are gathered once and laid out again (its frames at
 * the same places, shorter; without `layout`, `encodeFramedStripe`'s).
 */
export function encodeFilledFramedStripe(codec: ErasureCodec, buffer: Uint8Array, blockSize: number, blockLen: number, layout?: FrameLayout): FramedStripe {
  const k = codec.dataShards;
  const { size, offset, stride } = layoutOf(codec, buffer, blockSize, layout, 'encodeFilledFramedStripe');
  if (blockLen !== blockSize) {
    const block = Buffer.allocUnsafe(blockLen);
    for (let i = 0, b = 0; b < blockLen; i++, b += size) {
      const start = offset + i * stride + BITROT_HASH_SIZE;
      block.set(buffer.subarray(start, start + Math.min(size, blockLen - b)), b);
    }
    return encodeFramedStripe(codec, block, buffer, layout);
  }
  const n = k + codec.parityShards;
  const stripe = framedViews(buffer.subarray(offset), n, stride, size);
  // K shards of ceil(blockSize / K) bytes may hold more than the block: the last ones are zero-padded.
  for (let i = 0; i < k; i++) {
    const have = Math.max(0, Math.min(size, blockSize - i * size));
    if (have < size) stripe.shards[i]!.fill(0, have);
  }
  return encodeFramed(codec, stripe);
}

/**
 * Joins the data shards of one stripe back into its `dataLen` bytes,
 * rebuilding missing data shards (null entries) from any K present ones.
 * Throws `ErasureReadQuorum` when fewer than K shards are present. The input
 * shards are not modified. The result is a view into `buffer` when given (at
 * least `K × shardSize(dataLen, K)` bytes), into a fresh buffer otherwise.
 */
export function decodeStripe(
  codec: ErasureCodec,
  shards: (Uint8Array | null)[],
  dataLen: number,
  buffer?: Uint8Array,
): Uint8Array {
  const k = codec.dataShards;
  const n = k + codec.parityShards;
  if (shards.length !== n) throw new SvcError('InternalError', `decodeStripe: expected ${n} shards, got ${shards.length}`);
  const size = shardSize(dataLen, k);
  if (buffer !== undefined && buffer.length < size * k) {
    throw new SvcError('InternalError', `decodeStripe: buffer of ${buffer.length} bytes, need ${size * k}`);
  }
  const out = buffer ?? Buffer.allocUnsafe(size * k);
  let missingData = false;
  let present = 0;
  for (let i = 0; i < n; i++) {
    const s = shards[i];
    if (s == null) {
      if (i < k) missingData = true;
      continue;
    }
    if (s.length !== size) {
      throw new SvcError('InternalError', `decodeStripe: shard ${i} has ${s.length} bytes, expected ${size}`);
    }
    present++;
  }
  if (present < k) throw new SvcError('ErasureReadQuorum', undefined, { present, needed: k });
  for (let i = 0; i < k; i++) {
    const s = shards[i];
    if (s != null) out.set(s, i * size);
  }
  if (missingData) {
    const empty = new Uint8Array(0);
    const all: Uint8Array[] = new Array(n);
    const flags: boolean[] = new Array(n);
    for (let i = 0; i < n; i++) {
      const s = shards[i];
      flags[i] = s != null;
      // Missing data shards are rebuilt straight into their place in `out`;
      // missing parity is not rebuilt (dataOnly), so it needs no buffer.
      all[i] = s ?? (i < k ? out.subarray(i * size, (i + 1) * size) : empty);
    }
    codec.reconstruct(all, flags, true);
  }
  return out.subarray(0, dataLen);
}
