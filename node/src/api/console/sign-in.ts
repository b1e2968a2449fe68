/**
 * Signing in and out. The keys a user types are checked by calling the
 * node's admin API with them (`runtime/capabilities`, which answers in
 * degraded mode too): a signature the API accepts proves them, and its
 * answer says whether the user may read the cluster (`AccessDenied`: a
 * valid user without admin rights, who still gets the bucket pages). Wrong
 * keys count against the sign-in limiter; nothing else does.
 */
import type { IncomingMessage } from 'node:http';
import { SvcError } from '../../util/errors.ts';
import type { Logger } from '../../util/logger.ts';
import { requestOrigin } from '../request-origin.ts';
import { adminCalls } from './admin-calls.ts';
import { iamCalls } from './iam-calls.ts';
import { readJson } from './api-routes.ts';
import { UpstreamError } from './console-errors.ts';
import type { LoginLimiter } from './login-limiter.ts';
import type { Session, SessionCredentials, SessionStore } from './sessions.ts';
import type { Upstream } from './upstream.ts';
import type { SessionInfo, SignInRequest } from './wire.ts';

export interface SignInDeps {
  readonly upstream: Upstream;
  readonly sessions: SessionStore;
  readonly limiter: LoginLimiter;
  readonly logger: Logger;
  readonly version: string;
  readonly idleMs: number;
}

const BAD_KEYS = new Set(['InvalidAccessKeyId', 'SignatureDoesNotMatch']);

export function sessionInfo(deps: SignInDeps, s: Session): SessionInfo {
  return {
    accessKey: s.credentials.accessKey,
    csrfToken: s.csrfToken,
    expiresAt: new Date(deps.sessions.endsBy(s)).toISOString(),
    idleTimeoutSeconds: Math.round(deps.idleMs / 1000),
    admin: s.admin,
    permissions: s.permissions ?? {},
    version: deps.version,
  };
}

export async function signIn(deps: SignInDeps, req: IncomingMessage): Promise<{ token: string; session: Session }> {
  const body = await readJson<Partial<SignInRequest>>(req);
  const accessKey = typeof body.accessKey === 'string' ? body.accessKey.trim() : '';
  const secretKey = typeof body.secretKey === 'string' ? body.secretKey : '';
  if (accessKey === '' || secretKey === '') throw new SvcError('InvalidArgument', 'enter both the access key and the secret key');
  if (accessKey.length > 256 || secretKey.length > 256) throw new SvcError('XSvcConsoleInvalidCredentials');
  // the client's address (behind a trusted proxy, the one it forwarded)
  const address = requestOrigin(req).sourceIp || 'unknown';
  // Counted per (address, access key) and per address: guessing from one address stops, and nobody
  // elsewhere can lock a key's owner out by failing with that key (the address limit is higher: a
  // proxy's address is shared by everyone behind it).
  const keys = [`pair:${address}\u0000${accessKey}`, `address:${address}`];
  const wait = deps.limiter.retryAfterMs(keys);
  if (wait > 0) {
    const seconds = Math.ceil(wait / 1000);
    deps.logger.warn({ event: 'console_signin_limited', accessKey, address, retryAfterSeconds: seconds }, 'console sign-in refused: too many failures');
    throw new SvcError('XSvcConsoleTooManySignIns', `Too many failed sign-ins from this address; try again in ${seconds} s.`, { retryAfterSeconds: seconds });
  }
  const credentials = { accessKey, secretKey };
  let opened: { token: string; session: Session };
  try {
    opened = await openSession(deps, credentials);
  } catch (err) {
    if (err instanceof UpstreamError && BAD_KEYS.has(err.code)) {
      deps.limiter.fail(keys);
      deps.logger.warn({ event: 'console_signin_failed', accessKey, address, code: err.code }, 'console sign-in failed: wrong keys');
      throw new SvcError('XSvcConsoleInvalidCredentials');
    }
    throw err;
  }
  deps.limiter.succeed(keys[0]!);
  deps.logger.info({ event: 'console_signin', accessKey, address, admin: opened.session.admin }, 'console sign-in');
  return opened;
}

/**
 * A session for credentials the node accepts: whether they may read the
 * cluster (`AccessDenied` from the admin API: a valid identity without admin
 * rights, who still gets the bucket pages) and what their policies allow.
 * Wrong credentials reject with the node's `UpstreamError`.
 */
export async function openSession(deps: SignInDeps, credentials: SessionCredentials, notAfter?: number): Promise<{ token: string; session: Session }> {
  let admin = true;
  try {
    await adminCalls.capabilities(deps.upstream, credentials);
  } catch (err) {
    if (!(err instanceof UpstreamError && err.code === 'AccessDenied')) throw err;
    admin = false;
  }
  // what the identity may do, for the pages to show (a server without the identity routes: nothing known)
  const who = await iamCalls.whoami(deps.upstream, credentials).catch(() => undefined);
  return deps.sessions.create(credentials, admin, who?.permissions, notAfter);
}
