/**
 * Request ids (`x-amz-request-id`): 16 upper-case hex digits from the
 * system's CSPRNG, as S3 and MinIO clients expect. Drawn from a 4 KiB
 * buffer refilled every 512 ids: a `randomBytes(8)` per request cost about
 * ten times as much CPU (one OpenSSL call each), on every request.
 */
import { randomFillSync } from 'node:crypto';

const ID_BYTES = 8;
const pool = Buffer.allocUnsafe(4096);
let at = pool.length;

export function newRequestId(): string {
  if (at + ID_BYTES > pool.length) {
    randomFillSync(pool);
    at = 0;
  }
  const id = pool.toString('hex', at, at + ID_BYTES).toUpperCase();
  at += ID_BYTES;
  return id;
}
