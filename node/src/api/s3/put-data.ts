/**
 * Turns an incoming request body into the object layer's `PutData`: decodes
 * aws-chunked bodies, streams MD5 (ETag), the hex `x-amz-content-sha256`
 * digest, the announced or requested `x-amz-checksum-*`, counts bytes, and
 * throws the S3 error at the end of the stream — before the object layer can
 * commit — when anything does not match.
 */
import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { ChecksumAlgorithm, ChecksumType, ObjectChecksum, PutData } from '../../object/types.ts';
import { hashService } from '../../erasure/hash-service.ts';
import { SvcError } from '../../util/errors.ts';
import { decodeAwsChunked } from './auth/chunked.ts';
import type { AuthContext } from './auth/sigv4.ts';
import { headerValue } from './headers.ts';
import {
  CHECKSUM_ALGORITHMS,
  type Checksummer,
  checksumHeaderName,
  createChecksummer,
  isBase64,
  isValidChecksumValue,
  parseChecksumAlgorithm,
} from './checksum.ts';

/** Largest single PUT / UploadPart body: 5 GiB; objects reach 5 TiB through multipart. */
export const MAX_PUT_SIZE = 5 * 1024 ** 3;
export const MAX_OBJECT_SIZE = 5 * 1024 ** 4;

export interface PutDataOptions {
  /** Size cap for this operation (EntityTooLarge above it). */
  maxSize: number;
  /** Algorithm to compute when the client sends none (multipart upload's algorithm). */
  defaultChecksum?: ChecksumAlgorithm;
  checksumType?: ChecksumType;
}

/** The checksum the client asks us to verify: in a header, or announced as a trailer. */
interface ChecksumPlan {
  algorithm: ChecksumAlgorithm;
  /** Base64 value from the header; undefined when it comes in a trailer or is only requested. */
  expected?: string;
  trailer: boolean;
}

function planChecksum(headers: IncomingHttpHeaders, trailerNames: string[], fallback?: ChecksumAlgorithm): ChecksumPlan | undefined {
  const present: ChecksumAlgorithm[] = [];
  for (const alg of CHECKSUM_ALGORITHMS) if (headerValue(headers, checksumHeaderName(alg)) !== undefined) present.push(alg);
  const trailerAlgs = trailerNames
    .filter((n) => n.startsWith('x-amz-checksum-'))
    .map((n) => {
      const alg = parseChecksumAlgorithm(n.slice('x-amz-checksum-'.length));
      if (!alg) throw new SvcError('InvalidRequest', `Unsupported checksum trailer '${n}'.`);
      return alg;
    });
  if (present.length + trailerAlgs.length > 1) {
    throw new SvcError('InvalidRequest', 'Expecting a single x-amz-checksum- header. Multiple checksum Types are not allowed.');
  }
  const sdkAlgRaw = headerValue(headers, 'x-amz-sdk-checksum-algorithm');
  let sdkAlg: ChecksumAlgorithm | undefined;
  if (sdkAlgRaw !== undefined) {
    sdkAlg = parseChecksumAlgorithm(sdkAlgRaw);
    if (!sdkAlg) throw new SvcError('InvalidRequest', `Value for x-amz-sdk-checksum-algorithm header is invalid: ${sdkAlgRaw}.`);
  }
  if (present.length === 1) {
    const alg = present[0]!;
    const expected = headerValue(headers, checksumHeaderName(alg))!.trim();
    checkChecksumValue(alg, expected, 'header');
    return { algorithm: alg, expected, trailer: false };
  }
  if (trailerAlgs.length === 1) return { algorithm: trailerAlgs[0]!, trailer: true };
  const alg = sdkAlg ?? fallback;
  return alg ? { algorithm: alg, trailer: false } : undefined;
}

/**
 * A client's checksum value: not base64 at all is `InvalidRequest`; base64
 * of the wrong length can never match, which S3 answers `BadDigest` (before
 * the body is read when it came in a header).
 */
export function checkChecksumValue(alg: ChecksumAlgorithm, value: string, where: 'header' | 'trailer'): void {
  if (!isBase64(value)) throw new SvcError('InvalidRequest', `Value for ${checksumHeaderName(alg)} ${where} is invalid.`);
  if (!isValidChecksumValue(alg, value)) throw new SvcError('BadDigest', `The ${alg} you specified did not match the calculated checksum.`);
}

