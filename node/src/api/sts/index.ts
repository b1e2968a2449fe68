/**
 * STS on the S3 port: `POST /` with a form body (`Action=...&Version=2011-06-15`),
 * answered in STS's XML. Three ways to temporary credentials:
 *
 * - `AssumeRole`: signed (SigV4, service `sts`) by a user or the root with
 *   its long-term keys; the session acts as that user, narrowed by the
 *   optional session `Policy`;
 * - `AssumeRoleWithWebIdentity`: unsigned; an OpenID Connect ID token
 *   verified against the configured provider; its policy claim names the
 *   session's policies;
 * - `AssumeRoleWithLDAPIdentity`: unsigned; a user name and password
 *   checked by binding to the configured LDAP server; the policies mapped to
 *   the user's DN and its groups' DNs apply.
 *
 * The credentials are sealed session tokens (`iam/session-token.ts`): valid
 * on every node at once, verified per request, refused after `Expiration`.
 */
import { createHash } from 'node:crypto';
import { newRequestId } from '../../util/request-id.ts';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseIdentityPolicy } from '../../iam/policy.ts';
import type { SignedPrincipal } from '../../iam/principal.ts';
import { type SessionClaims, type SessionKind, sealSessionToken } from '../../iam/session-token.ts';
import type { Clock } from '../../util/clock.ts';
import { SvcError, toSvcError } from '../../util/errors.ts';
import type { Logger } from '../../util/logger.ts';
import { generateKeys } from '../admin/iam.ts';
import { type CredentialLookup, sessionTokenOf } from '../s3/auth/sigv4.ts';
import { verifyRequest } from '../s3/auth/verify.ts';
import type { ExternalIdentity } from './providers.ts';

const NS = 'https://sts.amazonaws.com/doc/2011-06-15/';
const MAX_BODY = 64 * 1024;
/** AWS's bounds for DurationSeconds (1 hour by default). */
export const MIN_DURATION_S = 900;
export const MAX_DURATION_S = 43_200;
export const DEFAULT_DURATION_S = 3_600;
/** Largest session policy (AWS: 2048 characters). */
export const MAX_SESSION_POLICY = 2048;

export type { ExternalIdentity };

export interface StsOptions {
  /** The one credential lookup (the session key comes with `sessionKey`). */
  readonly credentials: CredentialLookup;
  /** The deployment's session key (undefined until the identity store loaded). */
  readonly sessionKey: () => Uint8Array | undefined;
  readonly region: string;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Verifies an OpenID Connect ID token; undefined when no provider is configured. */
  readonly webIdentity?: () => ((token: string) => Promise<ExternalIdentity>) | undefined;
  /** Checks an LDAP user name and password; undefined when no server is configured. */
  readonly ldap?: () => ((user: string, password: string) => Promise<ExternalIdentity>) | undefined;
}

function esc(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]!);
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req as AsyncIterable<Buffer>) {
    size += c.length;
    if (size > MAX_BODY) throw new SvcError('InvalidRequest', 'the STS request body is too large');
    chunks.push(c);
  }
  return Buffer.concat(chunks);
}

function duration(v: string | null, max = MAX_DURATION_S): number {
  if (v === null || v === '') return Math.min(DEFAULT_DURATION_S, max);
  if (!/^\d{1,6}$/.test(v) || Number(v) < MIN_DURATION_S || Number(v) > MAX_DURATION_S) {
    throw new SvcError('InvalidParameterValue', `DurationSeconds must be between ${MIN_DURATION_S} and ${MAX_DURATION_S}`);
  }
  return Math.min(Number(v), max);
}

function sessionPolicy(v: string | null): string | undefined {
  if (v === null || v === '') return undefined;
  if (v.length > MAX_SESSION_POLICY) throw new SvcError('PackedPolicyTooLarge', `the session policy is ${v.length} characters; at most ${MAX_SESSION_POLICY}`);
  try {
    parseIdentityPolicy(v);
  } catch (err) {
    throw new SvcError('MalformedPolicyDocument', toSvcError(err).message);
  }
  return v;
}

function required(f: URLSearchParams, name: string): string {
  const v = f.get(name);
  if (v === null || v === '') throw new SvcError('MissingParameter', `the ${name} parameter is required`);
  return v;
}

