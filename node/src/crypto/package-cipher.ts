/**
 * The authenticated streaming cipher of server-side encryption: a stream is
 * cut into 64 KiB packages, each sealed on its own with AES-256-GCM, so a
 * ranged read decrypts (and authenticates) only the packages it touches.
 * The idea follows MinIO's DARE format (fixed-size packages, a per-stream
 * random nonce, the package sequence number folded into each GCM nonce, a
 * final flag against truncation); the byte layout is svc's own.
 *
 * One package, `PACKAGE_OVERHEAD` = 32 bytes larger than its plaintext:
 *
 * | offset | size | content |
 * |--------|------|---------|
 * | 0      | 1    | format version, 1 |
 * | 1      | 1    | flags: 0x80 = the stream's final package |
 * | 2      | 2    | reserved, 0 |
 * | 4      | 12   | the stream's random nonce (the same in every package) |
 * | 16     | n    | ciphertext of n ≤ 64 KiB plaintext bytes |
 * | 16+n   | 16   | GCM tag |
 *
 * The GCM nonce of package `seq` is the stream nonce with its last four
 * bytes XORed with `seq` (big-endian); the 16-byte header is the additional
 * authenticated data. So a package moved to another position, to another
 * stream, or a stream cut short (no final package where the size says the
 * stream ends) fails authentication. Every stream holds at least one package
 * (an empty plaintext is one empty final package), so the ciphertext size
 * alone gives the plaintext size (`decryptedSize`), and a plaintext offset
 * gives the package and its ciphertext offset (`packageRange`).
 *
 * The key must be used for one stream only in practice (callers derive a
 * fresh key per object part); the random stream nonce additionally keeps
 * two streams under one key apart (a re-uploaded multipart part).
 *
 * Pure compute over node:crypto; no I/O.
 */
import { createCipheriv, createDecipheriv, createSecretKey, type KeyObject, randomBytes } from 'node:crypto';
import { type NativeAddon, nativeAddon } from '../erasure/native.ts';
import { SvcError } from '../util/errors.ts';

/** Plaintext bytes per package. */
export const PACKAGE_SIZE = 64 * 1024;
const HEADER = 16;
const TAG = 16;
/** Ciphertext bytes a package adds to its plaintext (header + tag). */
export const PACKAGE_OVERHEAD = HEADER + TAG;
/** Ciphertext size of a full package. */
export const FULL_PACKAGE = PACKAGE_SIZE + PACKAGE_OVERHEAD;
const VERSION = 1;
const FINAL = 0x80;
const KEY_BYTES = 32;

/** Ciphertext size of a stream of `plain` bytes. */
export function encryptedSize(plain: number): number {
  if (!Number.isSafeInteger(plain) || plain < 0) throw new SvcError('InternalError', `invalid plaintext size ${plain}`);
  return plain + PACKAGE_OVERHEAD * packageCount(plain);
}

/** Plaintext size of a stream of `cipher` ciphertext bytes; `FileCorrupt` when no stream has that size. */
export function decryptedSize(cipher: number): number {
  const packages = Math.ceil(cipher / FULL_PACKAGE);
  const plain = cipher - packages * PACKAGE_OVERHEAD;
  if (!Number.isSafeInteger(cipher) || cipher < PACKAGE_OVERHEAD || plain < 0 || encryptedSize(plain) !== cipher) {
    throw new SvcError('FileCorrupt', `${cipher} bytes is not the size of an encrypted stream`);
  }
  return plain;
}

/** Packages of a stream of `plain` bytes. */
function packageCount(plain: number): number {
  return Math.max(1, Math.ceil(plain / PACKAGE_SIZE));
}

/**
 * The packages holding plaintext bytes [start, end] (inclusive) of a stream
 * of `plain` bytes, and the ciphertext span to read for them.
 */
export function packageRange(start: number, end: number, plain: number): { first: number; last: number; offset: number; length: number } {
  if (plain === 0) return { first: 0, last: 0, offset: 0, length: PACKAGE_OVERHEAD };
  if (start < 0 || end < start || end >= plain) throw new SvcError('InternalError', `range ${start}-${end} outside ${plain} bytes`);
  const first = Math.floor(start / PACKAGE_SIZE);
  const last = Math.floor(end / PACKAGE_SIZE);
  const offset = first * FULL_PACKAGE;
  const stop = Math.min((last + 1) * FULL_PACKAGE, encryptedSize(plain));
  return { first, last, offset, length: stop - offset };
}