/** Parses `Content-MD5` (base64 of 16 bytes) to hex; InvalidDigest when malformed. */
function parseContentMd5(v: string | undefined): string | undefined {
  if (v === undefined) return undefined;
  const raw = Buffer.from(v.trim(), 'base64');
  if (raw.length !== 16 || !/^[A-Za-z0-9+/]+={0,2}$/.test(v.trim())) throw new SvcError('InvalidDigest');
  return raw.toString('hex');
}

function parseSize(v: string | undefined, what: string): number {
  if (v === undefined) return -1;
  if (!/^\d{1,16}$/.test(v.trim())) throw new SvcError('InvalidArgument', `Invalid ${what}.`);
  return Number(v.trim());
}

/** A socket the client closed mid-body is an incomplete body, not a server fault. */
async function* clientGone(src: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  try {
    yield* src;
  } catch (err) {
    if (err instanceof SvcError) throw err;
    const code = (err as NodeJS.ErrnoException | undefined)?.code;
    if (code === 'ECONNRESET' || code === 'ERR_STREAM_PREMATURE_CLOSE' || (err instanceof Error && err.message === 'aborted')) {
      throw new SvcError('IncompleteBody', 'The client closed the connection before the body was complete.', undefined, { cause: err });
    }
    throw err;
  }
}

/**
 * Builds the PutData of a request. `body` is the raw socket stream (the
 * IncomingMessage itself).
 */
