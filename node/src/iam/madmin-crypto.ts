/**
 * The encrypted admin bodies of `mc admin` (madmin-go's EncryptData /
 * DecryptData): requests that carry secrets (a new user's secret key, an
 * access key and its policy) and some answers (user and access-key
 * listings) are encrypted with the caller's own secret key, so they stay
 * confidential over plain HTTP.
 *
 * Format (a fact of the wire protocol, implemented here from its
 * description): `salt[32] | id[1] | nonce[8] | stream`. The key is
 * Argon2id(secret, salt; 1 pass, 64 MiB, 4 lanes, 32 bytes) for ids 0
 * (AES-256-GCM) and 1 (ChaCha20-Poly1305), or PBKDF2-SHA256(secret, salt,
 * 8192 rounds) for id 2 (AES-256-GCM, madmin's FIPS mode). The stream is
 * sio's DARE-like chunking: 16 KiB plaintext fragments, each sealed with the
 * 12-byte nonce `nonce[8] | sequence number (uint32 LE)` and the additional
 * data `flag | tag0`, where tag0 is the AEAD tag of an empty message under
 * sequence number 0, the sequence numbers of the fragments start at 1, and
 * the flag is 0x80 on the last fragment (possibly empty) and 0x00 before.
 *
 * Argon2id comes from node:crypto (Node 24.7+, OpenSSL's implementation, run
 * on the thread pool): no dependency, and the 64 MiB pass stays off the
 * event loop.
 */
