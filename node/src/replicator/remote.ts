/**
 * The S3 client of one remote target: SigV4-signed requests
 * (`@smithy/signature-v4`, service `s3`, the target's region) over one
 * keep-alive undici pool, path-style, to any S3 service. Bodies stream
 * (`UNSIGNED-PAYLOAD`, with their exact `content-length`) through the
 * target's bandwidth limit; small documents are signed with their SHA-256.
 * https targets are verified against the node's CA set (its certificate
 * directory's `CAs/` plus the system roots).
 *
 * Errors are `RemoteError`s that say whether the target is unreachable or
 * overloaded (`retryable`: the queue waits and tries again) or refused this
 * one request (a 4xx: the version is marked FAILED and retried later).
 */
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { SignatureV4 } from '@smithy/signature-v4';
import { XMLParser } from 'fast-xml-parser';
import { Pool } from 'undici';
import { type ClientTrust, tlsConnector } from '../tls/trust.ts';
import type { Clock } from '../util/clock.ts';
import { Sha256 } from '../util/smithy-sha256.ts';
import { uriEncode } from '../util/uri-encode.ts';
import type { RemoteTarget } from '../replication/targets.ts';
import { REPLICA_ANSWER_HEADER } from '../replication/wire.ts';

/** SigV4's payload hash for a streamed body that is not hashed. */
const UNSIGNED_PAYLOAD = 'UNSIGNED-PAYLOAD';

export class RemoteError extends Error {
  readonly status: number;
  readonly code: string;
  /** The target is down, overloaded or timed out: the whole queue waits, nothing is marked failed. */
  readonly retryable: boolean;

  constructor(message: string, status: number, code: string, retryable: boolean, options?: { cause?: unknown }) {
    super(message, options);
    this.status = status;
    this.code = code;
    this.retryable = retryable;
  }
}

/** Paces bytes to a rate: each chunk waits until the rate allows it. */
export class BandwidthLimit {
  #rate: number;
  #next = 0;
  readonly #clock: Clock;

  constructor(bytesPerSecond: number, clock: Clock) {
    this.#rate = bytesPerSecond;
    this.#clock = clock;
  }

  set rate(bytesPerSecond: number) {
    this.#rate = bytesPerSecond;
  }

  async take(n: number, signal?: AbortSignal): Promise<void> {
    if (this.#rate <= 0) return;
    const now = this.#clock.now();
    const start = Math.max(now, this.#next);
    this.#next = start + (n / this.#rate) * 1000;
    if (start > now) await this.#clock.sleep(start - now, signal);
  }

  /** `body` paced by the limit (the chunks themselves untouched). */
  pace(body: AsyncIterable<Uint8Array>, signal?: AbortSignal): AsyncIterable<Uint8Array> {
    if (this.#rate <= 0) return body;
    const take = (n: number) => this.take(n, signal);
    return (async function* () {
      for await (const chunk of body) {
        await take(chunk.byteLength);
        yield chunk;
      }
    })();
  }
}

export interface RemoteResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

const xml = new XMLParser({ ignoreAttributes: true, parseTagValue: false, removeNSPrefix: true });

function h(headers: RemoteResponse['headers'], name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_SOCKET', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CLOSED']);

function networkError(err: unknown, what: string): RemoteError {
  const code = (err as { code?: string }).code ?? (err as { cause?: { code?: string } }).cause?.code ?? 'NetworkError';
  return new RemoteError(`${what}: ${code === 'NetworkError' ? (err as Error).message : code}`, 0, code, NETWORK_CODES.has(code) || code === 'NetworkError', { cause: err });
}

export interface RemoteOptions {
  target: RemoteTarget;
  /** The node's CA set for https targets. */
  trust?: ClientTrust;
  clock: Clock;
  /** The target's bandwidth limit (shared by every copy to it). */
  limit: BandwidthLimit;
}

export interface PutResult {
  /** The version id the remote gave the copy ('' when its bucket is not versioned). */
  versionId: string;
  /** The remote is svc and kept the source's version id and time. */
  replica: boolean;
  etag: string;
}

export class RemoteClient {
  readonly #o: RemoteOptions;
  readonly #pool: Pool;
  readonly #signer: SignatureV4;
  readonly #origin: string;

  constructor(o: RemoteOptions) {
    this.#o = o;
    const t = o.target;
    this.#origin = `${t.secure ? 'https' : 'http'}://${t.endpoint}`;
    const connect = t.secure && o.trust ? tlsConnector(o.trust, { timeout: 10_000 }) : undefined;
    this.#pool = new Pool(this.#origin, { connections: 32, keepAliveTimeout: 10_000, headersTimeout: 60_000, bodyTimeout: 60_000, connectTimeout: 10_000, ...(connect ? { connect } : {}) });
    this.#signer = new SignatureV4({
      credentials: { accessKeyId: t.accessKey, secretAccessKey: t.secretKey },
      region: t.region,
      service: 's3',
      sha256: Sha256,
      uriEscapePath: false,
      applyChecksum: false,
    });
  }

