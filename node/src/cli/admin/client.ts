/**
 * The admin client's transport: SigV4-signed requests (service `s3`, signed
 * with the AWS SDK's own signer, `@smithy/signature-v4`, and the payload
 * hash madmin sends) to `/svc/admin/...`, JSON back. Three outcomes, which
 * become the exit codes: an answer (0), the server saying no (`ServerError`,
 * exit 1), the server not reachable (`UnreachableError`, exit 3).
 */
import { createHash } from 'node:crypto';
import { SignatureV4 } from '@smithy/signature-v4';
import { fetch, type Response } from 'undici';
import { decryptData, encryptData } from '../../iam/madmin-crypto.ts';
import { Sha256 } from '../../util/smithy-sha256.ts';
import { certificateAdvice, type ClientTlsOptions, tlsDispatcher } from '../client-tls.ts';
import type { Target } from './config.ts';

/** Region the root credential signs for (the server's SVC_REGION; override with SVC_REGION here too). */
export const DEFAULT_REGION = 'us-east-1';
const TIMEOUT_MS = 30_000;

export { Sha256 };

/** The server answered with an admin error. */
export class ServerError extends Error {
  override readonly name = 'ServerError';
  readonly status: number;
  readonly code: string;
  /** The error body as the server sent it (printed by --json). */
  readonly body: string;
  constructor(status: number, code: string, message: string, body: string) {
    super(message);
    this.status = status;
    this.code = code;
    this.body = body;
  }
}

/** No answer: connection refused, name not resolved, timeout. */
export class UnreachableError extends Error {
  override readonly name = 'UnreachableError';
  /** What to do about it, when more is known than "check the URL". */
  readonly next: string | undefined;
  constructor(message: string, next?: string) {
    super(message);
    this.next = next;
  }
}

export interface AdminResponse {
  readonly status: number;
  /** The raw body ('' for an empty 200). */
  readonly text: string;
  readonly bytes: Buffer;
  /** Node that executed the request (`x-svc-admin-node`). */
  readonly node: string | undefined;
}

export class AdminClient {
  readonly target: Target;
  readonly #signer: SignatureV4;
  readonly #tls: ClientTlsOptions;

