/**
 * `PutData` built from a byte source, computing the MD5 as it streams. Used
 * for internal writes (bucket records) and by callers that hold no
 * edge-verified body (tests, tools, data movement).
 */
import { createHash } from 'node:crypto';
import type { ObjectChecksum, PutData } from './types.ts';

export function putDataFromStream(
  source: AsyncIterable<Uint8Array>,
  size = -1,
  checksum?: ObjectChecksum,
): PutData {
  const md5 = createHash('md5');
  let digest: string | undefined;
  async function* stream(): AsyncGenerator<Uint8Array> {
    for await (const chunk of source) {
      md5.update(chunk);
      yield chunk;
    }
    digest = md5.digest('hex');
  }
  return {
    stream: stream(),
    size,
    md5Hex: () => {
      if (digest === undefined) throw new Error('md5Hex() before the body was consumed');
      return digest;
    },
    checksum: () => checksum,
  };
}

/** Slices a held buffer is fed in (zero-copy views), like a body arriving off a socket. */
const SLICE = 1 << 20;

export function putDataFromBuffer(data: Uint8Array, checksum?: ObjectChecksum): PutData {
  // In slices, not as one chunk: hashing the whole buffer up front would
  // stall the write pipeline (nothing reaches the drives until the MD5 of
  // everything is done); slices interleave hashing with shard writes.
  async function* slices(): AsyncGenerator<Uint8Array> {
    for (let off = 0; off < data.length; off += SLICE) yield data.subarray(off, Math.min(off + SLICE, data.length));
  }
  return putDataFromStream(slices(), data.length, checksum);
}
