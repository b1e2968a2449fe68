/**
 * "Sign in with SSO": the console signs a person in through the configured
 * OpenID Connect provider with the authorization-code flow and PKCE
 * (RFC 7636, S256), then turns the provider's ID token into temporary
 * credentials with the node's own `AssumeRoleWithWebIdentity`. The session
 * acts with those credentials, so it may do exactly what the token's
 * policy claim (and the provider's role policy) allows, and ends when they
 * expire.
 *
 *   GET sso/start     a fresh state, PKCE verifier and nonce in a short-lived
 *                     HttpOnly SameSite=Lax cookie; 302 to the provider
 *   GET sso/callback  the state checked against the cookie; the code (with the
 *                     verifier, and the client secret when one is configured)
 *                     exchanged at the token endpoint; STS; the nonce checked;
 *                     the session cookie set; 302 to the console
 *
 * The state lives in the browser's cookie, not in this node's memory, so a
 * load balancer may send the callback to another node. Failures return to
 * the console's sign-in page with the reason (`?sso_error=`).
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { SvcError } from '../../util/errors.ts';
import { providerUnreachable } from '../sts/providers.ts';
import { type ConsoleRequestInfo, CONSOLE_ROOT } from './request-context.ts';
import { openSession, type SignInDeps, stsCredentials } from './sign-in.ts';
import type { Session } from './sessions.ts';

/** The provider as the console uses it (from the identity store's OpenID configuration). */
export interface ConsoleOpenId {
  /** Calls to the provider (trusting the node's CAs). */
  readonly fetch: typeof fetch;
  readonly configUrl: string;
  /** The console's client id (the first configured). */
  readonly clientId: string;
  readonly clientSecret?: string;
  readonly scopes: readonly string[];
  readonly redirectUri?: string;
  readonly displayName?: string;
}

export const SSO_COOKIE = 'svc_console_sso';
/** How long a started sign-in may take at the provider. */
export const SSO_TTL_MS = 10 * 60_000;

interface Endpoints {
  readonly authorization: string;
  readonly token: string;
  readonly at: number;
}
const discovered = new Map<string, Endpoints>();

async function endpoints(cfg: ConsoleOpenId, now: number): Promise<Endpoints> {
  const configUrl = cfg.configUrl;
  const cached = discovered.get(configUrl);
  if (cached !== undefined && now - cached.at < 5 * 60_000) return cached;
  let doc: { authorization_endpoint?: unknown; token_endpoint?: unknown };
  try {
    const res = await cfg.fetch(configUrl, { signal: AbortSignal.timeout(10_000) });
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    doc = (await res.json()) as typeof doc;
  } catch (err) {
    throw providerUnreachable(`the OpenID provider's discovery document ${configUrl}`, err);
  }
  if (typeof doc.authorization_endpoint !== 'string' || typeof doc.token_endpoint !== 'string') throw new SvcError('IDPCommunicationError', 'the discovery document names no authorization_endpoint or token_endpoint');
  const e = { authorization: doc.authorization_endpoint, token: doc.token_endpoint, at: now };
  discovered.set(configUrl, e);
  return e;
}

/** The callback URL: the configured one, or this console's as the browser reached it. */
export function redirectUri(cfg: ConsoleOpenId, info: ConsoleRequestInfo): string {
  return cfg.redirectUri ?? `${info.secure ? 'https' : 'http'}://${info.host}${info.prefix}${CONSOLE_ROOT}/sso/callback`;
}

const b64 = (n: number) => randomBytes(n).toString('base64url');
const s256 = (v: string) => createHash('sha256').update(v).digest('base64url');