  /** `tls`: how https servers are verified (default: the CA set of `~/.svc/certs`, verified). */
  constructor(target: Target, region = DEFAULT_REGION, tls: ClientTlsOptions = { certsDir: undefined, insecure: false }) {
    this.target = target;
    this.#tls = tls;
    this.#signer = new SignatureV4({
      credentials: { accessKeyId: target.accessKey, secretAccessKey: target.secretKey, ...(target.sessionToken !== undefined ? { sessionToken: target.sessionToken } : {}) },
      region,
      service: 's3',
      sha256: Sha256,
      uriEscapePath: true,
      applyChecksum: true,
    });
  }

  /**
   * A signed GET on the S3 side whose answer streams (ListenBucketNotification):
   * `path` is the S3 path (`/bucket`, `/` for every bucket), a query value may
   * repeat. No timeout: the stream ends when the server or `signal` ends it.
   */
  async stream(path: string, query: Record<string, string | string[]>, signal?: AbortSignal): Promise<ReadableStream<Uint8Array>> {
    const u = new URL(this.target.url);
    const signed = await this.#signer.sign({
      method: 'GET',
      protocol: u.protocol,
      hostname: u.hostname,
      ...(u.port !== '' ? { port: Number(u.port) } : {}),
      path,
      query,
      headers: { host: u.host, 'x-amz-content-sha256': createHash('sha256').update('').digest('hex') },
    });
    const qs = Object.entries(query)
      .flatMap(([k, v]) => (Array.isArray(v) ? v : [v]).map((x) => `${encodeRfc3986(k)}=${encodeRfc3986(x)}`))
      .join('&');
    const url = `${u.origin}${path.split('/').map(encodeRfc3986).join('/')}${qs ? `?${qs}` : ''}`;
    let res: Response;
    try {
      const headers = { ...(signed.headers as Record<string, string>) };
      delete headers['host'];
      const dispatcher = u.protocol === 'https:' ? await tlsDispatcher(this.#tls) : undefined;
      res = await fetch(url, { method: 'GET', headers, ...(signal ? { signal } : {}), ...(dispatcher ? { dispatcher } : {}) });
    } catch (err) {
      const advice = certificateAdvice(err, this.#tls);
      if (advice !== undefined) throw new UnreachableError(`cannot talk to ${this.target.url}: ${advice.problem}`, advice.next);
      throw new UnreachableError(`cannot reach ${this.target.url}: ${networkReason(err, this.target.url)}`);
    }
    if (res.status >= 400 || res.body === null) {
      const text = await res.text();
      const code = /<Code>([^<]*)<\/Code>/.exec(text)?.[1] ?? `HTTP${res.status}`;
      const message = /<Message>([^<]*)<\/Message>/.exec(text)?.[1] ?? (text.slice(0, 300) || res.statusText);
      throw new ServerError(res.status, code, message, text);
    }
    return res.body;
  }

  /** One signed admin request; `path` is relative to `/svc/admin/` (e.g. `v3/pools/list`). */
  request(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, query: Record<string, string> = {}, body: string | Buffer = '', contentType = 'application/json'): Promise<AdminResponse> {
    return this.#send(method, `/svc/admin/${path}`, query, body, contentType);
  }

  /** One signed S3 request (`path`: `/bucket`), small bodies both ways (bucket configuration documents); S3 errors are `ServerError`s. */
  s3(method: 'GET' | 'PUT' | 'DELETE', path: string, query: Record<string, string> = {}, body: string = ''): Promise<AdminResponse> {
    return this.#send(method, path, query, body, 'application/xml');
  }

  async #send(method: 'GET' | 'POST' | 'PUT' | 'DELETE', fullPath: string, query: Record<string, string>, body: string | Buffer, contentType: string): Promise<AdminResponse> {
    const u = new URL(this.target.url);
    const payloadHash = createHash('sha256').update(body).digest('hex');
    const signed = await this.#signer.sign({
      method,
      protocol: u.protocol,
      hostname: u.hostname,
      ...(u.port !== '' ? { port: Number(u.port) } : {}),
      path: fullPath,
      query,
      headers: { host: u.host, 'x-amz-content-sha256': payloadHash, ...(body.length > 0 ? { 'content-type': contentType } : {}) },
      ...(body.length > 0 ? { body } : {}),
    });
    const qs = Object.entries(query)
      .map(([k, v]) => `${encodeRfc3986(k)}=${encodeRfc3986(v)}`)
      .join('&');
    const url = `${u.origin}${fullPath.split('/').map(encodeRfc3986).join('/')}${qs ? `?${qs}` : ''}`;
    let res: Response;
    try {
      const headers = { ...(signed.headers as Record<string, string>) };
      delete headers['host'];
      const dispatcher = u.protocol === 'https:' ? await tlsDispatcher(this.#tls) : undefined;
      res = await fetch(url, { method, headers, ...(body.length > 0 ? { body } : {}), signal: AbortSignal.timeout(TIMEOUT_MS), ...(dispatcher ? { dispatcher } : {}) });
    } catch (err) {
      const advice = certificateAdvice(err, this.#tls);
      if (advice !== undefined) throw new UnreachableError(`cannot talk to ${this.target.url}: ${advice.problem}`, advice.next);
      throw new UnreachableError(`cannot reach ${this.target.url}: ${networkReason(err, this.target.url)}`);
    }
    let bytes: Buffer;
    try {
      bytes = Buffer.from(await res.arrayBuffer());
    } catch (err) {
      throw new UnreachableError(`${this.target.url} broke off its answer: ${networkReason(err, this.target.url)}`);
    }
    const text = bytes.toString('utf8');
    const node = res.headers.get('x-svc-admin-node') ?? undefined;
    if (res.status >= 400) {
      let code = `HTTP${res.status}`;
      let message = text.slice(0, 500) || res.statusText;
      try {
        const e = JSON.parse(text) as { Code?: unknown; Message?: unknown };
        if (typeof e.Code === 'string') code = e.Code;
        if (typeof e.Message === 'string') message = e.Message;
      } catch {
        // An S3 error (XML), or not an error body at all (a proxy, another server): keep the raw text.
        const c = /<Code>([^<]*)<\/Code>/.exec(text)?.[1];
        if (c !== undefined) {
          code = c;
          message = /<Message>([^<]*)<\/Message>/.exec(text)?.[1] ?? message;
        }
      }
      throw new ServerError(res.status, code, message, text);
    }
    return { status: res.status, text, bytes, node };
  }

  /** A request whose body is encrypted with this client's secret key (madmin's format), and optionally its answer. */
  async encrypted(method: 'PUT' | 'POST', path: string, query: Record<string, string>, value: unknown, decryptAnswer: boolean): Promise<{ value: unknown; raw: string }> {
    const body = await encryptData(this.target.secretKey, Buffer.from(JSON.stringify(value)));
    const r = await this.request(method, path, query, body, 'application/octet-stream');
    if (!decryptAnswer) return { value: undefined, raw: r.text };
    return this.#decrypted(r, path);
  }

  /** A GET whose answer is encrypted with this client's secret key. */
  async encryptedAnswer<T>(path: string, query: Record<string, string> = {}): Promise<{ value: T; raw: string }> {
    return this.#decrypted(await this.request('GET', path, query), path) as Promise<{ value: T; raw: string }>;
  }

  async #decrypted(r: AdminResponse, path: string): Promise<{ value: unknown; raw: string }> {
    let raw: string;
    try {
      raw = (await decryptData(this.target.secretKey, r.bytes)).toString('utf8');
      return { value: JSON.parse(raw) as unknown, raw };
    } catch {
      throw new ServerError(r.status, 'InvalidResponse', `the server's answer to ${path} does not decrypt with this alias's secret key`, r.text);
    }
  }

  /** A request whose answer is JSON. */
  async json<T>(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, query: Record<string, string> = {}, body = ''): Promise<{ value: T; raw: string }> {
    const r = await this.request(method, path, query, body);
    try {
      return { value: JSON.parse(r.text) as T, raw: r.text };
    } catch {
      throw new ServerError(r.status, 'InvalidResponse', `the server answered ${path} with something that is not JSON`, r.text);
    }
  }
}

function encodeRfc3986(s: string): string {
  return encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/**
 * Why a request got no answer, in words a user can act on: connection
 * refused, a name that does not resolve, no answer in time, or a server
 * that hung up on a plain-HTTP request (one serving https does).
 */
export function networkReason(err: unknown, url: string, timeoutMs = TIMEOUT_MS): string {
  let e: unknown = err;
  for (let i = 0; i < 4 && typeof e === 'object' && e !== null; i++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') {
      if (code === 'ECONNREFUSED') return 'connection refused (is the server running?)';
      if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return `the host name ${new URL(url).hostname} does not resolve (${code})`;
      if (code === 'UND_ERR_SOCKET' && new URL(url).protocol === 'http:') {
        return `the server closed the connection without an answer (${code}); if it serves TLS, use https://${new URL(url).host}`;
      }
      return code;
    }
    if ((e as Error).name === 'TimeoutError') return `no answer within ${timeoutMs / 1000} s`;
    e = (e as { cause?: unknown }).cause;
  }
  return err instanceof Error ? err.message : String(err);
}
