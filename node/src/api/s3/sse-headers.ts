/**
 * Server-side encryption headers: what a request asks for (SSE-S3 with
 * `x-amz-server-side-encryption: AES256`, SSE-KMS with `aws:kms` and an
 * optional key id and encryption context, SSE-C with the
 * `x-amz-server-side-encryption-customer-*` triple, whose key MD5 is
 * checked), the copy source's SSE-C key, and the headers responses carry.
 * The same names arrive as form fields in a POST Object upload: the parsers
 * take a getter, with request-header wrappers. Pure.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { ObjectInfo, SseInfo, SseRequest } from '../../object/types.ts';
import { SvcError } from '../../util/errors.ts';
import { hdr } from './headers.ts';

const SSE = 'x-amz-server-side-encryption';
const KMS_KEY = 'x-amz-server-side-encryption-aws-kms-key-id';
const KMS_CONTEXT = 'x-amz-server-side-encryption-context';
const C_ALG = 'x-amz-server-side-encryption-customer-algorithm';
const C_KEY = 'x-amz-server-side-encryption-customer-key';
const C_MD5 = 'x-amz-server-side-encryption-customer-key-md5';
const COPY_PREFIX = 'x-amz-copy-source-';

/** A client key for SSE-C, checked against the MD5 the client sent with it. */
export interface CustomerKey {
  key: Buffer;
  /** base64 MD5 of the key, echoed in responses. */
  md5: string;
}

/**
 * The SSE-C key of a request (`copySource`: of the copy source, the
 * `x-amz-copy-source-server-side-encryption-customer-*` headers), or
 * undefined when none is given. All three headers or none.
 */
export function customerKey(req: IncomingMessage, copySource = false): CustomerKey | undefined {
  // x-amz-server-side-encryption-customer-* → x-amz-copy-source-server-side-encryption-customer-*
  return customerKeyOf((h) => hdr(req, copySource ? COPY_PREFIX + h.slice('x-amz-'.length) : h));
}

/** A value by its lower-case header name (or POST form field name). */
export type SseFields = (name: string) => string | undefined;

/** The SSE-C key named by `get`'s three customer fields, or undefined when none is given. */
export function customerKeyOf(get: SseFields): CustomerKey | undefined {
  const alg = get(C_ALG);
  const key = get(C_KEY);
  const md5 = get(C_MD5);
  if (alg === undefined && key === undefined && md5 === undefined) return undefined;
  if (alg === undefined || key === undefined || md5 === undefined) {
    throw new SvcError('InvalidArgument', 'Requests specifying Server Side Encryption with Customer provided keys must provide the encryption algorithm, the key and the MD5 of the key.');
  }
  if (alg !== 'AES256') throw new SvcError('InvalidEncryptionAlgorithmError', 'The encryption algorithm for a customer-provided key must be AES256.');
  const raw = Buffer.from(key, 'base64');
  if (raw.length !== 32 || raw.toString('base64') !== key.trim()) {
    throw new SvcError('InvalidArgument', 'The secret key was invalid for the specified algorithm: it must be 256 bits, base64-encoded.');
  }
  if (createHash('md5').update(raw).digest('base64') !== md5.trim()) {
    throw new SvcError('InvalidArgument', 'The calculated MD5 hash of the key did not match the hash that was provided.');
  }
  return { key: raw, md5: md5.trim() };
}

/** The encryption a write asks for (PUT, copy destination, CreateMultipartUpload); undefined: the bucket's default. */
export function requestedSse(req: IncomingMessage): SseRequest | undefined {
  return requestedSseOf((h) => hdr(req, h));
}

/** The encryption `get`'s fields ask for; undefined: the bucket's default. */
export function requestedSseOf(get: SseFields): SseRequest | undefined {
  const c = customerKeyOf(get);
  const sse = get(SSE);
  const keyId = get(KMS_KEY);
  const context = get(KMS_CONTEXT);
  if (c) {
    if (sse !== undefined) throw new SvcError('InvalidArgument', 'Server side encryption specified with both SSE-C and SSE-S3/SSE-KMS headers.');
    return { type: 'SSE-C', key: c.key };
  }
  if (sse === undefined) {
    if (keyId !== undefined || context !== undefined) {
      throw new SvcError('InvalidArgument', `${KMS_KEY} and ${KMS_CONTEXT} need x-amz-server-side-encryption: aws:kms.`);
    }
    return undefined;
  }
  switch (sse) {
    case 'AES256':
      if (keyId !== undefined || context !== undefined) throw new SvcError('InvalidArgument', `${KMS_KEY} is only valid with x-amz-server-side-encryption: aws:kms.`);
      return { type: 'SSE-S3' };
    case 'aws:kms': {
      if (context !== undefined) checkContext(context);
      return { type: 'SSE-KMS', ...(keyId !== undefined && keyId !== '' ? { keyId } : {}), ...(context !== undefined ? { context } : {}) };
    }
    case 'aws:kms:dsse':
      throw new SvcError('NotImplemented', 'Dual-layer server-side encryption (aws:kms:dsse) is not supported by this server.');
    default:
      throw new SvcError('InvalidArgument', `The encryption method specified is not supported: ${sse}.`);
  }
}

/** An encryption context is base64 of a JSON object of strings. */
function checkContext(context: string): void {
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(context, 'base64').toString('utf8'));
  } catch {
    v = undefined;
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v) || Object.values(v).some((x) => typeof x !== 'string')) {
    throw new SvcError('InvalidArgument', `${KMS_CONTEXT} must be base64 of a JSON object of strings.`);
  }
}

/** Reads (GET, HEAD) take only an SSE-C key; an SSE-S3/KMS header there is an error, as in S3. */
export function readCustomerKey(req: IncomingMessage): CustomerKey | undefined {
  if (hdr(req, SSE) !== undefined) throw new SvcError('InvalidArgument', 'x-amz-server-side-encryption is not valid on a read; only SSE-C keys are given there.');
  return customerKey(req);
}

/** An SSE-C object read without its key is refused before anything else is said about it (HEAD, attributes, copy source). */
export function requireCustomerKey(info: Pick<ObjectInfo, 'sse'>, key: CustomerKey | undefined): void {
  if (info.sse?.type === 'SSE-C' && key === undefined) {
    throw new SvcError('InvalidRequest', 'The object was stored using a form of Server Side Encryption. The correct parameters must be provided to retrieve the object.');
  }
}

/** Response headers describing how an object (or upload, part) is encrypted. */
export function sseResponseHeaders(sse: SseInfo | undefined, key?: CustomerKey): Record<string, string> {
  if (!sse) return {};
  switch (sse.type) {
    case 'SSE-S3':
      return { [SSE]: 'AES256' };
    case 'SSE-KMS':
      return { [SSE]: 'aws:kms', ...(sse.keyId ? { [KMS_KEY]: sse.keyId } : {}), ...(sse.context ? { [KMS_CONTEXT]: sse.context } : {}) };
    case 'SSE-C':
      return { [C_ALG]: 'AES256', ...(key ? { [C_MD5]: key.md5 } : {}) };
  }
}
