/**
 * Server-side encryption in the object layer: which key a new version is
 * sealed with (the request's SSE-C key, SSE-KMS key id, SSE-S3, or the
 * bucket's default encryption), the sealed object key and its binding kept
 * in the version's system metadata, and the size and range arithmetic
 * between what clients see (plaintext) and what the erasure layer stores
 * (the package ciphertext of `crypto/package-cipher.ts`, one stream per part).
 *
 * Stored sizes stay ciphertext sizes (`FileVersion.size`, each part's size),
 * so everything below and beside the object layer that copies versions raw
 * (data movement, heal) moves ciphertext and the sealed key with it; the
 * plaintext sizes follow from them (`plainPartSizes`).
 */
import { decryptedSize, decryptPackages, encryptedSize, encryptStream, PACKAGE_SIZE, packageRange } from '../crypto/package-cipher.ts';
import { keyedEtag, newObjectKey, partKey, sealKey, unsealKey } from '../crypto/keys.ts';
import type { Kms } from '../crypto/kms.ts';
import type { FileVersion } from '../storage/drive.ts';
import { SvcError } from '../util/errors.ts';
import type { SseInfo, SseRequest, SseType } from './types.ts';

/** System-metadata keys of an encrypted version. */
export const SSE_META = { type: 'sse', keyId: 'sse-key-id', sealed: 'sse-sealed', context: 'sse-context' } as const;

const TYPE_CODE: Record<SseType, string> = { 'SSE-S3': 'S3', 'SSE-KMS': 'KMS', 'SSE-C': 'C' };
const CODE_TYPE: Record<string, SseType> = { S3: 'SSE-S3', KMS: 'SSE-KMS', C: 'SSE-C' };

/** The encryption of a stored version (or upload), undefined when plaintext. */
export function sseOf(sysMeta: Readonly<Record<string, string>>): SseInfo | undefined {
  const type = CODE_TYPE[sysMeta[SSE_META.type] ?? ''];
  if (type === undefined) return undefined;
  const info: SseInfo = { type };
  const keyId = sysMeta[SSE_META.keyId];
  if (keyId !== undefined) info.keyId = keyId;
  const context = sysMeta[SSE_META.context];
  if (context !== undefined) info.context = context;
  return info;
}

/** System metadata without the encryption keys (a copy re-encrypts with its own). */
export function withoutSse(sysMeta: Readonly<Record<string, string>>): Record<string, string> {
  const out = { ...sysMeta };
  for (const k of Object.values(SSE_META)) delete out[k];
  return out;
}

function binding(info: SseInfo, bucket: string, key: string): string {
  return [TYPE_CODE[info.type], info.keyId ?? '', info.context ?? '', `${bucket}/${key}`].join('\0');
}

/** An open object key: what encrypts and decrypts a version's parts. */
export interface ObjectKey {
  key: Buffer;
  info: SseInfo;
}

function needKms(kms: Kms | undefined): Kms {
  if (!kms) throw new SvcError('XSvcKMSNotConfigured');
  return kms;
}

/**
 * A fresh object key for a new version of `bucket/key`, sealed as `req`
 * asks; returns it with the system metadata to store.
 */
export function sealNewKey(req: SseRequest, kms: Kms | undefined, bucket: string, key: string): { objectKey: ObjectKey; sysMeta: Record<string, string> } {
  const objectKey = newObjectKey();
  let info: SseInfo;
  let kek: Buffer;
  switch (req.type) {
    case 'SSE-C':
      info = { type: 'SSE-C' };
      kek = Buffer.from(req.key);
      break;
    case 'SSE-S3': {
      const k = needKms(kms).defaultKey();
      info = { type: 'SSE-S3', keyId: k.id };
      kek = k.key;
      break;
    }
    case 'SSE-KMS': {
      const k = req.keyId !== undefined ? needKms(kms).key(req.keyId) : needKms(kms).defaultKey();
      info = { type: 'SSE-KMS', keyId: k.id, ...(req.context !== undefined ? { context: req.context } : {}) };
      kek = k.key;
      break;
    }
  }
  const sysMeta: Record<string, string> = { [SSE_META.type]: TYPE_CODE[info.type], [SSE_META.sealed]: sealKey(kek, objectKey, binding(info, bucket, key)) };
  if (info.keyId !== undefined) sysMeta[SSE_META.keyId] = info.keyId;
  if (info.context !== undefined) sysMeta[SSE_META.context] = info.context;
  return { objectKey: { key: objectKey, info }, sysMeta };
}

/**
 * Opens the object key of a stored version (or upload) of `bucket/key`:
 * undefined for plaintext. SSE-C needs the client's key (`InvalidRequest`
 * without, `AccessDenied` with a wrong one); a client key offered for an
 * object that is not SSE-C is `InvalidRequest`, as S3 answers.
 */