import { argon2, createCipheriv, createDecipheriv, pbkdf2, randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { SvcError } from '../util/errors.ts';

const SALT = 32;
const NONCE = 8;
const HEADER = SALT + 1 + NONCE;
const BUF = 1 << 14;
const TAG = 16;

export const ARGON2ID_AES_GCM = 0x00;
export const ARGON2ID_CHACHA20_POLY1305 = 0x01;
export const PBKDF2_AES_GCM = 0x02;

export type Aead = 'aes-128-gcm' | 'aes-256-gcm' | 'chacha20-poly1305';

const argon2Async = promisify(argon2);
const pbkdf2Async = promisify(pbkdf2);

async function deriveKey(password: string, salt: Buffer, id: number): Promise<{ key: Buffer; aead: Aead }> {
  switch (id) {
    case ARGON2ID_AES_GCM:
    case ARGON2ID_CHACHA20_POLY1305: {
      const key = await argon2Async('argon2id', { message: Buffer.from(password, 'utf8'), nonce: salt, parallelism: 4, tagLength: 32, memory: 64 * 1024, passes: 1 });
      return { key: Buffer.from(key), aead: id === ARGON2ID_AES_GCM ? 'aes-256-gcm' : 'chacha20-poly1305' };
    }
    case PBKDF2_AES_GCM:
      return { key: await pbkdf2Async(Buffer.from(password, 'utf8'), salt, 8192, 32, 'sha256'), aead: 'aes-256-gcm' };
    default:
      throw new SvcError('XSvcAdminConfigBadJson', `unknown encryption algorithm id ${id}`);
  }
}

function nonceOf(base: Buffer, seq: number): Buffer {
  const n = Buffer.alloc(12);
  base.copy(n, 0, 0, NONCE);
  n.writeUInt32LE(seq, NONCE);
  return n;
}

function cipherOf(aead: Aead, key: Buffer, nonce: Buffer) {
  return aead === 'chacha20-poly1305' ? createCipheriv(aead, key, nonce, { authTagLength: TAG }) : createCipheriv(aead, key, nonce);
}

function decipherOf(aead: Aead, key: Buffer, nonce: Buffer) {
  return aead === 'chacha20-poly1305' ? createDecipheriv(aead, key, nonce, { authTagLength: TAG }) : createDecipheriv(aead, key, nonce);
}

function seal(aead: Aead, key: Buffer, nonce: Buffer, plain: Buffer, ad: Buffer): Buffer {
  const c = cipherOf(aead, key, nonce);
  c.setAAD(ad, { plaintextLength: plain.length });
  return Buffer.concat([c.update(plain), c.final(), c.getAuthTag()]);
}

function open(aead: Aead, key: Buffer, nonce: Buffer, sealed: Buffer, ad: Buffer): Buffer {
  if (sealed.length < TAG) throw new SvcError('XSvcAdminConfigBadJson', 'the encrypted body is truncated');
  const d = decipherOf(aead, key, nonce);
  d.setAAD(ad, { plaintextLength: sealed.length - TAG });
  d.setAuthTag(sealed.subarray(sealed.length - TAG));
  try {
    return Buffer.concat([d.update(sealed.subarray(0, sealed.length - TAG)), d.final()]);
  } catch {
    throw new SvcError('XSvcAdminConfigBadJson', 'the encrypted body does not decrypt with the signing secret key (wrong key, or altered on the way)');
  }
}

/** The additional data of the fragments: flag byte, then the tag of the empty message (with the caller's data) under sequence 0. */
function additionalData(aead: Aead, key: Buffer, base: Buffer, userData: Buffer): Buffer {
  const tag0 = seal(aead, key, nonceOf(base, 0), Buffer.alloc(0), userData);
  return Buffer.concat([Buffer.of(0), tag0]);
}

/** sio's stream encryption (exported for its published test vectors). */
export function sioEncrypt(aead: Aead, key: Buffer, nonce8: Buffer, plain: Buffer, bufSize = BUF, userData = Buffer.alloc(0)): Buffer {
  const ad = additionalData(aead, key, nonce8, userData);
  const out: Buffer[] = [];
  let seq = 1;
  let off = 0;
  // full fragments while more than one fragment's worth remains; the rest (maybe a full one, maybe empty) is final
  while (plain.length - off > bufSize) {
    out.push(seal(aead, key, nonceOf(nonce8, seq++), plain.subarray(off, off + bufSize), ad));
    off += bufSize;
  }
  ad[0] = 0x80;
  out.push(seal(aead, key, nonceOf(nonce8, seq), plain.subarray(off), ad));
  return Buffer.concat(out);
}

/** sio's stream decryption. */
export function sioDecrypt(aead: Aead, key: Buffer, nonce8: Buffer, body: Buffer, bufSize = BUF, userData = Buffer.alloc(0)): Buffer {
  const ad = additionalData(aead, key, nonce8, userData);
  const out: Buffer[] = [];
  let seq = 1;
  let off = 0;
  while (body.length - off > bufSize + TAG) {
    out.push(open(aead, key, nonceOf(nonce8, seq++), body.subarray(off, off + bufSize + TAG), ad));
    off += bufSize + TAG;
  }
  ad[0] = 0x80;
  out.push(open(aead, key, nonceOf(nonce8, seq), body.subarray(off), ad));
  return Buffer.concat(out);
}

/** madmin's EncryptData with `password` (the caller's secret key). `id` picks the AEAD (default AES-256-GCM). */
export async function encryptData(password: string, data: Uint8Array, id: number = ARGON2ID_AES_GCM): Promise<Buffer> {
  const salt = randomBytes(SALT);
  const base = randomBytes(NONCE);
  const { key, aead } = await deriveKey(password, salt, id);
  const plain = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return Buffer.concat([salt, Buffer.of(id), base, sioEncrypt(aead, key, base, plain)]);
}

/** madmin's DecryptData; `XSvcAdminConfigBadJson` when the body is malformed or does not open with `password`. */
export async function decryptData(password: string, data: Uint8Array): Promise<Buffer> {
  const buf = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  if (buf.length < HEADER + TAG) throw new SvcError('XSvcAdminConfigBadJson', 'the request body is not an encrypted admin body');
  const id = buf[SALT]!;
  const { key, aead } = await deriveKey(password, Buffer.from(buf.subarray(0, SALT)), id);
  return sioDecrypt(aead, key, Buffer.from(buf.subarray(SALT + 1, HEADER)), buf.subarray(HEADER));
}