/**
 * Who seals and opens packages: the native addon (one AES-GCM context per
 * run of packages, key schedule set once, in place: `native/gcm.c`), or
 * node:crypto (a cipher object per package). Both call the same OpenSSL (the
 * one node carries), whose CPU dispatch picks AES-NI/VAES or portable code,
 * so they write the same bytes; the tests hold them to it, byte for byte.
 * Measured (`npm run bench sse`, same run): the native kernel opens about
 * 2.5× and seals about 1.4× the bytes per CPU-second of node:crypto, whose
 * per-package cipher object costs as much as the AES work at 64 KiB.
 */
export type CipherKernel = 'native' | 'node';

/**
 * Packages sealed or opened per native call, and per output chunk (1 MiB of
 * plaintext): bounds the synchronous work one step of a stream does, however
 * large the chunks its source hands over.
 */
const MAX_RUN = 16;

/** The native kernel, when the addon has it and it passes a load-time check against node:crypto. */
const nativeGcm = nativeAddon?.gcm === true && nativeSelfTest(nativeAddon) ? nativeAddon : null;

/** The kernel used by default. */
export const cipherKernel: CipherKernel = nativeGcm ? 'native' : 'node';

interface StreamKey {
  raw: Uint8Array;
  /** node:crypto's prepared key (the AES key set up once per stream, not per package). */
  object: KeyObject;
}

function streamKey(key: Uint8Array): StreamKey {
  if (key.length !== KEY_BYTES) throw new SvcError('InternalError', 'a package cipher key is 32 bytes');
  return { raw: key, object: createSecretKey(key) };
}

function gcmNonce(streamNonce: Uint8Array, seq: number): Buffer {
  const n = Buffer.from(streamNonce);
  n.writeUInt32BE((n.readUInt32BE(8) ^ seq) >>> 0, 8);
  return n;
}

function sealPackage(key: KeyObject, streamNonce: Uint8Array, seq: number, final: boolean, plain: Uint8Array, out: Buffer, at: number): number {
  const header = out.subarray(at, at + HEADER);
  header[0] = VERSION;
  header[1] = final ? FINAL : 0;
  header[2] = 0;
  header[3] = 0;
  header.set(streamNonce, 4);
  const c = createCipheriv('aes-256-gcm', key, gcmNonce(streamNonce, seq));
  c.setAAD(header);
  const body = c.update(plain);
  out.set(body, at + HEADER);
  c.final();
  out.set(c.getAuthTag(), at + HEADER + body.length);
  return HEADER + plain.length + TAG;
}

/**
 * Seals two packages (one full, one short and final) natively and with
 * node:crypto under a fixed key and nonce: the native kernel is used only
 * when the bytes agree and it opens them again (into another buffer and in
 * place) and refuses a flipped tag.
 */
function nativeSelfTest(addon: NativeAddon): boolean {
  try {
    const key = Buffer.alloc(KEY_BYTES, 0x5a);
    const nonce = Buffer.alloc(12, 0xa5);
    const plain = Buffer.alloc(PACKAGE_SIZE + 100);
    for (let i = 0; i < plain.length; i++) plain[i] = (i * 131) & 0xff;
    const expected = Buffer.alloc(encryptedSize(plain.length));
    const object = createSecretKey(key);
    sealPackage(object, nonce, 0, false, plain.subarray(0, PACKAGE_SIZE), expected, 0);
    sealPackage(object, nonce, 1, true, plain.subarray(PACKAGE_SIZE), expected, FULL_PACKAGE);
    const got = Buffer.alloc(expected.length);
    if (addon.gcmSeal(key, nonce, 0, true, plain, got) !== expected.length || !got.equals(expected)) return false;
    const back = Buffer.alloc(plain.length);
    if (addon.gcmOpen(key, nonce, 0, 1, got, back) !== plain.length || !back.equals(plain)) return false;
    // In place, as GETs open packages in the chunks their shard reads hand out.
    const inPlace = Buffer.from(got);
    if (addon.gcmOpen(key, nonce, 0, 1, inPlace, inPlace) !== plain.length || !inPlace.subarray(0, plain.length).equals(plain)) return false;
    got[got.length - 1]! ^= 1;
    return addon.gcmOpen(key, nonce, 0, 1, got, back) === -2;
  } catch {
    return false;
  }
}

/**
 * Seals the packages of `plain` (every one full, but the last when `final`)
 * as packages `seq…` into `out` at `at`; returns the bytes written.
 */
