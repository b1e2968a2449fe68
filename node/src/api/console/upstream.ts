/**
 * The console's way into the node: SigV4-signed HTTP requests (service `s3`,
 * `@smithy/signature-v4`) to this node's own S3 listener, made with the
 * signed-in user's keys, which never leave the server. The console is thus
 * an ordinary client of the S3 and admin APIs: every call goes through the
 * same authentication, authorization, readiness gate and leader forwarding as
 * any other client's, and an IAM user sees exactly what their policies allow.
 *
 * Bodies stream both ways (uploads are sent `UNSIGNED-PAYLOAD`, as browsers'
 * SDKs do); small documents are signed with their SHA-256. One keep-alive
 * undici pool to the loopback listener: over TLS when the node serves TLS,
 * verified against the node's CA set and accepted only when the listener
 * presents one of the node's own certificates (it is reached on a loopback
 * address, which its certificate need not name).
 */
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { SignatureV4 } from '@smithy/signature-v4';
import type { PeerCertificate } from 'node:tls';
import { Pool } from 'undici';
import type { CertificateStore } from '../../tls/cert-store.ts';
import { tlsConnector } from '../../tls/trust.ts';
import type { Clock } from '../../util/clock.ts';
import { SvcError } from '../../util/errors.ts';
import { Sha256 } from '../../util/smithy-sha256.ts';
import { UNSIGNED_PAYLOAD } from '../s3/auth/sigv4.ts';
import { uriEncode } from '../s3/headers.ts';
import type { SessionCredentials } from './sessions.ts';

export interface UpstreamRequest {
  readonly method: 'GET' | 'HEAD' | 'PUT' | 'POST' | 'DELETE';
  /** Path, already percent-encoded (`encodePath`). */
  readonly path: string;
  readonly query?: Readonly<Record<string, string>>;
  readonly headers?: Readonly<Record<string, string>>;
  /** A string or Buffer is signed with its hash; a stream goes `UNSIGNED-PAYLOAD` (give `content-length`). */
  readonly body?: string | Buffer | Readable;
  readonly signal?: AbortSignal;
}

export interface UpstreamResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: Readable & { text(): Promise<string> };
}

export interface UpstreamOptions {
  /** The S3 listener's bound address (undefined until it listens). */
  readonly address: () => { readonly address: string; readonly port: number } | undefined;
  readonly region: string;
  readonly clock: Clock;
  /** The node's certificates when its S3 listener serves TLS. */
  readonly tls?: CertificateStore;
}

/** `/bucket/key/with spaces` → each segment RFC 3986-encoded, slashes kept. */
export function encodePath(...segments: string[]): string {
  return `/${segments.map((s) => uriEncode(s, true)).join('/')}`;
}

/**
 * Where to connect for a listener bound to `address`: an any-address bind
 * (`:9000` listens on `::`, dual-stack) is reached on IPv4 loopback, which
 * exists even where IPv6 is disabled; a specific address as it is.
 */
export function connectHost(address: string): string {
  if (address === '' || address === '0.0.0.0' || address === '::' || address === '::0') return '127.0.0.1';
  return address.includes(':') ? `[${address}]` : address;
}

function header(h: UpstreamResponse['headers'], name: string): string | undefined {
  const v = h[name];
  return Array.isArray(v) ? v[0] : v;
}
export { header as upstreamHeader };

export class Upstream {
  readonly #o: UpstreamOptions;
  #pool: { origin: string; pool: Pool } | undefined;

  constructor(o: UpstreamOptions) {
    this.#o = o;
  }

  get region(): string {
    return this.#o.region;
  }