  get target(): RemoteTarget {
    return this.#o.target;
  }

  #path(key?: string): string {
    const b = `/${uriEncode(this.#o.target.targetBucket, true)}`;
    return key === undefined ? b : `${b}/${uriEncode(key, false).replace(/%2F/g, '/')}`;
  }

  /** One signed request; the body (when a stream) goes through the bandwidth limit. */
  async request(
    method: 'GET' | 'HEAD' | 'PUT' | 'POST' | 'DELETE',
    key: string | undefined,
    query: Record<string, string>,
    headers: Record<string, string>,
    body?: Buffer | { stream: AsyncIterable<Uint8Array>; size: number },
    signal?: AbortSignal,
  ): Promise<RemoteResponse> {
    const path = this.#path(key);
    const host = this.#o.target.endpoint;
    const buffered = Buffer.isBuffer(body);
    const all: Record<string, string> = {
      ...headers,
      host,
      'x-amz-content-sha256': body === undefined ? createHash('sha256').digest('hex') : buffered ? createHash('sha256').update(body).digest('hex') : UNSIGNED_PAYLOAD,
    };
    if (body !== undefined) all['content-length'] = String(buffered ? body.byteLength : body.size);
    const signed = await this.#signer.sign(
      { method, protocol: this.#o.target.secure ? 'https:' : 'http:', hostname: host, path, query: { ...query }, headers: all },
      { signingDate: new Date(this.#o.clock.now()) },
    );
    const qs = Object.entries(query)
      .map(([k, v]) => (v === '' ? uriEncode(k, false) : `${uriEncode(k, false)}=${uriEncode(v, false)}`))
      .join('&');
    const what = `${method} ${this.#origin}${path}${qs ? `?${qs}` : ''}`;
    let res;
    try {
      res = await this.#pool.request({
        method,
        path: qs === '' ? path : `${path}?${qs}`,
        headers: signed.headers as Record<string, string>,
        ...(body === undefined ? {} : { body: buffered ? body : Readable.from(this.#o.limit.pace(body.stream, signal), { objectMode: false }) }),
        ...(signal ? { signal } : {}),
      });
    } catch (err) {
      throw networkError(err, what);
    }
    let text: string;
    try {
      text = method === 'HEAD' ? (await res.body.dump(), '') : await res.body.text();
    } catch (err) {
      throw networkError(err, what);
    }
    const out: RemoteResponse = { status: res.statusCode, headers: res.headers as RemoteResponse['headers'], text };
    if (res.statusCode >= 300) {
      let code = h(out.headers, 'x-minio-error-code') ?? `HTTP${res.statusCode}`;
      let message = '';
      if (text.includes('<Error')) {
        try {
          const e = (xml.parse(text) as { Error?: { Code?: string; Message?: string } }).Error;
          code = e?.Code ?? code;
          message = e?.Message ?? '';
        } catch {
          // not XML: the status says enough
        }
      }
      const retryable = res.statusCode >= 500 || res.statusCode === 429 || res.statusCode === 408 || code === 'SlowDown' || code === 'RequestTimeout';
      throw new RemoteError(`${what}: ${res.statusCode} ${code}${message ? ` (${message})` : ''}`, res.statusCode, code, retryable);
    }
    return out;
  }

  /** Reachability and the credential: HEAD of the remote bucket; the time it took (ms). */
  async check(signal?: AbortSignal): Promise<number> {
    const t0 = performance.now();
    await this.request('HEAD', undefined, {}, {}, undefined, signal);
    return performance.now() - t0;
  }

  /** The remote bucket's versioning status ('' when never set). */
  async versioning(): Promise<string> {
    const r = await this.request('GET', undefined, { versioning: '' }, {});
    const doc = xml.parse(r.text) as { VersioningConfiguration?: { Status?: string } | string };
    const v = doc.VersioningConfiguration;
    return typeof v === 'object' && v !== null ? (v.Status ?? '') : '';
  }

  async putObject(key: string, headers: Record<string, string>, body: { stream: AsyncIterable<Uint8Array>; size: number }, signal?: AbortSignal): Promise<PutResult> {
    const r = await this.request('PUT', key, {}, headers, body, signal);
    return { versionId: h(r.headers, 'x-amz-version-id') ?? '', replica: h(r.headers, REPLICA_ANSWER_HEADER) === 'true', etag: (h(r.headers, 'etag') ?? '').replace(/"/g, '') };
  }

  async createUpload(key: string, headers: Record<string, string>): Promise<string> {
    const r = await this.request('POST', key, { uploads: '' }, headers);
    const id = (xml.parse(r.text) as { InitiateMultipartUploadResult?: { UploadId?: string } }).InitiateMultipartUploadResult?.UploadId;
    if (!id) throw new RemoteError(`the remote answered CreateMultipartUpload without an UploadId`, r.status, 'MalformedResponse', false);
    return id;
  }

  async uploadPart(key: string, uploadId: string, part: number, body: { stream: AsyncIterable<Uint8Array>; size: number }, signal?: AbortSignal): Promise<string> {
    const r = await this.request('PUT', key, { partNumber: String(part), uploadId }, {}, body, signal);
    return h(r.headers, 'etag') ?? '';
  }

  async completeUpload(key: string, uploadId: string, parts: { number: number; etag: string }[]): Promise<PutResult> {
    const doc = `<CompleteMultipartUpload>${parts.map((p) => `<Part><PartNumber>${p.number}</PartNumber><ETag>${p.etag.replace(/&/g, '&amp;').replace(/</g, '&lt;')}</ETag></Part>`).join('')}</CompleteMultipartUpload>`;
    const r = await this.request('POST', key, { uploadId }, { 'content-type': 'application/xml' }, Buffer.from(doc));
    // A complete can fail after its 200 (an <Error> body), as S3 documents.
    if (r.text.includes('<Error>')) throw new RemoteError(`CompleteMultipartUpload of ${key} failed: ${r.text.slice(0, 200)}`, 500, 'InternalError', true);
    const etag = ((xml.parse(r.text) as { CompleteMultipartUploadResult?: { ETag?: string } }).CompleteMultipartUploadResult?.ETag ?? '').replace(/"/g, '');
    return { versionId: h(r.headers, 'x-amz-version-id') ?? '', replica: false, etag };
  }

  async abortUpload(key: string, uploadId: string): Promise<void> {
    await this.request('DELETE', key, { uploadId }, {}).catch(() => undefined);
  }

  /** DELETE of a key (a delete marker) or of one version; the version id the remote answers with. */
  async deleteObject(key: string, versionId: string | undefined, headers: Record<string, string>): Promise<{ versionId: string; replica: boolean }> {
    const r = await this.request('DELETE', key, versionId === undefined ? {} : { versionId }, headers);
    return { versionId: h(r.headers, 'x-amz-version-id') ?? '', replica: h(r.headers, REPLICA_ANSWER_HEADER) === 'true' };
  }

  /** HEAD of one version: its ETag, or undefined when the remote does not have it. */
  async headVersion(key: string, versionId: string): Promise<{ etag: string; deleteMarker: boolean } | undefined> {
    try {
      const r = await this.request('HEAD', key, { versionId }, {});
      return { etag: (h(r.headers, 'etag') ?? '').replace(/"/g, ''), deleteMarker: false };
    } catch (err) {
      if (err instanceof RemoteError && err.status === 405) return { etag: '', deleteMarker: true };
      if (err instanceof RemoteError && (err.status === 404 || err.status === 400)) return undefined;
      throw err;
    }
  }

  async close(): Promise<void> {
    await this.#pool.close();
  }
}
