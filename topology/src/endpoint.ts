/**
 * Drive endpoints: a local path (`/mnt/d1`, `./data/d1`) or a URL
 * (`http://host:9000/mnt/d1`). Pure: relative paths are resolved against a
 * caller-supplied cwd; locality is decided from caller-supplied host names.
 */
import { isAbsolute, posix, resolve } from 'node:path';
import { TopologyError } from './errors.ts';

export interface PathEndpoint {
  readonly kind: 'path';
  /** The text after ellipsis expansion, as typed. */
  readonly raw: string;
  /** Absolute, normalised path. */
  readonly path: string;
}

export interface UrlEndpoint {
  readonly kind: 'url';
  readonly raw: string;
  readonly scheme: 'http' | 'https';
  /** Lower-cased host name or IP, IPv6 without brackets. */
  readonly host: string;
  readonly port: number;
  /** Absolute, normalised drive path on that host. */
  readonly path: string;
}

export type Endpoint = PathEndpoint | UrlEndpoint;

function bad(raw: string, why: string): TopologyError {
  return new TopologyError('InvalidTopology', `invalid endpoint "${raw}": ${why}`, { endpoint: raw });
}

/** Parses one expanded endpoint string. */
export function parseEndpoint(raw: string, cwd: string): Endpoint {
  if (raw.length === 0) throw bad(raw, 'empty endpoint');
  if (/^[a-zA-Z][a-zA-Z0-9+.-]*:\/\//.test(raw)) {
    let u: URL;
    try {
      u = new URL(raw);
    } catch {
      throw bad(raw, 'not a valid URL');
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw bad(raw, 'scheme must be http or https');
    if (u.username || u.password) throw bad(raw, 'credentials are not allowed in endpoints');
    if (u.search || u.hash) throw bad(raw, 'query and fragment are not allowed in endpoints');
    if (!u.hostname) throw bad(raw, 'missing host');
    const path = posix.normalize(decodeURIComponent(u.pathname));
    if (path === '/' || path === '') throw bad(raw, 'a URL endpoint needs a drive path, e.g. http://host:9000/mnt/d1');
    const scheme = u.protocol === 'https:' ? 'https' : 'http';
    const port = u.port ? Number(u.port) : scheme === 'https' ? 443 : 80;
    const host = u.hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1');
    return { kind: 'url', raw, scheme, host, port, path: path.length > 1 ? path.replace(/\/+$/, '') : path };
  }
  if (raw.includes('://')) throw bad(raw, 'malformed URL');
  const path = isAbsolute(raw) ? resolve(raw) : resolve(cwd, raw);
  if (path === '/') throw bad(raw, 'the filesystem root cannot be a drive');
  return { kind: 'path', raw, path };
}

/** Identity used for duplicate detection. */
export function endpointKey(ep: Endpoint): string {
  return ep.kind === 'path' ? ep.path : `${ep.host}:${ep.port}${ep.path}`;
}

/** `host:port` of a URL endpoint (IPv6 bracketed), undefined for paths. */
export function endpointHostPort(ep: Endpoint): string | undefined {
  if (ep.kind === 'path') return undefined;
  return ep.host.includes(':') ? `[${ep.host}]:${ep.port}` : `${ep.host}:${ep.port}`;
}

/**
 * True when `ep` is served by this node: a path always is; a URL is when its
 * host is one of `localHosts` (names and IPs of this machine, compared
 * lower-cased, IPv6 without brackets) and its port is the listen port.
 */
export function isLocalEndpoint(ep: Endpoint, localHosts: ReadonlySet<string>, listenPort: number): boolean {
  if (ep.kind === 'path') return true;
  return ep.port === listenPort && localHosts.has(ep.host);
}

/** Normalises host names the way `parseEndpoint` does, for building `localHosts`. */
export function normaliseHost(host: string): string {
  return host.toLowerCase().replace(/^\[(.*)\]$/, '$1');
}