/** Where to send the browser, and the cookie value (`state.verifier.nonce`) that must come back with it. */
export async function ssoStart(cfg: ConsoleOpenId, info: ConsoleRequestInfo, now: number): Promise<{ location: string; cookie: string }> {
  const e = await endpoints(cfg, now);
  const state = b64(24);
  const verifier = b64(32);
  const nonce = b64(24);
  const u = new URL(e.authorization);
  u.searchParams.set('response_type', 'code');
  u.searchParams.set('client_id', cfg.clientId);
  u.searchParams.set('redirect_uri', redirectUri(cfg, info));
  u.searchParams.set('scope', [...new Set(['openid', ...cfg.scopes])].join(' '));
  u.searchParams.set('state', state);
  u.searchParams.set('nonce', nonce);
  u.searchParams.set('code_challenge', s256(verifier));
  u.searchParams.set('code_challenge_method', 'S256');
  return { location: u.toString(), cookie: `${state}.${verifier}.${nonce}` };
}

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The provider's answer at the callback, turned into a console session. */
export async function ssoFinish(deps: SignInDeps, cfg: ConsoleOpenId, info: ConsoleRequestInfo, query: URLSearchParams, cookie: string | undefined, now: number): Promise<{ token: string; session: Session; subject: string }> {
  const error = query.get('error');
  if (error !== null) throw new SvcError('AccessDenied', `the identity provider did not sign you in: ${query.get('error_description') ?? error}`);
  const [state, verifier, nonce] = (cookie ?? '').split('.');
  const returned = query.get('state') ?? '';
  if (!state || !verifier || !nonce || !same(state, returned)) throw new SvcError('AccessDenied', 'this sign-in was not started here, or took longer than 10 minutes: start it again');
  const code = query.get('code');
  if (code === null || code === '') throw new SvcError('AccessDenied', 'the identity provider sent no authorization code');
  const e = await endpoints(cfg, now);
  const form = new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: redirectUri(cfg, info), code_verifier: verifier });
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
  // a confidential client authenticates with HTTP Basic (RFC 6749 2.3.1: both parts form-encoded); a public one names itself
  if (cfg.clientSecret !== undefined) headers['authorization'] = `Basic ${Buffer.from(`${encodeURIComponent(cfg.clientId)}:${encodeURIComponent(cfg.clientSecret)}`).toString('base64')}`;
  else form.set('client_id', cfg.clientId);
  let tokens: { id_token?: unknown; error?: unknown; error_description?: unknown };
  try {
    const res = await cfg.fetch(e.token, { method: 'POST', headers, body: form.toString(), signal: AbortSignal.timeout(10_000) });
    tokens = (await res.json()) as typeof tokens;
  } catch (err) {
    throw providerUnreachable("the identity provider's token endpoint", err);
  }
  if (typeof tokens.id_token !== 'string') throw new SvcError('AccessDenied', `the identity provider issued no ID token: ${String(tokens.error_description ?? tokens.error ?? 'no reason given')}`);
  // the node's STS verifies the token (signature, issuer, audience, expiry) and maps its policy claim
  const sts = stsCredentials(await deps.upstream.unsignedForm({ Action: 'AssumeRoleWithWebIdentity', Version: '2011-06-15', WebIdentityToken: tokens.id_token }));
  if ('code' in sts) throw new SvcError('AccessDenied', `the identity provider's token was refused: ${sts.message} (${sts.code})`);
  // verified by STS above, so its payload is the provider's: the nonce binds it to this browser's sign-in
  const claims = JSON.parse(Buffer.from(tokens.id_token.split('.')[1] ?? '', 'base64url').toString('utf8')) as { nonce?: unknown; preferred_username?: unknown; sub?: unknown };
  if (typeof claims.nonce !== 'string' || !same(claims.nonce, nonce)) throw new SvcError('AccessDenied', 'the ID token does not belong to this sign-in (nonce)');
  const opened = await openSession(deps, sts.credentials, sts.expiration);
  const subject = typeof claims.preferred_username === 'string' ? claims.preferred_username : typeof claims.sub === 'string' ? claims.sub : '';
  return { ...opened, subject };
}
