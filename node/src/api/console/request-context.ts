/**
 * Where a console request really came from, behind whatever proxy: the
 * public path prefix (`X-Forwarded-Prefix`, else `SVC_CONSOLE_BASE_PATH`),
 * the console path inside it, whether the browser used HTTPS, and whether a
 * state-changing request came from the console's own page (`Sec-Fetch-Site`,
 * else `Origin` against the forwarded or direct host). The forwarded facts
 * come from `requestOrigin` (`../request-origin.ts`), which reads
 * `X-Forwarded-*` only from trusted proxies. Pure.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { normalizePathPrefix } from '../../util/console-config.ts';
import type { RequestOrigin } from '../request-origin.ts';

export const CONSOLE_ROOT = '/svc/console';

export interface ConsoleRequestInfo {
  /** The path inside the console's public root, e.g. `/svc/console/api/session`. */
  readonly path: string;
  /** Raw query string, without `?`. */
  readonly query: string;
  /** Public prefix the browser sees before `/svc/console` ('' when none). */
  readonly prefix: string;
  /** The browser reached the console over HTTPS. */
  readonly secure: boolean;
  /** The host the browser used (forwarded host first). */
  readonly host: string;
}

function first(h: IncomingHttpHeaders, name: string): string | undefined {
  const v = h[name];
  const s = Array.isArray(v) ? v[0] : v;
  return s?.split(',')[0]?.trim() || undefined;
}

export function requestInfo(url: string, origin: Pick<RequestOrigin, 'secure' | 'host' | 'prefix'>, basePath: string): ConsoleRequestInfo {
  const q = url.indexOf('?');
  let path = q < 0 ? url : url.slice(0, q);
  const query = q < 0 ? '' : url.slice(q + 1);
  // a proxy that forwards the prefix unchanged (no rewrite): strip the configured one
  if (basePath !== '' && (path === basePath || path.startsWith(`${basePath}/`))) path = path.slice(basePath.length) || '/';
  const normalized = origin.prefix === undefined ? undefined : normalizePathPrefix(origin.prefix);
  return { path, query, prefix: normalized ?? basePath, secure: origin.secure, host: origin.host };
}

/** The cookie path: the console's public root. */
export function cookiePath(info: ConsoleRequestInfo): string {
  return `${info.prefix}${CONSOLE_ROOT}/`;
}

/**
 * True when a state-changing request came from a page of the console's own
 * origin. Browsers send `Sec-Fetch-Site` (which a page cannot forge) and it
 * decides; without it, an `Origin` must name the host the request reached;
 * a request with neither is not from a browser page (tools, tests) and is
 * left to the CSRF token.
 */
export function sameSiteRequest(headers: IncomingHttpHeaders, info: ConsoleRequestInfo): boolean {
  const site = first(headers, 'sec-fetch-site');
  if (site !== undefined) return site === 'same-origin';
  const origin = first(headers, 'origin');
  if (origin === undefined) return true;
  let o: URL;
  try {
    o = new URL(origin);
  } catch {
    return false;
  }
  const hosts = new Set([info.host.toLowerCase(), (first(headers, 'host') ?? '').toLowerCase()]);
  return hosts.has(o.host.toLowerCase());
}
