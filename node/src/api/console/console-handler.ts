/**
 * The console listener (default :9001, SPEC "Listeners"): the console's
 * health path, its pages and its API, under `/svc/console/`.
 *
 *   /svc/console/health        GET/HEAD, no session (the console's probe)
 *   /, /svc/console            redirect (relative) to /svc/console/
 *   /svc/console/              the page shell (static; shows sign-in without a session)
 *   /svc/console/assets/<id>/  scripts, styles, icons (immutable, strict CSP)
 *   /svc/console/api/session   POST sign in, GET who am I, DELETE sign out
 *   /svc/console/api/sso       GET, no session: the other ways to sign in (an OpenID provider, an LDAP server configured)
 *   /svc/console/sso/start     GET: to the OpenID provider (authorization code + PKCE, `sso.ts`)
 *   /svc/console/sso/callback  GET: back from it; a session with STS credentials
 *   /svc/console/api/...       `api-routes.ts`, each behind a session
 *
 * Behind a reverse proxy the console lives under a path prefix: a proxy
 * that strips it says so with `X-Forwarded-Prefix`, one that forwards it
 * unchanged needs `SVC_CONSOLE_BASE_PATH`. Pages use relative URLs only; the
 * prefix sets the session cookie's path.
 *
 * Guards, in order, before any API handler runs: a session cookie naming a
 * live session (401 otherwise, nothing called); for POST, PUT and DELETE a
 * same-origin request (`Sec-Fetch-Site`/`Origin`) carrying the session's
 * CSRF token in `x-csrf-token` (403 otherwise). The session's keys sign the
 * node's S3 and admin calls (`upstream.ts`); the browser never has them.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CertificateStore } from '../../tls/cert-store.ts';
import type { Clock } from '../../util/clock.ts';
import type { ConsoleConfig } from '../../util/console-config.ts';
import { SvcError } from '../../util/errors.ts';
import type { Logger } from '../../util/logger.ts';
import type { HealthSource } from '../health/health-handler.ts';
import { requestOrigin } from '../request-origin.ts';
import { safeDecode } from '../s3/headers.ts';
import { Observations } from './alerts.ts';
import { API_ROUTES, type ConsoleApiDeps, matchApiRoute, STREAMED } from './api-routes.ts';
import { type ConsoleAssets, loadConsoleAssets, PAGE_CSP, SECURITY_HEADERS, serveAsset } from './assets.ts';
import { toConsoleError } from './console-errors.ts';
import { parseCookies, serializeCookie } from './cookies.ts';
import { LoginLimiter } from './login-limiter.ts';
import { CONSOLE_ROOT, type ConsoleRequestInfo, cookiePath, requestInfo, sameSiteRequest } from './request-context.ts';
import { csrfMatches, type Session, SessionStore } from './sessions.ts';
import { sessionInfo, signIn, type SignInDeps } from './sign-in.ts';
import { type ConsoleOpenId, SSO_COOKIE, SSO_TTL_MS, ssoFinish, ssoStart } from './sso.ts';
import { Upstream } from './upstream.ts';
import type { SignInOptions } from './wire.ts';
import { ZipTickets } from './zip.ts';
import { closeAfterLinger } from '../../util/lingering-close.ts';

export const SESSION_COOKIE = 'svc_console';
export const CSRF_HEADER = 'x-csrf-token';
/** Set by a page on its own periodic refreshes: not activity, the idle timeout keeps running. */
export const BACKGROUND_HEADER = 'x-svc-console-background';

export interface ConsoleOptions {
  readonly health: HealthSource;
  readonly config: ConsoleConfig;
  /** Region the node's APIs verify signatures for. */
  readonly region: string;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly version: string;
  /** The S3 listener's bound address (undefined until it listens). */
  readonly s3Address: () => AddressInfo | undefined;
  /** The node's certificates when its S3 listener serves TLS (the console then calls it over TLS). */
  readonly s3Tls?: CertificateStore;
  /** The built pages (default: `node/build/console`). */
  readonly assets?: ConsoleAssets;
  /** The OpenID provider for "Sign in with SSO" (undefined: none configured, no button). */
  readonly openId?: () => ConsoleOpenId | undefined;
  /** Whether an LDAP server is configured (and enabled): the sign-in page then offers LDAP accounts. */
  readonly ldap?: () => boolean;
}