function sealRun(k: CipherKernel, key: StreamKey, nonce: Buffer, seq: number, final: boolean, plain: Uint8Array, out: Buffer, at: number): number {
  if (k === 'native' && nativeGcm) return nativeGcm.gcmSeal(key.raw, nonce, seq, final, plain, out.subarray(at));
  let n = 0;
  const packages = packageCount(plain.length);
  for (let i = 0; i < packages; i++) {
    const body = plain.subarray(i * PACKAGE_SIZE, Math.min(plain.length, (i + 1) * PACKAGE_SIZE));
    n += sealPackage(key.object, nonce, seq + i, final && i === packages - 1, body, out, at + n);
  }
  return n;
}

/**
 * Opens whole packages `seq…` of a stream whose last package is
 * `lastOfStream` into `out`; returns the plaintext bytes, or throws
 * `XSvcObjectTampered` naming the package that failed.
 */
function openRun(k: CipherKernel, key: StreamKey, nonce: Uint8Array, seq: number, lastOfStream: number, cipher: Uint8Array, out: Uint8Array): number {
  if (k === 'native' && nativeGcm) {
    const r = nativeGcm.gcmOpen(key.raw, nonce, seq, lastOfStream, cipher, out);
    if (r < 0) throw tampered(-1 - r);
    return r;
  }
  let at = 0;
  let wrote = 0;
  for (let s = seq; at < cipher.length; s++) {
    const len = Math.min(FULL_PACKAGE, cipher.length - at);
    const pkg = cipher.subarray(at, at + len);
    const header = pkg.subarray(0, HEADER);
    if (len < PACKAGE_OVERHEAD || (len < FULL_PACKAGE && s !== lastOfStream)) throw tampered(s);
    if (header[0] !== VERSION || header[1] !== (s === lastOfStream ? FINAL : 0) || header[2] !== 0 || header[3] !== 0) throw tampered(s);
    if (!Buffer.from(header.subarray(4, HEADER)).equals(nonce)) throw tampered(s);
    const d = createDecipheriv('aes-256-gcm', key.object, gcmNonce(nonce, s));
    d.setAAD(header);
    d.setAuthTag(pkg.subarray(len - TAG));
    const body = d.update(pkg.subarray(HEADER, len - TAG));
    try {
      d.final();
    } catch {
      throw tampered(s);
    }
    out.set(body, wrote);
    wrote += body.length;
    at += len;
  }
  return wrote;
}

/**
 * Encrypts a plaintext stream. Full packages are sealed straight from the
 * source's chunks (no copy), in runs of at most `MAX_RUN`, one output chunk
 * per run; only a partial package is gathered in a buffer of its own (a
 * source may reuse its chunk buffers once asked for the next one). A full
 * package is held back until more input shows it is not the last one.
 * `nonce` is the stream nonce, random unless a test pins it to compare
 * kernels byte for byte.
 */
export async function* encryptStream(
  rawKey: Uint8Array,
  source: AsyncIterable<Uint8Array>,
  kernel: CipherKernel = cipherKernel,
  nonce: Buffer = randomBytes(12),
): AsyncGenerator<Uint8Array> {
  const key = streamKey(rawKey);
  if (nonce.length !== 12) throw new SvcError('InternalError', 'a package cipher stream nonce is 12 bytes');
  let seq = 0;
  const pend = Buffer.allocUnsafe(PACKAGE_SIZE);
  let pendLen = 0;
  for await (const chunk of source) {
    let pos = 0;
    while (pos < chunk.length) {
      if (pendLen === PACKAGE_SIZE) {
        // More bytes follow the gathered package: it is not the last.
        const out = Buffer.allocUnsafe(FULL_PACKAGE);
        sealRun(kernel, key, nonce, seq++, false, pend, out, 0);
        pendLen = 0;
        yield out;
      }
      const left = chunk.length - pos;
      if (pendLen === 0 && left > PACKAGE_SIZE) {
        // Whole packages of this chunk, each certainly followed by more bytes.
        const run = Math.min(MAX_RUN, Math.floor((left - 1) / PACKAGE_SIZE));
        const out = Buffer.allocUnsafe(run * FULL_PACKAGE);
        sealRun(kernel, key, nonce, seq, false, chunk.subarray(pos, pos + run * PACKAGE_SIZE), out, 0);
        seq += run;
        pos += run * PACKAGE_SIZE;
        yield out;
        continue;
      }
      const take = Math.min(PACKAGE_SIZE - pendLen, left);
      pend.set(chunk.subarray(pos, pos + take), pendLen);
      pendLen += take;
      pos += take;
    }
  }
  const out = Buffer.allocUnsafe(pendLen + PACKAGE_OVERHEAD);
  sealRun(kernel, key, nonce, seq, true, pend.subarray(0, pendLen), out, 0);
  yield out;
}

