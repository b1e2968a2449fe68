/**
 * The key hierarchy of server-side encryption. Pure compute over node:crypto.
 *
 *   key-encryption key (a KMS key, or the client's SSE-C key)
 *     └─ seals → object key (32 random bytes per object version, or per
 *                 multipart upload), stored sealed in the version's metadata
 *                   └─ derives → part key (one per part number; a plain PUT is part 1)
 *                                 └─ encrypts the part's package stream
 *
 * Sealing derives a one-off wrapping key from the key-encryption key and a
 * random 32-byte salt (HMAC-SHA256), then AES-256-GCM-encrypts the object key
 * under it with the binding data (encryption type, key id, bucket and object
 * name) as additional authenticated data: a sealed key copied into another
 * object's metadata, or unsealed with another key, fails authentication.
 *
 * Sealed form (base64): `[1][salt 32][sealed key 32][tag 16]`.
 */
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import { SvcError } from '../util/errors.ts';

export const KEY_BYTES = 32;
const SEAL_VERSION = 1;
const SALT = 32;
const TAG = 16;
const ZERO_NONCE = Buffer.alloc(12);

function wrappingKey(kek: Uint8Array, salt: Uint8Array): Buffer {
  return createHmac('sha256', kek).update('svc-sse-seal-v1\0').update(salt).digest();
}

/** A fresh random object key. */
export function newObjectKey(): Buffer {
  return randomBytes(KEY_BYTES);
}

/** Seals `objectKey` under `kek`, bound to `binding`. */
export function sealKey(kek: Uint8Array, objectKey: Uint8Array, binding: string): string {
  if (kek.length !== KEY_BYTES || objectKey.length !== KEY_BYTES) throw new SvcError('InternalError', 'sealing needs 32-byte keys');
  const salt = randomBytes(SALT);
  // The wrapping key is used once (fresh salt), so a fixed nonce is safe.
  const c = createCipheriv('aes-256-gcm', wrappingKey(kek, salt), ZERO_NONCE);
  c.setAAD(Buffer.from(binding, 'utf8'));
  const body = Buffer.concat([c.update(objectKey), c.final()]);
  return Buffer.concat([Buffer.of(SEAL_VERSION), salt, body, c.getAuthTag()]).toString('base64');
}

/**
 * Opens a sealed object key; undefined when `kek` or `binding` is not the
 * one it was sealed with (or the sealed form was altered).
 */
export function unsealKey(kek: Uint8Array, sealed: string, binding: string): Buffer | undefined {
  const raw = Buffer.from(sealed, 'base64');
  if (raw.length !== 1 + SALT + KEY_BYTES + TAG || raw[0] !== SEAL_VERSION || kek.length !== KEY_BYTES) return undefined;
  const salt = raw.subarray(1, 1 + SALT);
  const d = createDecipheriv('aes-256-gcm', wrappingKey(kek, salt), ZERO_NONCE);
  d.setAAD(Buffer.from(binding, 'utf8'));
  d.setAuthTag(raw.subarray(raw.length - TAG));
  const key = d.update(raw.subarray(1 + SALT, 1 + SALT + KEY_BYTES));
  try {
    d.final();
  } catch {
    return undefined;
  }
  return key;
}

/** The key of part `partNumber` (1-based) of an object. */
export function partKey(objectKey: Uint8Array, partNumber: number): Buffer {
  const n = Buffer.alloc(4);
  n.writeUInt32BE(partNumber);
  return createHmac('sha256', objectKey).update('svc-sse-part-v1\0').update(n).digest();
}

/**
 * The ETag shown for an SSE-C or SSE-KMS object (or part): a keyed digest of
 * the plaintext MD5, 32 hex digits like an MD5 but not the plaintext's MD5
 * (S3 does not reveal it for these), stable for the version.
 */
export function keyedEtag(objectKey: Uint8Array, md5Hex: string): string {
  return createHmac('sha256', objectKey).update('svc-sse-etag-v1\0').update(md5Hex).digest('hex').slice(0, 32);
}