export function openObjectKey(
  sysMeta: Readonly<Record<string, string>>,
  kms: Kms | undefined,
  customerKey: Uint8Array | undefined,
  bucket: string,
  key: string,
): ObjectKey | undefined {
  const info = sseOf(sysMeta);
  if (!info) {
    if (customerKey !== undefined) throw new SvcError('InvalidRequest', 'The encryption parameters are not applicable to this object.');
    return undefined;
  }
  let kek: Buffer;
  if (info.type === 'SSE-C') {
    if (customerKey === undefined) {
      throw new SvcError('InvalidRequest', 'The object was stored using a form of Server Side Encryption. The correct parameters must be provided to retrieve the object.');
    }
    kek = Buffer.from(customerKey);
  } else {
    if (customerKey !== undefined) throw new SvcError('InvalidRequest', 'The encryption parameters are not applicable to this object.');
    kek = needKms(kms).key(info.keyId ?? '').key;
  }
  const objectKey = unsealKey(kek, sysMeta[SSE_META.sealed] ?? '', binding(info, bucket, key));
  if (!objectKey) {
    // S3 answers a wrong customer key 400, as it answers a missing one
    if (info.type === 'SSE-C') throw new SvcError('InvalidRequest', 'The provided SSE-C key does not match the key the object was encrypted with.');
    throw new SvcError('XSvcObjectTampered', 'The object key could not be unsealed with its key-store key.', { keyId: info.keyId });
  }
  return { key: objectKey, info };
}

/** Plaintext size of each part of a version (the stored sizes when it is not encrypted). */
export function plainPartSizes(v: Pick<FileVersion, 'parts' | 'sysMeta'>): number[] {
  const encrypted = sseOf(v.sysMeta) !== undefined;
  return v.parts.map((p) => decryptedSizeOf(p.size, encrypted));
}

/** The plaintext size of a stored part (`encrypted`: it holds a package stream). */
export function decryptedSizeOf(stored: number, encrypted: boolean): number {
  return encrypted ? decryptedSize(stored) : stored;
}

/** Stored (ciphertext) size of a part of `plain` bytes, -1 when unknown. */
export function storedSize(plain: number): number {
  return plain < 0 ? -1 : encryptedSize(plain);
}

/** The plaintext of part `partNumber` as the package stream the erasure layer stores. */
export function encryptPart(k: ObjectKey, partNumber: number, source: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  return encryptStream(partKey(k.key, partNumber), source);
}

/** The ETag clients see for an encrypted object or part whose plaintext MD5 is `md5Hex`: S3 shows the MD5 for SSE-S3 only. */
export function sseEtag(k: ObjectKey | undefined, md5Hex: string): string {
  if (!k || k.info.type === 'SSE-S3') return md5Hex;
  return keyedEtag(k.key, md5Hex);
}

/**
 * Reads plaintext bytes [start, start + length) of an encrypted version:
 * per part it touches, only the packages covering the range are read
 * (`read(partIndex, cipherOffset, cipherLength)` gives their ciphertext,
 * offsets relative to the part) and authenticated. `owned`: the chunks `read`
 * yields are fresh and may be decrypted where they lie (no output buffers).
 */
export async function* decryptRange(
  k: ObjectKey,
  v: Pick<FileVersion, 'parts' | 'sysMeta'>,
  start: number,
  length: number,
  read: (partIndex: number, offset: number, length: number) => AsyncIterable<Uint8Array>,
  owned = false,
): AsyncGenerator<Uint8Array> {
  const plain = plainPartSizes(v);
  const end = start + length; // exclusive
  let partStart = 0;
  for (let i = 0; i < v.parts.length && partStart < end; i++) {
    const size = plain[i]!;
    const partEnd = partStart + size;
    if (partEnd > start && size > 0) {
      const from = Math.max(start, partStart) - partStart;
      const to = Math.min(end, partEnd) - partStart; // exclusive
      const span = packageRange(from, to - 1, size);
      yield* decryptPackages(
        partKey(k.key, v.parts[i]!.number),
        read(i, span.offset, span.length),
        {
          first: span.first,
          last: span.last,
          plain: size,
          skip: from - span.first * PACKAGE_SIZE,
          length: to - from,
        },
        { inPlace: owned },
      );
    }
    partStart = partEnd;
  }
}

// ============ bucket default encryption ============

/** The bucket's `encryption` configuration document (JSON). */
export interface BucketEncryption {
  algorithm: 'AES256' | 'aws:kms';
  kmsKeyId?: string;
  bucketKeyEnabled?: boolean;
}

export function encodeBucketEncryption(c: BucketEncryption): Uint8Array {
  return Buffer.from(JSON.stringify(c));
}

export function decodeBucketEncryption(raw: Uint8Array | undefined): BucketEncryption | undefined {
  if (raw === undefined) return undefined;
  let c: Partial<BucketEncryption>;
  try {
    c = JSON.parse(Buffer.from(raw).toString('utf8')) as Partial<BucketEncryption>;
  } catch (err) {
    throw new SvcError('FileCorrupt', 'bucket encryption configuration', undefined, { cause: err });
  }
  if (c.algorithm !== 'AES256' && c.algorithm !== 'aws:kms') return undefined;
  return {
    algorithm: c.algorithm,
    ...(typeof c.kmsKeyId === 'string' ? { kmsKeyId: c.kmsKeyId } : {}),
    ...(c.bucketKeyEnabled === true ? { bucketKeyEnabled: true } : {}),
  };
}

/** The encryption a new version gets: the request's, else the bucket's default, else none. */
export function effectiveSse(requested: SseRequest | undefined, bucketDefault: BucketEncryption | undefined): SseRequest | undefined {
  if (requested) return requested;
  if (!bucketDefault) return undefined;
  if (bucketDefault.algorithm === 'AES256') return { type: 'SSE-S3' };
  return { type: 'SSE-KMS', ...(bucketDefault.kmsKeyId !== undefined ? { keyId: bucketDefault.kmsKeyId } : {}) };
}