export function createStsHandler(o: StsOptions): (req: IncomingMessage, res: ServerResponse) => void {
  const issue = (kind: SessionKind, durationS: number, extra: Partial<SessionClaims>): { claims: SessionClaims; token: string } => {
    const key = o.sessionKey();
    if (key === undefined) throw new SvcError('XSvcIamNotInitialized');
    const now = o.clock.now();
    const keys = generateKeys();
    const claims: SessionClaims = { ak: keys.accessKey, sk: keys.secretKey, iat: now, exp: now + durationS * 1000, kind, ...extra };
    return { claims, token: sealSessionToken(key, claims) };
  };

  const answer = (res: ServerResponse, action: string, requestId: string, c: SessionClaims, token: string, subject: string, extra = '') => {
    const arn = c.kind === 'assume-role' ? `arn:aws:sts:::assumed-role/${esc(subject)}/${c.ak}` : `arn:aws:sts:::assumed-role/${esc(subject)}`;
    const body =
      `<?xml version="1.0" encoding="UTF-8"?>\n<${action}Response xmlns="${NS}"><${action}Result>` +
      `<Credentials><AccessKeyId>${c.ak}</AccessKeyId><SecretAccessKey>${esc(c.sk)}</SecretAccessKey><SessionToken>${token}</SessionToken><Expiration>${new Date(c.exp).toISOString()}</Expiration></Credentials>` +
      `<AssumedRoleUser><Arn>${arn}</Arn><AssumedRoleId>${c.ak}:${esc(subject)}</AssumedRoleId></AssumedRoleUser>${extra}` +
      `</${action}Result><ResponseMetadata><RequestId>${requestId}</RequestId></ResponseMetadata></${action}Response>`;
    res.writeHead(200, { 'content-type': 'text/xml', 'content-length': Buffer.byteLength(body), 'x-amz-request-id': requestId, server: 'svc' });
    res.end(body);
  };

  const external = async (res: ServerResponse, requestId: string, action: string, kind: SessionKind, f: URLSearchParams, who: ExternalIdentity, address: string, extra = '') => {
    const maxS = who.notAfter === undefined ? MAX_DURATION_S : Math.max(1, Math.floor((who.notAfter - o.clock.now()) / 1000));
    const durationS = duration(f.get('DurationSeconds'), maxS);
    const policy = sessionPolicy(f.get('Policy'));
    const { claims, token } = issue(kind, durationS, { subject: who.subject, policies: [...who.policies], claims: who.claims, ...(policy !== undefined ? { sessionPolicy: policy } : {}) });
    o.logger.info({ event: 'sts_session', action, subject: who.subject, accessKey: claims.ak, policies: who.policies, expires: new Date(claims.exp).toISOString(), client: address }, `STS ${action}`);
    answer(res, action, requestId, claims, token, who.subject, extra);
  };

  return (req, res) => {
    const requestId = newRequestId();
    const address = req.socket.remoteAddress ?? '';
    const run = async () => {
      const body = await readBody(req);
      const f = new URLSearchParams(body.toString('utf8'));
      const action = f.get('Action') ?? '';
      if (f.get('Version') !== null && f.get('Version') !== '2011-06-15') throw new SvcError('InvalidParameterValue', 'Version must be 2011-06-15');
      switch (action) {
        case 'AssumeRole': {
          const auth = verifyRequest(
            { method: req.method ?? 'POST', url: req.url ?? '/', headers: req.headers },
            { credentials: o.credentials, region: o.region, clock: o.clock, service: 'sts', payloadHash: createHash('sha256').update(body).digest('hex') },
          );
          const p: SignedPrincipal | undefined = auth.principal;
          if (p === undefined || sessionTokenOf({ method: 'POST', url: req.url ?? '/', headers: req.headers }) !== undefined || (p.credential !== 'user' && p.credential !== 'root')) {
            throw new SvcError('AccessDenied', 'AssumeRole needs the long-term keys of a user (or of the root credential), not an access key or temporary credentials');
          }
          const durationS = duration(f.get('DurationSeconds'));
          const policy = sessionPolicy(f.get('Policy'));
          const parent = p.root ? null : (p.userName ?? p.canonicalId);
          const { claims, token } = issue('assume-role', durationS, { parent, ...(policy !== undefined ? { sessionPolicy: policy } : {}) });
          o.logger.info({ event: 'sts_session', action, parent: parent ?? 'root', accessKey: claims.ak, sessionPolicy: policy !== undefined, expires: new Date(claims.exp).toISOString(), client: address }, 'STS AssumeRole');
          answer(res, action, requestId, claims, token, parent ?? p.accessKey);
          return;
        }
        case 'AssumeRoleWithWebIdentity':
        case 'AssumeRoleWithClientGrants': {
          const verify = o.webIdentity?.();
          if (verify === undefined) throw new SvcError('XSvcStsNotConfigured', 'no OpenID Connect provider is configured (svc admin idp openid set)');
          const token = f.get('WebIdentityToken') ?? f.get('Token') ?? '';
          if (token === '') throw new SvcError('MissingParameter', 'the WebIdentityToken parameter is required');
          const who = await verify(token);
          await external(res, requestId, 'AssumeRoleWithWebIdentity', 'web-identity', f, who, address, `<SubjectFromWebIdentityToken>${esc(who.claims['jwt:sub']?.[0] ?? who.subject)}</SubjectFromWebIdentityToken>`);
          return;
        }
        case 'AssumeRoleWithLDAPIdentity': {
          const bind = o.ldap?.();
          if (bind === undefined) throw new SvcError('XSvcStsNotConfigured', 'no LDAP server is configured');
          const who = await bind(required(f, 'LDAPUsername'), required(f, 'LDAPPassword'));
          await external(res, requestId, action, 'ldap', f, who, address);
          return;
        }
        default:
          throw new SvcError('InvalidParameterValue', `unknown STS action "${action}"; svc serves AssumeRole, AssumeRoleWithWebIdentity and AssumeRoleWithLDAPIdentity`);
      }
    };
    run().catch((err: unknown) => {
      const e = toSvcError(err);
      if (e.code === 'InternalError') o.logger.error({ event: 'sts_failed', err }, 'STS request failed');
      else o.logger.info({ event: 'sts_refused', code: e.code, err: e.message, client: address }, 'STS request refused');
      const body = `<?xml version="1.0" encoding="UTF-8"?>\n<ErrorResponse xmlns="${NS}"><Error><Type>${e.status >= 500 ? 'Receiver' : 'Sender'}</Type><Code>${e.code}</Code><Message>${esc(e.message)}</Message></Error><RequestId>${requestId}</RequestId></ErrorResponse>`;
      if (!req.complete) req.resume();
      res.writeHead(e.status, { 'content-type': 'text/xml', 'content-length': Buffer.byteLength(body), 'x-amz-request-id': requestId, server: 'svc' });
      res.end(body);
    });
  };
}