  /** `host:port` the console connects to and signs for. */
  #target(): { origin: string; host: string } {
    const a = this.#o.address();
    if (a === undefined) throw new SvcError('ServiceUnavailable', 'the S3 listener is not up yet; retry in a moment');
    const host = `${connectHost(a.address)}:${a.port}`;
    return { origin: `${this.#o.tls ? 'https' : 'http'}://${host}`, host };
  }

  #dispatcher(origin: string): Pool {
    if (this.#pool?.origin !== origin) {
      void this.#pool?.pool.close();
      const store = this.#o.tls;
      // Chain verified against the node's CA set; identity = one of the node's own certificates.
      const connect = store
        ? tlsConnector(store.trust, { timeout: 10_000 }, () => ({
            checkServerIdentity: (_host: string, cert: PeerCertificate) =>
              store.isOwnCertificate(cert.fingerprint256) ? undefined : new Error(`the S3 listener presented a certificate (${cert.fingerprint256}) that is not one of this node's`),
          }))
        : undefined;
      this.#pool = {
        origin,
        pool: new Pool(origin, { connections: 32, keepAliveTimeout: 10_000, headersTimeout: 120_000, bodyTimeout: 120_000, ...(connect ? { connect } : {}) }),
      };
    }
    return this.#pool.pool;
  }

  #signer(cred: SessionCredentials): SignatureV4 {
    return new SignatureV4({
      credentials: { accessKeyId: cred.accessKey, secretAccessKey: cred.secretKey, ...(cred.sessionToken !== undefined ? { sessionToken: cred.sessionToken } : {}) },
      region: this.#o.region,
      service: 's3',
      sha256: Sha256,
      uriEscapePath: false,
      applyChecksum: false,
    });
  }

  async request(cred: SessionCredentials, r: UpstreamRequest): Promise<UpstreamResponse> {
    const { origin, host } = this.#target();
    const body = r.body;
    const buffered = typeof body === 'string' || Buffer.isBuffer(body);
    const payloadHash = body === undefined ? createHash('sha256').digest('hex') : buffered ? createHash('sha256').update(body).digest('hex') : UNSIGNED_PAYLOAD;
    const headers: Record<string, string> = { ...r.headers, host, 'x-amz-content-sha256': payloadHash };
    if (buffered) headers['content-length'] = String(Buffer.byteLength(body));
    const signed = await this.#signer(cred).sign(
      { method: r.method, protocol: this.#o.tls ? 'https:' : 'http:', hostname: host, path: r.path, query: { ...r.query }, headers },
      { signingDate: new Date(this.#o.clock.now()) },
    );
    const qs = Object.entries(r.query ?? {})
      .map(([k, v]) => `${uriEncode(k, false)}=${uriEncode(v, false)}`)
      .join('&');
    const res = await this.#dispatcher(origin).request({
      method: r.method,
      path: qs === '' ? r.path : `${r.path}?${qs}`,
      headers: signed.headers as Record<string, string>,
      ...(body !== undefined ? { body } : {}),
      ...(r.signal ? { signal: r.signal } : {}),
    });
    return { status: res.statusCode, headers: res.headers, body: res.body };
  }

  /** An unsigned form POST to the node's S3 listener (STS calls that carry their own proof, such as a web identity token). */
  async unsignedForm(form: Readonly<Record<string, string>>): Promise<{ status: number; text: string }> {
    const { origin, host } = this.#target();
    const body = new URLSearchParams(form).toString();
    const res = await this.#dispatcher(origin).request({ method: 'POST', path: '/', headers: { host, 'content-type': 'application/x-www-form-urlencoded', 'content-length': String(Buffer.byteLength(body)) }, body });
    return { status: res.statusCode, text: await res.body.text() };
  }

  /**
   * A presigned GET URL for `origin` (the S3 API as the link's users reach
   * it), valid `expiresIn` seconds.
   */
  async presign(cred: SessionCredentials, origin: string, path: string, query: Readonly<Record<string, string>>, expiresIn: number): Promise<string> {
    const u = new URL(origin);
    const signed = await this.#signer(cred).presign(
      // a presigned GET signs no payload: the hash is UNSIGNED-PAYLOAD (as S3 assumes), neither sent nor signed as a header
      { method: 'GET', protocol: u.protocol, hostname: u.hostname, ...(u.port !== '' ? { port: Number(u.port) } : {}), path, query: { ...query }, headers: { host: u.host, 'x-amz-content-sha256': UNSIGNED_PAYLOAD } },
      { expiresIn, signingDate: new Date(this.#o.clock.now()), unhoistableHeaders: new Set(['x-amz-content-sha256']), unsignableHeaders: new Set(['x-amz-content-sha256']) },
    );
    const qs = Object.entries(signed.query ?? {})
      .flatMap(([k, v]) => (v === null || v === undefined ? [] : (Array.isArray(v) ? v : [v]).map((x) => `${uriEncode(k, false)}=${uriEncode(String(x), false)}`)))
      .join('&');
    return `${u.origin}${path}?${qs}`;
  }

  async close(): Promise<void> {
    await this.#pool?.pool.close();
    this.#pool = undefined;
  }
}
