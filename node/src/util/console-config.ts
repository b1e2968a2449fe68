/**
 * The web console's settings (`SVC_CONSOLE_*`, `SVC_SERVER_URL`), parsed from
 * the environment into one frozen value that `loadConfig` carries as
 * `config.console`. Pure; problems are `InvalidConfig` naming the variable.
 */
import { SvcError } from './errors.ts';

export interface ConsoleConfig {
  /**
   * Path prefix the console is published under by a reverse proxy (e.g.
   * `/storage`), without a trailing slash; '' when served at the root. A
   * request's `X-Forwarded-Prefix` header takes precedence.
   */
  readonly basePath: string;
  /** A session ends after this long without a request (ms). */
  readonly sessionIdleMs: number;
  /** A session ends this long after sign-in whatever its activity (ms). */
  readonly sessionMaxMs: number;
  /**
   * The S3 API's public origin (`https://s3.example.com`), for the share links
   * the console signs; undefined: the host the browser reached the console
   * on, with the S3 listener's port.
   */
  readonly serverUrl: string | undefined;
  /** Raw capacity used (0..1) above which the console raises the capacity alert. */
  readonly capacityAlert: number;
}

export const CONSOLE_DEFAULTS = {
  sessionIdleMs: 30 * 60_000,
  sessionMaxMs: 12 * 3_600_000,
  capacityAlertPercent: 80,
} as const;

export const CONSOLE_VARIABLES: readonly (readonly [string, string])[] = [
  ['SVC_CONSOLE_BASE_PATH', 'path prefix a reverse proxy publishes the console under, e.g. /storage (X-Forwarded-Prefix overrides it per request)'],
  ['SVC_CONSOLE_SESSION_TIMEOUT', 'console sign-in ends after this long idle: seconds or 30s/15m/1h (default 30m; at most 12h after sign-in)'],
  ['SVC_CONSOLE_CAPACITY_ALERT', 'percent of raw capacity used that raises the console capacity alert (default 80)'],
  ['SVC_SERVER_URL', 'public URL of the S3 API (scheme://host[:port]); the console signs share links for it'],
];

function invalid(variable: string, message: string): SvcError {
  return new SvcError('InvalidConfig', `${variable}: ${message}`, { variable });
}

/**
 * Characters a prefix may hold: unreserved characters, percent escapes and
 * `/`. Narrower than a URL path allows on purpose: the prefix goes into the
 * session cookie's `Path`, where `;` or `,` would add attributes.
 */
const PATH_CHARS = /^[A-Za-z0-9\-._~%/]*$/;

/**
 * A path prefix as `SVC_CONSOLE_BASE_PATH` or `X-Forwarded-Prefix` gives it:
 * `/a/b`, `a/b/` and `/a/b/` all mean `/a/b`; `/` and '' mean none. Returns
 * undefined for anything that is not a plain absolute path (`..` segments,
 * `//`, query or fragment characters, control characters).
 */
export function normalizePathPrefix(raw: string): string | undefined {
  const s = raw.trim();
  if (s === '' || s === '/') return '';
  if (!PATH_CHARS.test(s) || s.length > 256 || s.startsWith('//')) return undefined;
  const p = `/${s.replace(/^\//, '').replace(/\/+$/, '')}`;
  if (p.includes('//') || p.split('/').some((seg) => seg === '.' || seg === '..')) return undefined;
  return p;
}

function parseSeconds(variable: string, v: string): number {
  const m = /^([0-9]+)(s|m|h)?$/.exec(v.trim());
  if (!m || Number(m[1]) === 0) throw invalid(variable, `invalid duration "${v}"; expected seconds or a value like 90s, 15m, 1h`);
  return Number(m[1]) * { s: 1000, m: 60_000, h: 3_600_000 }[(m[2] ?? 's') as 's' | 'm' | 'h'];
}

export function parseConsoleConfig(env: Readonly<Record<string, string | undefined>>): ConsoleConfig {
  const rawBase = env.SVC_CONSOLE_BASE_PATH ?? '';
  const basePath = normalizePathPrefix(rawBase);
  if (basePath === undefined) throw invalid('SVC_CONSOLE_BASE_PATH', `"${rawBase}" is not a path prefix; expected something like /storage`);

  const rawIdle = env.SVC_CONSOLE_SESSION_TIMEOUT?.trim() ?? '';
  const sessionIdleMs = rawIdle === '' ? CONSOLE_DEFAULTS.sessionIdleMs : parseSeconds('SVC_CONSOLE_SESSION_TIMEOUT', rawIdle);
  if (sessionIdleMs > CONSOLE_DEFAULTS.sessionMaxMs) throw invalid('SVC_CONSOLE_SESSION_TIMEOUT', 'at most 12h');

  const rawCap = env.SVC_CONSOLE_CAPACITY_ALERT?.trim().replace(/%$/, '') ?? '';
  let capacityAlert = CONSOLE_DEFAULTS.capacityAlertPercent / 100;
  if (rawCap !== '') {
    const n = Number(rawCap);
    if (!/^[0-9]+(\.[0-9]+)?$/.test(rawCap) || n <= 0 || n > 100) throw invalid('SVC_CONSOLE_CAPACITY_ALERT', `invalid percentage "${rawCap}"; expected a number in 1..100`);
    capacityAlert = n / 100;
  }

  const rawUrl = env.SVC_SERVER_URL?.trim() ?? '';
  let serverUrl: string | undefined;
  if (rawUrl !== '') {
    let u: URL;
    try {
      u = new URL(rawUrl);
    } catch {
      throw invalid('SVC_SERVER_URL', `"${rawUrl}" is not a URL; expected scheme://host[:port]`);
    }
    if ((u.protocol !== 'http:' && u.protocol !== 'https:') || u.username !== '' || u.password !== '' || u.search !== '' || u.hash !== '') {
      throw invalid('SVC_SERVER_URL', `"${rawUrl}" must be http(s)://host[:port] without credentials, query or fragment`);
    }
    // SigV4 signs the path; S3 behind a path-rewriting proxy would never match, so only an origin is accepted.
    if (u.pathname !== '/') throw invalid('SVC_SERVER_URL', `"${rawUrl}" has a path; S3 must be published at the root of its host`);
    serverUrl = u.origin;
  }
  return Object.freeze({ basePath, sessionIdleMs, sessionMaxMs: CONSOLE_DEFAULTS.sessionMaxMs, serverUrl, capacityAlert });
}
