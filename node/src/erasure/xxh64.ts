/**
 * XXH64 (seed 0), written big-endian (xxHash's canonical form) straight into
 * a caller's buffer, and compared in place: the checksum of bitrot frames,
 * `xl.meta` and the engine's record envelopes.
 *
 * Two native implementations give the same bytes, and each wins on its own
 * side of a size (measured on the development machine, GB per CPU-second):
 *
 * | bytes | addon `xxh64Into` | `@node-rs/xxhash` + BigInt |
 * |---|---|---|
 * | 300 (an `xl.meta`) | 1.9 | 0.7 |
 * | 4 KiB | 6.3 | 5.3 |
 * | 8 KiB | 7.1 | 7.2 |
 * | 32 KiB | 7.7 | 8.7 |
 * | 128 KiB | 7.8 | 9.3 |
 *
 * `@node-rs/xxhash` returns a BigInt, which costs an allocation and a
 * conversion per call: that dominates below a few KiB. Its hashing loop is
 * about 15 % faster per byte than the addon's (both are bound by 64-bit
 * multiplies), which wins on large shard blocks. So: the addon below
 * `NATIVE_INTO_MAX` bytes when it is loaded, `@node-rs/xxhash` otherwise.
 *
 * Several inputs at once (`xxh64IntoMany`: the shards of a stripe, the
 * frames of a write) go to the addon in one call whatever their size where
 * it hashes them side by side (`xxh64ManyLanes`, 4 with AVX-512: one input's
 * four lanes fill a vector, four inputs keep the 64-bit multiplier busy;
 * about 60 GB per CPU-second for 512 KiB shard blocks against 9 here).
 */
import { xxh64 } from '@node-rs/xxhash';
import { nativeAddon } from './native.ts';

export const XXH64_SIZE = 8;

/** Inputs shorter than this go to the addon's `xxh64Into` (when loaded); see the table above. */
export const NATIVE_INTO_MAX = 16 * 1024;

const addon = nativeAddon;

function viaBigInt(buf: Uint8Array, out: Uint8Array, offset: number): void {
  new DataView(out.buffer, out.byteOffset, out.byteLength).setBigUint64(offset, xxh64(buf), false);
}

/** XXH64 of `buf` written big-endian into `out[offset .. offset + 8]`. */
export const xxh64Into: (buf: Uint8Array, out: Uint8Array, offset: number) => void =
  addon === null
    ? viaBigInt
    : (buf, out, offset) => {
        if (buf.length < NATIVE_INTO_MAX) addon.xxh64Into(buf, out, offset);
        else viaBigInt(buf, out, offset);
      };

/** Inputs the addon's `xxh64Many` hashes side by side (1 without the addon or the vector path). */
export const XXH64_MANY_LANES = addon?.xxh64ManyLanes ?? 1;

/**
 * XXH64 of every `bufs[i]` at `out[8 i]`: one addon call for the lot when
 * the addon is loaded and hashes several inputs side by side, or the buffers
 * are small (the per-call cost is what matters there); one call each
 * otherwise.
 */
export function xxh64IntoMany(bufs: readonly Uint8Array[], out: Uint8Array): void {
  if (addon !== null && ((XXH64_MANY_LANES > 1 && bufs.length > 1) || bufs.every((b) => b.length < NATIVE_INTO_MAX))) {
    addon.xxh64Many(bufs as Uint8Array[], out);
    return;
  }
  for (let i = 0; i < bufs.length; i++) xxh64Into(bufs[i]!, out, i * XXH64_SIZE);
}

const scratch = new Uint8Array(XXH64_SIZE);

/** True when `hash[offset .. offset + 8]` is the big-endian XXH64 of `buf`. */
export function xxh64Matches(buf: Uint8Array, hash: Uint8Array, offset: number): boolean {
  if (offset < 0 || offset + XXH64_SIZE > hash.length) return false;
  xxh64Into(buf, scratch, 0);
  for (let i = 0; i < XXH64_SIZE; i++) if (scratch[i] !== hash[offset + i]) return false;
  return true;
}
