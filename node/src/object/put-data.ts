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

export function putDataFromBuffer(data: Uint8Array, checksum?: ObjectChecksum): PutData {
  async function* one(): AsyncGenerator<Uint8Array> {
    if (data.length > 0) yield data;
  }
  return putDataFromStream(one(), data.length, checksum);
}
