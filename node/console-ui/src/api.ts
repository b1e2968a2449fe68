/**
 * Calls of the console API (`api/...`, relative to the page, so they work
 * under any path prefix). The session cookie goes along by itself (HttpOnly:
 * this code never sees it); calls that change something carry the CSRF
 * token the session handed out. A 401 anywhere means the session ended: the
 * page goes back to signing in.
 */
import type { ConsoleErrorBody } from '../../src/api/console/wire.ts';

export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly status: number;
  readonly code: string;
  /** What the user can do about it. */
  readonly action: string;
  readonly retryAfterSeconds: number | undefined;
  constructor(status: number, code: string, message: string, action: string, retryAfterSeconds?: number) {
    super(message);
    this.status = status;
    this.code = code;
    this.action = action;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

let csrfToken = '';

export function setCsrfToken(token: string): void {
  csrfToken = token;
}

export function csrfHeader(): Record<string, string> {
  return { 'x-csrf-token': csrfToken };
}

/** `api/<path>?<query>` relative to the page. */
export function apiUrl(path: string, query: Record<string, string | number | undefined> = {}): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') q.set(k, String(v));
  const s = q.toString();
  return `api/${path}${s ? `?${s}` : ''}`;
}

/** Fired when the server says the session is gone. */
export const SIGNED_OUT_EVENT = 'svc:signed-out';

/** The error an answer carries (the console's `{code, message, action}`). */
export function errorFromBody(status: number, text: string, retryAfter: string | null): ApiError {
  let body: Partial<ConsoleErrorBody> = {};
  try {
    body = JSON.parse(text) as Partial<ConsoleErrorBody>;
  } catch {
    // a proxy's error page
  }
  const retry = retryAfter !== null && /^[0-9]+$/.test(retryAfter) ? Number(retryAfter) : undefined;
  return new ApiError(
    status,
    body.code ?? `HTTP${status}`,
    body.message ?? (status === 502 || status === 504 ? 'The proxy in front of the console could not reach it.' : `The console answered ${status}.`),
    body.action ?? 'Retry; if it keeps failing, reload the page.',
    retry,
  );
}

export const NETWORK_ERROR = () => new ApiError(0, 'NetworkError', 'The console could not be reached.', 'Check your network connection and that the node is running, then retry.');

/** Marks a page's own periodic refresh: the server does not count it as activity of the session. */
export const BACKGROUND_HEADER = 'x-svc-console-background';

export async function api<T>(
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  path: string,
  body?: unknown,
  query: Record<string, string | number | undefined> = {},
  opts: { readonly background?: boolean } = {},
): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (opts.background === true) headers[BACKGROUND_HEADER] = '1';
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET') Object.assign(headers, csrfHeader());
  let res: Response;
  try {
    res = await fetch(apiUrl(path, query), { method, headers, credentials: 'same-origin', cache: 'no-store', ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  } catch {
    throw NETWORK_ERROR();
  }
  const text = await res.text();
  if (!res.ok) {
    const err = errorFromBody(res.status, text, res.headers.get('retry-after'));
    if (res.status === 401 && path !== 'session') window.dispatchEvent(new CustomEvent(SIGNED_OUT_EVENT, { detail: err }));
    throw err;
  }
  return (text === '' ? undefined : JSON.parse(text)) as T;
}