/**
 * Decrypts packages `first..last` of a stream of `plain` plaintext bytes from
 * their ciphertext (the span `packageRange` names), yielding plaintext bytes
 * [skip, skip + length) of that span. Whole packages within a source chunk
 * are opened in runs of at most `MAX_RUN` straight from the chunk; one split
 * across chunks is gathered first, in a buffer of its own.
 * `opts.kernel` picks the cipher kernel (the default one unless a test or
 * bench compares them); `opts.inPlace` says the chunks are this stream's to overwrite: each run is
 * opened in its own ciphertext and the plaintext yielded from there, with no
 * output buffer (at 1 MiB a fresh buffer's page faults and the GC work it
 * brings cost about as much as the AES work; `npm run bench sse`).
 * Throws `XSvcObjectTampered` when a package fails authentication (wrong
 * key, modified or misplaced data).
 */
export async function* decryptPackages(
  rawKey: Uint8Array,
  source: AsyncIterable<Uint8Array>,
  span: { first: number; last: number; plain: number; skip: number; length: number },
  opts: { kernel?: CipherKernel; inPlace?: boolean } = {},
): AsyncGenerator<Uint8Array> {
  const { kernel = cipherKernel, inPlace = false } = opts;
  const key = streamKey(rawKey);
  const lastOfStream = packageCount(span.plain) - 1;
  const lastLen = span.plain - lastOfStream * PACKAGE_SIZE + PACKAGE_OVERHEAD;
  let seq = span.first;
  let skip = span.skip;
  let left = span.length;
  let nonce: Buffer | undefined;
  const need = (s: number) => (s < lastOfStream ? FULL_PACKAGE : lastLen);
  /** Opens a run of whole packages from `seq` (into itself when `ours`) and returns what is wanted of them. */
  const open = (cipher: Uint8Array, count: number, ours: boolean): Uint8Array | undefined => {
    // Every package of a stream carries its nonce; the first one read sets what the rest must carry.
    nonce ??= Buffer.from(cipher.subarray(4, HEADER));
    const out = ours ? cipher : Buffer.allocUnsafe(cipher.length - count * PACKAGE_OVERHEAD);
    let body = out.subarray(0, openRun(kernel, key, nonce, seq, lastOfStream, cipher, out));
    seq += count;
    if (skip > 0) {
      const s = Math.min(skip, body.length);
      body = body.subarray(s);
      skip -= s;
    }
    if (body.length > left) body = body.subarray(0, left);
    left -= body.length;
    return body.length > 0 ? body : undefined;
  };
  // A package split across source chunks, gathered here: a fresh buffer
  // each time, as the plaintext opened in it is handed out.
  let gather = Buffer.alloc(0);
  let gathered = 0;
  for await (const chunk of source) {
    let pos = 0;
    while (pos < chunk.length && left > 0 && seq <= span.last) {
      if (gathered === 0 && chunk.length - pos >= need(seq)) {
        // A run of whole packages in this chunk, opened without a copy.
        let count = 0;
        let bytes = 0;
        while (count < MAX_RUN && seq + count <= span.last && chunk.length - pos - bytes >= need(seq + count)) bytes += need(seq + count++);
        const body = open(chunk.subarray(pos, pos + bytes), count, inPlace);
        pos += bytes;
        if (body) yield body;
        continue;
      }
      const n = need(seq);
      if (gathered === 0) gather = Buffer.allocUnsafe(n);
      const take = Math.min(n - gathered, chunk.length - pos);
      gather.set(chunk.subarray(pos, pos + take), gathered);
      gathered += take;
      pos += take;
      if (gathered < n) break;
      gathered = 0;
      const body = open(gather, 1, true);
      if (body) yield body;
    }
    if (left === 0) return;
  }
  if (left > 0) throw new SvcError('FileCorrupt', 'encrypted stream ended early', { package: seq });
}

function tampered(seq: number): SvcError {
  return new SvcError('XSvcObjectTampered', undefined, { package: seq });
}