export function buildPutData(
  headers: IncomingHttpHeaders,
  body: AsyncIterable<Uint8Array>,
  auth: AuthContext,
  opts: PutDataOptions,
): PutData {
  const contentLength = parseSize(headerValue(headers, 'content-length'), 'Content-Length');
  const streaming = auth.payload.kind === 'streaming';
  let size = contentLength;
  if (streaming) {
    size = parseSize(headerValue(headers, 'x-amz-decoded-content-length'), 'x-amz-decoded-content-length');
    if (size < 0 && auth.payload.kind === 'streaming' && auth.payload.signed) {
      throw new SvcError('MissingContentLength', 'x-amz-decoded-content-length is required for streaming uploads.');
    }
  } else if (contentLength < 0 && headerValue(headers, 'transfer-encoding') === undefined) {
    // No body framing at all: an empty body.
    size = 0;
  }
  if (size > opts.maxSize) throw new SvcError('EntityTooLarge', undefined, { size, max: opts.maxSize });

  const trailerNames = (headerValue(headers, 'x-amz-trailer') ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter((s) => s !== '');
  if (trailerNames.length > 0 && !(auth.payload.kind === 'streaming' && auth.payload.trailer)) {
    throw new SvcError('InvalidRequest', 'x-amz-trailer requires a STREAMING-*-TRAILER payload.');
  }
  const plan = planChecksum(headers, trailerNames, opts.defaultChecksum);
  const md5Expected = parseContentMd5(headerValue(headers, 'content-md5'));
  const sha256Expected = auth.payload.kind === 'sha256' ? auth.payload.hex : undefined;

  const ck: Checksummer | undefined = plan ? createChecksummer(plan.algorithm) : undefined;
  let md5Hex: string | undefined;
  let result: ObjectChecksum | undefined;
  let trailers: Map<string, string> | undefined;

  const source: AsyncIterable<Uint8Array> = streaming
    ? decodeAwsChunked(body, {
        signing:
          auth.payload.kind === 'streaming' && auth.payload.signed
            ? { signingKey: auth.signingKey, amzDate: auth.amzDate, scope: auth.scope, seedSignature: auth.signature }
            : undefined,
        expectTrailers: trailerNames,
        onTrailers: (t) => {
          trailers = t;
        },
      })
    : body;

  async function* verified(): AsyncGenerator<Uint8Array> {
    let n = 0;
    // MD5 and SHA-256 through the process's hashing service (batched with other uploads when that
    // pays). Opened here, when the body is first read, so a body never read holds no place in it.
    const hasher = hashService.body({ sha256: sha256Expected !== undefined, size });
    let digests: { md5: string; sha256?: string };
    try {
      for await (const piece of clientGone(source)) {
        n += piece.byteLength;
        if (n > opts.maxSize || (size >= 0 && n > size)) {
          throw size >= 0 && n > size
            ? new SvcError('IncompleteBody', 'The body is longer than the declared length.')
            : new SvcError('EntityTooLarge');
        }
        // On OpenSSL hashed right here; in the lanes, waits for the previous piece and hashes this
        // one while the consumer encodes it.
        const queued = hasher.update(piece);
        if (queued !== undefined) await queued;
        ck?.update(piece);
        yield piece;
      }
      if (size >= 0 && n !== size) throw new SvcError('IncompleteBody', undefined, { expected: size, received: n });
      digests = await hasher.finish();
    } finally {
      hasher.close();
    }
    const gotMd5 = digests.md5;
    if (md5Expected !== undefined && gotMd5 !== md5Expected) throw new SvcError('BadDigest');
    if (sha256Expected !== undefined && digests.sha256 !== sha256Expected) throw new SvcError('XAmzContentSHA256Mismatch');
    if (plan && ck) {
      const value = ck.digest().toString('base64');
      let expected = plan.expected;
      if (plan.trailer) {
        expected = trailers?.get(checksumHeaderName(plan.algorithm));
        if (expected === undefined) throw new SvcError('IncompleteBody', 'The announced checksum trailer is missing.');
        checkChecksumValue(plan.algorithm, expected, 'trailer');
      }
      if (expected !== undefined && expected !== value) {
        throw new SvcError('BadDigest', `The ${plan.algorithm} you specified did not match the calculated checksum.`);
      }
      result = { algorithm: plan.algorithm, value, type: opts.checksumType ?? 'FULL_OBJECT' };
    }
    md5Hex = gotMd5;
  }

  return {
    stream: verified(),
    size,
    md5Hex(): string {
      if (md5Hex === undefined) throw new Error('md5Hex() read before the body was fully consumed');
      return md5Hex;
    },
    checksum(): ObjectChecksum | undefined {
      return result;
    },
  };
}

/**
 * Reads a small, verified request body (XML documents) fully, capped at
 * `limit` bytes (EntityTooLarge above it, declared or actual).
 */
export async function readSmallBody(
  headers: IncomingHttpHeaders,
  body: AsyncIterable<Uint8Array>,
  auth: AuthContext,
  limit: number,
): Promise<Buffer> {
  const data = buildPutData(headers, body, auth, { maxSize: limit });
  const parts: Buffer[] = [];
  for await (const p of data.stream) parts.push(Buffer.from(p));
  return Buffer.concat(parts);
}

/** Checks on a stream whose size is not known up front (a POST form's file). */
export interface StreamVerify {
  /** Expected base64 checksum of `algorithm`; BadDigest when different. */
  expected?: string;
  /** EntityTooSmall below, EntityTooLarge above (checked while streaming, before any commit). */
  minSize?: number;
  maxSize?: number;
}

/**
 * PutData over a server-side stream (CopyObject, UploadPartCopy, a POST
 * form's file): MD5 and an optional checksum are computed; the byte count
 * must equal `size` when it is known (≥ 0).
 */
export function streamPutData(
  src: AsyncIterable<Uint8Array>,
  size: number,
  algorithm?: ChecksumAlgorithm,
  checksumType: ChecksumType = 'FULL_OBJECT',
  verify: StreamVerify = {},
): PutData {
  const md5 = createHash('md5');
  const ck = algorithm ? createChecksummer(algorithm) : undefined;
  let md5Hex: string | undefined;
  let result: ObjectChecksum | undefined;
  const max = verify.maxSize ?? Number.MAX_SAFE_INTEGER;
  async function* run(): AsyncGenerator<Uint8Array> {
    let n = 0;
    for await (const piece of src) {
      n += piece.byteLength;
      if (n > max) throw new SvcError('EntityTooLarge', undefined, { max });
      md5.update(piece);
      ck?.update(piece);
      yield piece;
    }
    if (size >= 0 && n !== size) throw new SvcError('InternalError', 'Copy source ended early.', { expected: size, received: n });
    if (verify.minSize !== undefined && n < verify.minSize) throw new SvcError('EntityTooSmall', undefined, { min: verify.minSize, size: n });
    md5Hex = md5.digest('hex');
    if (ck && algorithm) {
      const value = ck.digest().toString('base64');
      if (verify.expected !== undefined && verify.expected !== value) {
        throw new SvcError('BadDigest', `The ${algorithm} you specified did not match the calculated checksum.`);
      }
      result = { algorithm, value, type: checksumType };
    }
  }
  return {
    stream: run(),
    size,
    md5Hex(): string {
      if (md5Hex === undefined) throw new Error('md5Hex() read before the body was fully consumed');
      return md5Hex;
    },
    checksum: () => result,
  };
}