export interface ConsoleApp {
  readonly handle: (req: IncomingMessage, res: ServerResponse) => void;
  /** This node's readiness changed (feeds the readiness alert). */
  readinessChanged(ready: boolean): void;
  close(): Promise<void>;
}

const API_PREFIX = `${CONSOLE_ROOT}/api/`;
/** Failed sign-ins from one address, whatever the keys, in 10 minutes (10 per access key). */
export const ADDRESS_SIGN_IN_LIMIT = 50;
const MUTATING = new Set(['POST', 'PUT', 'DELETE']);

function sendJson(req: IncomingMessage, res: ServerResponse, status: number, body: unknown, extra: Record<string, string | string[]> = {}): void {
  const text = body === undefined ? '' : JSON.stringify(body);
  res.writeHead(status, {
    ...SECURITY_HEADERS,
    'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
    'cache-control': 'no-store',
    ...(body === undefined ? {} : { 'content-type': 'application/json; charset=utf-8' }),
    'content-length': String(Buffer.byteLength(text)),
    ...extra,
  });
  res.end(req.method === 'HEAD' ? undefined : text);
}

function sendText(req: IncomingMessage, res: ServerResponse, status: number, text: string, extra: Record<string, string> = {}): void {
  res.writeHead(status, { ...SECURITY_HEADERS, 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store', 'content-length': String(Buffer.byteLength(text)), ...extra });
  res.end(req.method === 'HEAD' ? undefined : text);
}

export function createConsoleApp(o: ConsoleOptions): ConsoleApp {
  const { config, clock, logger: log } = o;
  const assets = o.assets ?? loadConsoleAssets();
  if (assets.problem !== undefined) log.warn({ event: 'console_assets_missing' }, assets.problem);
  const upstream = new Upstream({ address: o.s3Address, region: o.region, clock, ...(o.s3Tls ? { tls: o.s3Tls } : {}) });
  const sessions = new SessionStore({ clock, idleMs: config.sessionIdleMs, maxMs: config.sessionMaxMs });
  const limiter = new LoginLimiter({ clock, maxByPrefix: { 'address:': ADDRESS_SIGN_IN_LIMIT } });
  const initial = o.health.report('ready').ready;
  const observations = new Observations(clock.now(), initial);
  const apiDeps: ConsoleApiDeps = {
    upstream,
    health: o.health,
    observations,
    config,
    clock,
    logger: log,
    version: o.version,
    s3Port: () => o.s3Address()?.port,
    s3Tls: o.s3Tls !== undefined,
    zipTickets: new ZipTickets(clock),
    certificates: () => (o.s3Tls === undefined ? undefined : { list: o.s3Tls.certificates(), warnBeforeMs: o.s3Tls.warnBeforeMs }),
  };
  const signInDeps: SignInDeps = { upstream, sessions, limiter, logger: log, version: o.version, idleMs: config.sessionIdleMs };

  const cookie = (info: ConsoleRequestInfo, value: string, maxAgeMs: number) =>
    serializeCookie(SESSION_COOKIE, value, { path: cookiePath(info), maxAge: maxAgeMs / 1000, secure: info.secure });

  const fail = (req: IncomingMessage, res: ServerResponse, err: unknown, extra: Record<string, string | string[]> = {}) => {
    const e = toConsoleError(err);
    if (e.status >= 500) log.warn({ event: 'console_api_error', path: (req.url ?? '').split('?')[0], code: e.body.code, err: e.body.message }, 'console API call failed');
    if (res.headersSent) {
      res.destroy();
      return;
    }
    // a refused upload is not read: close the connection (lingering, so the browser gets the answer) rather than drain it
    const big = Number(req.headers['content-length'] ?? 0) > 1024 * 1024 && !req.readableEnded;
    if (big) closeAfterLinger(req, res);
    sendJson(req, res, e.status, e.body, { ...extra, ...(e.retryAfter !== undefined ? { 'retry-after': e.retryAfter } : {}) });
  };

  /** The session named by the cookie, or the reason there is none (with the cookie to clear). */
  const authenticate = (req: IncomingMessage): { session: Session; token: string } | { error: SvcError; clear: boolean } => {
    const token = parseCookies(req.headers.cookie).get(SESSION_COOKIE);
    if (token === undefined || token === '') return { error: new SvcError('XSvcConsoleSignInRequired'), clear: false };
    const session = sessions.get(token, !(req.method === 'GET' && req.headers[BACKGROUND_HEADER] === '1'));
    if (session === undefined) return { error: new SvcError('XSvcConsoleSessionExpired'), clear: true };
    return { session, token };
  };

  const handleSession = async (req: IncomingMessage, res: ServerResponse, info: ConsoleRequestInfo) => {
    if (req.method === 'POST') {
      if (!sameSiteRequest(req.headers, info)) throw new SvcError('XSvcConsoleCrossSiteRequest');
      const { token, session } = await signIn(signInDeps, req);
      sendJson(req, res, 200, sessionInfo(signInDeps, session), { 'set-cookie': cookie(info, token, config.sessionMaxMs) });
      return;
    }
    const auth = authenticate(req);
    if (req.method === 'GET') {
      if ('error' in auth) {
        fail(req, res, auth.error, auth.clear ? { 'set-cookie': cookie(info, '', 0) } : {});
        return;
      }
      sendJson(req, res, 200, sessionInfo(signInDeps, auth.session));
      return;
    }
    if (req.method === 'DELETE') {
      if ('error' in auth) {
        // signing out without a session: nothing to end
        sendJson(req, res, 204, undefined, { 'set-cookie': cookie(info, '', 0) });
        return;
      }
      if (!sameSiteRequest(req.headers, info) || !csrfMatches(auth.session, req.headers[CSRF_HEADER] as string | undefined)) throw new SvcError('XSvcConsoleCrossSiteRequest');
      sessions.end(auth.token);
      log.info({ event: 'console_signout', accessKey: auth.session.credentials.accessKey }, 'console sign-out');
      sendJson(req, res, 204, undefined, { 'set-cookie': cookie(info, '', 0) });
      return;
    }
    sendJson(req, res, 405, { code: 'MethodNotAllowed', message: 'api/session takes GET, POST or DELETE', action: 'Reload the page.' }, { allow: 'GET, POST, DELETE' });
  };

  const ssoCookie = (info: ConsoleRequestInfo, value: string, maxAgeMs: number) =>
    serializeCookie(SSO_COOKIE, value, { path: cookiePath(info), maxAge: maxAgeMs / 1000, secure: info.secure, sameSite: 'Lax' });

  /** sso/start and sso/callback: redirects both ways; a failure returns to the sign-in page with its reason. */
  const handleSso = async (req: IncomingMessage, res: ServerResponse, info: ConsoleRequestInfo, step: 'start' | 'callback') => {
    const redirect = (location: string, cookies: string[]) => {
      res.writeHead(302, { ...SECURITY_HEADERS, location, 'set-cookie': cookies, 'cache-control': 'no-store', 'content-length': '0' });
      res.end();
    };
    try {
      const cfg = o.openId?.();
      if (cfg === undefined) throw new SvcError('XSvcStsNotConfigured', 'single sign-on is not configured: no OpenID provider (svc admin idp openid add)');
      if (step === 'start') {
        const s = await ssoStart(cfg, info, clock.now());
        redirect(s.location, [ssoCookie(info, s.cookie, SSO_TTL_MS)]);
        return;
      }
      const done = await ssoFinish(signInDeps, cfg, info, new URLSearchParams(info.query), parseCookies(req.headers.cookie).get(SSO_COOKIE), clock.now());
      log.info({ event: 'console_signin', accessKey: done.session.credentials.accessKey, subject: done.subject, address: requestOrigin(req).sourceIp, admin: done.session.admin, sso: true }, 'console sign-in (single sign-on)');
      redirect('../', [ssoCookie(info, '', 0), cookie(info, done.token, config.sessionMaxMs)]);
    } catch (err) {
      const e = toConsoleError(err);
      log.warn({ event: 'console_signin_failed', sso: true, code: e.body.code, err: e.body.message }, 'console single sign-on failed');
      redirect(`../?sso_error=${encodeURIComponent(e.body.message)}`, [ssoCookie(info, '', 0)]);
    }
  };

  const handleApi = async (req: IncomingMessage, res: ServerResponse, info: ConsoleRequestInfo) => {
    const segments = info.path.slice(API_PREFIX.length).split('/').map(safeDecode);
    if (segments.length === 1 && segments[0] === 'session') {
      await handleSession(req, res, info);
      return;
    }
    if (segments.length === 1 && segments[0] === 'sso' && req.method === 'GET') {
      const cfg = o.openId?.();
      const options: SignInOptions = { enabled: cfg !== undefined, ...(cfg?.displayName ? { name: cfg.displayName } : {}), ldap: o.ldap?.() ?? false };
      sendJson(req, res, 200, options);
      return;
    }
    const m = matchApiRoute(req.method ?? 'GET', segments);
    if (m === undefined) throw new SvcError('XSvcConsoleNoSuchRoute', `no console API route at api/${segments.join('/')}`);
    if ('allowed' in m) {
      sendJson(req, res, 405, { code: 'MethodNotAllowed', message: `this route takes ${m.allowed.join(' or ')}`, action: 'Reload the page.' }, { allow: m.allowed.join(', ') });
      return;
    }
    let session: Session | undefined;
    if (m.route.auth === 'session') {
      const auth = authenticate(req);
      if ('error' in auth) {
        fail(req, res, auth.error, auth.clear ? { 'set-cookie': cookie(info, '', 0) } : {});
        return;
      }
      session = auth.session;
      if (MUTATING.has(m.route.method) && (!sameSiteRequest(req.headers, info) || !csrfMatches(session, req.headers[CSRF_HEADER] as string | undefined))) {
        throw new SvcError('XSvcConsoleCrossSiteRequest');
      }
    }
    const result = await m.route.handler({ req, res, params: m.params, query: new URLSearchParams(info.query), session, deps: apiDeps, secure: info.secure, host: info.host });
    if (result === STREAMED) return;
    sendJson(req, res, result === undefined ? 204 : 200, result);
  };

  const handleShell = (req: IncomingMessage, res: ServerResponse) => {
    const shell = assets.get('index.html');
    if (shell === undefined) {
      sendText(req, res, 503, `svc console: ${assets.problem ?? 'the page shell is missing from the build'}\n`, { 'retry-after': '60' });
      return;
    }
    serveAsset(req, res, shell, 'no-cache', { 'content-security-policy': PAGE_CSP });
  };

  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const info = requestInfo(req.url ?? '/', requestOrigin(req), config.basePath);
    const path = info.path;
    const isApi = path.startsWith(API_PREFIX);
    if (!isApi && req.method !== 'GET' && req.method !== 'HEAD') {
      sendJson(req, res, 405, { code: 'MethodNotAllowed', message: 'console pages take GET and HEAD', action: 'Use the console in a browser.' }, { allow: 'GET, HEAD' });
      return;
    }
    if (path === `${CONSOLE_ROOT}/health`) {
      sendJson(req, res, 200, { status: 'ok' });
      return;
    }
    if (path === '/' || path === CONSOLE_ROOT) {
      // relative, so it lands under whatever prefix the browser used
      res.writeHead(302, { location: path === '/' ? 'svc/console/' : 'console/', 'content-length': '0', 'cache-control': 'no-store' });
      res.end();
      return;
    }
    if (path === `${CONSOLE_ROOT}/` || path === `${CONSOLE_ROOT}/index.html`) {
      handleShell(req, res);
      return;
    }
    if (path.startsWith(`${CONSOLE_ROOT}/assets/`)) {
      const a = assets.get(path.slice(CONSOLE_ROOT.length + 1));
      if (a === undefined) sendText(req, res, 404, 'no such console asset (the console was updated: reload the page)\n');
      else serveAsset(req, res, a, 'public, max-age=31536000, immutable', a.type.startsWith('text/html') ? { 'content-security-policy': PAGE_CSP } : {});
      return;
    }
    if (path === `${CONSOLE_ROOT}/sso/start` || path === `${CONSOLE_ROOT}/sso/callback`) {
      handleSso(req, res, info, path.endsWith('/start') ? 'start' : 'callback').catch((err: unknown) => fail(req, res, err));
      return;
    }
    if (!isApi) {
      sendText(req, res, 404, `no console page at ${path}; the console is at ${info.prefix}${CONSOLE_ROOT}/\n`);
      return;
    }
    handleApi(req, res, info).catch((err: unknown) => fail(req, res, err));
  };

  return {
    handle,
    readinessChanged: (ready) => observations.readiness(ready, clock.now()),
    close: () => upstream.close(),
  };
}

/** The API routes, for tests and docs (sign-in/out at `api/session` besides). */
export { API_ROUTES };
