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
import type { SessionInfo } from './wire.ts';

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
  const body = await readJson<Partial<Record<'accessKey' | 'secretKey' | 'ldapUsername' | 'ldapPassword', unknown>>>(req);
  // the client's address (behind a trusted proxy, the one it forwarded)
  const address = requestOrigin(req).sourceIp || 'unknown';
  if (body.ldapUsername !== undefined || body.ldapPassword !== undefined) return ldapSignIn(deps, body.ldapUsername, body.ldapPassword, address);
  const accessKey = typeof body.accessKey === 'string' ? body.accessKey.trim() : '';
  const secretKey = typeof body.secretKey === 'string' ? body.secretKey : '';
  if (accessKey === '' || secretKey === '') throw new SvcError('InvalidArgument', 'enter both the access key and the secret key');
  if (accessKey.length > 256 || secretKey.length > 256) throw new SvcError('XSvcConsoleInvalidCredentials');
  const keys = limiterKeys(deps, address, accessKey, { accessKey });
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
 * The sign-in limiter's keys for a name typed from an address, after checking they may try now.
 * Counted per (address, name) and per address: guessing from one address stops, and nobody
 * elsewhere can lock a name's owner out by failing with it (the address limit is higher: a
 * proxy's address is shared by everyone behind it).
 */
function limiterKeys(deps: SignInDeps, address: string, name: string, logged: Record<string, string>): string[] {
  const keys = [`pair:${address}\u0000${name}`, `address:${address}`];
  const wait = deps.limiter.retryAfterMs(keys);
  if (wait > 0) {
    const seconds = Math.ceil(wait / 1000);
    deps.logger.warn({ event: 'console_signin_limited', ...logged, address, retryAfterSeconds: seconds }, 'console sign-in refused: too many failures');
    throw new SvcError('XSvcConsoleTooManySignIns', `Too many failed sign-ins from this address; try again in ${seconds} s.`, { retryAfterSeconds: seconds });
  }
  return keys;
}

/**
 * Signing in with an LDAP account: the node's STS (`AssumeRoleWithLDAPIdentity`) binds as the
 * user and maps the user's and groups' policies; the session holds the temporary credentials it
 * returns and ends when they do. A refusal counts against the limiter like wrong keys (an
 * unreachable LDAP server does not).
 */
async function ldapSignIn(deps: SignInDeps, user: unknown, password: unknown, address: string): Promise<{ token: string; session: Session }> {
  const ldapUsername = typeof user === 'string' ? user.trim() : '';
  const ldapPassword = typeof password === 'string' ? password : '';
  if (ldapUsername === '' || ldapPassword === '') throw new SvcError('InvalidArgument', 'enter both the LDAP user name and the password');
  if (ldapUsername.length > 256 || ldapPassword.length > 1024) throw new SvcError('XSvcConsoleInvalidCredentials', 'The LDAP user name or password is wrong.');
  const keys = limiterKeys(deps, address, `ldap:${ldapUsername.toLowerCase()}`, { ldapUser: ldapUsername });
  const sts = stsCredentials(await deps.upstream.unsignedForm({ Action: 'AssumeRoleWithLDAPIdentity', Version: '2011-06-15', LDAPUsername: ldapUsername, LDAPPassword: ldapPassword }));
  if ('code' in sts) {
    if (sts.code !== 'AccessDenied') throw new SvcError(sts.code === 'XSvcStsNotConfigured' ? 'XSvcStsNotConfigured' : 'IDPCommunicationError', `LDAP sign-in failed: ${sts.message}`);
    deps.limiter.fail(keys);
    deps.logger.warn({ event: 'console_signin_failed', ldapUser: ldapUsername, address, code: sts.code, err: sts.message }, 'console sign-in failed: LDAP refused');
    throw new SvcError('XSvcConsoleInvalidCredentials', `LDAP sign-in refused: ${sts.message}`);
  }
  const opened = await openSession(deps, sts.credentials, sts.expiration);
  deps.limiter.succeed(keys[0]!);
  deps.logger.info({ event: 'console_signin', ldapUser: ldapUsername, accessKey: sts.credentials.accessKey, address, admin: opened.session.admin }, 'console sign-in (LDAP)');
  return opened;
}

const unescapeXml = (s: string) => s.replace(/&(lt|gt|quot|apos|amp);/g, (_, e: string) => ({ lt: '<', gt: '>', quot: '"', apos: "'", amp: '&' })[e]!);

/** The node's STS answer: temporary credentials and when they end, or its error code and message. */
export function stsCredentials(sts: { status: number; text: string }): { credentials: Required<SessionCredentials>; expiration: number } | { code: string; message: string } {
  const pick = (tag: string) => {
    const v = new RegExp(`<${tag}>([^<]*)</${tag}>`).exec(sts.text)?.[1];
    return v === undefined ? undefined : unescapeXml(v);
  };
  const accessKey = pick('AccessKeyId');
  const secretKey = pick('SecretAccessKey');
  const sessionToken = pick('SessionToken');
  const expiration = Date.parse(pick('Expiration') ?? '');
  if (sts.status !== 200 || !accessKey || !secretKey || !sessionToken || !Number.isFinite(expiration)) {
    return { code: pick('Code') ?? 'no code', message: pick('Message') ?? `STS answered ${sts.status}` };
  }
  return { credentials: { accessKey, secretKey, sessionToken }, expiration };
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
