/**
 * Where a request really came from: the one place every handler reads the
 * client's address, whether it used TLS, and the host and path prefix it
 * used (S3 `aws:SourceIp` / `aws:SecureTransport`, the console's `Secure`
 * cookie and public prefix, POST-object `Location`).
 *
 * `X-Forwarded-Proto`, `-For`, `-Host` and `-Prefix` are honoured only when
 * the connection comes from a trusted proxy (`SVC_TRUSTED_PROXIES`; none by
 * default): anyone else could write them. The listener (`server/listener.ts`)
 * tags each request with its trusted set; `requestOrigin(req)` resolves the
 * facts once per request. An untagged request (a handler mounted on a bare
 * test server) trusts no header.
 *
 * Rules (those of common reverse proxies and Express's `trust proxy`):
 * - client address: walk `X-Forwarded-For` from the right while the hop we
 *   stand on is trusted; the first untrusted address is the client (an entry
 *   that is not an IP stops the walk at the proxy that added it);
 * - proto, host, prefix: the first (left-most) value, from a trusted peer.
 */
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import { IpSet, plainIp } from '../util/ip-set.ts';

export interface RequestOrigin {
  /** The client's IP address (IPv4-mapped IPv6 written as IPv4). */
  readonly sourceIp: string;
  /** The client used TLS: to this node, or to a trusted proxy that says so. */
  readonly secure: boolean;
  /** The connection to this node itself is TLS. */
  readonly direct: { readonly ip: string; readonly secure: boolean };
  /** The connecting peer is a trusted proxy (its `X-Forwarded-*` headers were read). */
  readonly viaTrustedProxy: boolean;
  /** The host the client addressed (`X-Forwarded-Host` from a trusted proxy, else `Host`); '' when absent. */
  readonly host: string;
  /** `X-Forwarded-Prefix` from a trusted proxy, as sent; undefined otherwise. */
  readonly prefix: string | undefined;
}

const kTrusted = Symbol('svc.trustedProxies');
const kOrigin = Symbol('svc.requestOrigin');

type Tagged = IncomingMessage & { [kTrusted]?: IpSet; [kOrigin]?: RequestOrigin };

/** Called by the listener for every request: the proxies whose headers this request may carry. */
export function tagTrustedProxies(req: IncomingMessage, trusted: IpSet): void {
  if (!trusted.empty) (req as Tagged)[kTrusted] = trusted;
}

function headerValues(req: IncomingMessage, name: string): string[] {
  const v = req.headers[name];
  if (v === undefined) return [];
  return (Array.isArray(v) ? v : [v])
    .join(',')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

function first(req: IncomingMessage, name: string): string | undefined {
  return headerValues(req, name)[0];
}

/** Pure resolution of a request's origin against `trusted`. */
export function resolveOrigin(req: IncomingMessage, trusted: IpSet): RequestOrigin {
  const socket = req.socket as IncomingMessage['socket'] & { encrypted?: boolean };
  const directIp = plainIp(socket.remoteAddress ?? '');
  const directSecure = socket.encrypted === true;
  const hostHeader = typeof req.headers.host === 'string' ? req.headers.host : '';
  if (!trusted.has(directIp)) {
    return { sourceIp: directIp, secure: directSecure, direct: { ip: directIp, secure: directSecure }, viaTrustedProxy: false, host: hostHeader, prefix: undefined };
  }
  let client = directIp;
  const chain = headerValues(req, 'x-forwarded-for');
  for (let i = chain.length - 1; i >= 0 && trusted.has(client); i--) {
    const hop = plainIp(chain[i]!.replace(/^\[(.*)\](?::\d+)?$/, '$1'));
    if (isIP(hop) === 0) break;
    client = hop;
  }
  const proto = first(req, 'x-forwarded-proto')?.toLowerCase();
  return {
    sourceIp: client,
    secure: proto === 'https' ? true : proto === 'http' ? false : directSecure,
    direct: { ip: directIp, secure: directSecure },
    viaTrustedProxy: true,
    host: first(req, 'x-forwarded-host') ?? hostHeader,
    prefix: first(req, 'x-forwarded-prefix'),
  };
}

/** The request's origin (resolved once, then cached on the request). */
export function requestOrigin(req: IncomingMessage): RequestOrigin {
  const t = req as Tagged;
  let o = t[kOrigin];
  if (o === undefined) {
    o = resolveOrigin(req, t[kTrusted] ?? IpSet.EMPTY);
    t[kOrigin] = o;
  }
  return o;
}
