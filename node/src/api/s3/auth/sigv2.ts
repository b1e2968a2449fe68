/**
 * AWS Signature Version 2, a sibling of SigV4 behind the same credential
 * lookup (`lookupSecret`): the header form `Authorization: AWS <key>:<sig>`,
 * presigned URLs (`AWSAccessKeyId`, `Expires`, `Signature`) and the POST form
 * policy signature. The signature is base64 HMAC-SHA1 over
 *
 *   VERB \n Content-MD5 \n Content-Type \n Date-or-Expires \n
 *   CanonicalizedAmzHeaders CanonicalizedResource
 *
 * where the amz headers are the `x-amz-*` headers (lower-cased names, sorted,
 * `name:value\n`) and the resource is `/<bucket>` for a virtual-host request,
 * the path as sent, then the signed sub-resources (`?acl`, `?uploadId=…`,
 * `response-*` overrides …) sorted by name with decoded values. The payload
 * is not signed: a body is checked by its Content-MD5 or a hex
 * `x-amz-content-sha256` when the client sends one.
 */
import { createHmac } from 'node:crypto';
import { SvcError } from '../../../util/errors.ts';
import { bucketFromHost } from '../router.ts';
import { type AuthContext, type Credential, lookupSecret, MAX_SKEW_MS, payloadModeOf, sessionTokenOf, type SignableRequest, signaturesEqual, UNSIGNED_PAYLOAD, type VerifyOptions } from './sigv4.ts';
import { headerText, headerValue, parseQuery, splitTarget } from '../headers.ts';

export const V2_PREFIX = 'AWS ';

/**
 * Query parameters that are part of the signed resource: the union of what
 * botocore's and minio-go's v2 signers include, so either client's
 * signature matches.
 */
const SIGNED_SUBRESOURCES = new Set([
  'accelerate',
  'acl',
  'analytics',
  'cors',
  'delete',
  'encryption',
  'inventory',
  'legal-hold',
  'lifecycle',
  'location',
  'logging',
  'metrics',
  'notification',
  'object-lock',
  'partNumber',
  'policy',
  'replication',
  'requestPayment',
  'response-cache-control',
  'response-content-disposition',
  'response-content-encoding',
  'response-content-language',
  'response-content-type',
  'response-expires',
  'restore',
  'retention',
  'select',
  'select-type',
  'storageClass',
  'tagging',
  'torrent',
  'uploadId',
  'uploads',
  'versionId',
  'versioning',
  'versions',
  'website',
]);

/** The CanonicalizedResource of a request. */
export function canonicalResourceV2(req: SignableRequest, domains: readonly string[] = []): string {
  const { path, query } = splitTarget(req.url);
  const vhost = bucketFromHost(headerValue(req.headers, 'host'), domains);
  let out = vhost !== undefined ? `/${vhost}${path}` : path;
  const subs = parseQuery(query).filter(([k]) => SIGNED_SUBRESOURCES.has(k));
  if (subs.length > 0) {
    subs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    out += `?${subs.map(([k, v]) => (v === '' ? k : `${k}=${v}`)).join('&')}`;
  }
  return out;
}

/** The `x-amz-*` headers, lower-cased and sorted, one `name:value\n` each. */
export function canonicalAmzHeadersV2(req: SignableRequest): string {
  const names = Object.keys(req.headers)
    .filter((n) => n.startsWith('x-amz-'))
    .sort();
  let out = '';
  for (const n of names) {
    const raw = req.headers[n];
    const values = Array.isArray(raw) ? raw : [raw ?? ''];
    out += `${n}:${values.map((v) => headerText(v).trim().replace(/\s*\r?\n\s*/g, ' ')).join(',')}\n`;
  }
  return out;
}

/** The string a v2 signer signs; `date` is the Date header, or `Expires` for a presigned URL. */
export function stringToSignV2(req: SignableRequest, date: string, domains?: readonly string[]): string {
  return [
    req.method,
    headerValue(req.headers, 'content-md5') ?? '',
    headerValue(req.headers, 'content-type') ?? '',
    date,
    canonicalAmzHeadersV2(req) + canonicalResourceV2(req, domains),
  ].join('\n');
}

export function signV2(secret: string, stringToSign: string): string {
  return createHmac('sha1', secret).update(stringToSign, 'utf8').digest('base64');
}

const matches = signaturesEqual;

/** The body's protection: unsigned unless a hex `x-amz-content-sha256` is sent (streaming needs SigV4). */
function payloadOf(req: SignableRequest) {
  const value = headerValue(req.headers, 'x-amz-content-sha256');
  const payload = payloadModeOf(value ?? UNSIGNED_PAYLOAD);
  if (payload.kind === 'streaming') throw new SvcError('InvalidRequest', `${value} payloads need AWS Signature Version 4.`);
  return payload;
}

function context(cred: Credential, signature: string, req: SignableRequest, presigned: boolean): AuthContext {
  return {
    accessKey: cred.accessKey,
    ...(cred.principal ? { principal: cred.principal } : {}),
    payload: payloadOf(req),
    signingKey: Buffer.alloc(0),
    signature,
    amzDate: '',
    scope: '',
    presigned,
    signatureV2: true,
  };
}

/** `Authorization: AWS <access key>:<base64 signature>`. */
export function verifyHeaderAuthV2(req: SignableRequest, opts: VerifyOptions): AuthContext {
  const auth = headerValue(req.headers, 'authorization') ?? '';
  const cred = auth.slice(V2_PREFIX.length).trim();
  const colon = cred.lastIndexOf(':');
  if (!auth.startsWith(V2_PREFIX) || colon <= 0 || colon === cred.length - 1) {
    throw new SvcError('AuthorizationHeaderMalformed', 'A Signature Version 2 authorization header is "AWS <access key>:<signature>".');
  }
  const accessKey = cred.slice(0, colon);
  const signature = cred.slice(colon + 1);
  const amzDate = headerValue(req.headers, 'x-amz-date');
  const date = headerValue(req.headers, 'date');
  const when = Date.parse(amzDate ?? date ?? '');
  if (Number.isNaN(when)) throw new SvcError('AccessDenied', 'AWS authentication requires a valid Date or x-amz-date header.');
  if (Math.abs(opts.clock.now() - when) > MAX_SKEW_MS) throw new SvcError('RequestTimeTooSkewed');
  const secret = lookupSecret(opts, accessKey, { sessionToken: sessionTokenOf(req), signedAt: when });
  // With x-amz-date present the Date line may be signed empty (AWS's rule) or as sent (what some signers do).
  const ok =
    matches(signV2(secret.secretKey, stringToSignV2(req, date ?? '', opts.domains)), signature) ||
    (amzDate !== undefined && date !== undefined && matches(signV2(secret.secretKey, stringToSignV2(req, '', opts.domains)), signature));
  if (!ok) throw new SvcError('SignatureDoesNotMatch');
  return context(secret, signature, req, false);
}

/** True when the query carries v2 presigned authentication. */
export function isPresignedV2(url: string): boolean {
  return /[?&]AWSAccessKeyId=/.test(url) && /[?&]Signature=/.test(url);
}

/** A v2 presigned URL: `?AWSAccessKeyId=…&Expires=<epoch seconds>&Signature=…`. */
export function verifyPresignedV2(req: SignableRequest, opts: VerifyOptions): AuthContext {
  const q = new Map(parseQuery(splitTarget(req.url).query));
  const accessKey = q.get('AWSAccessKeyId') ?? '';
  const signature = q.get('Signature') ?? '';
  const expires = q.get('Expires');
  if (accessKey === '' || signature === '' || expires === undefined) {
    throw new SvcError('AccessDenied', 'Query-string authentication (Signature Version 2) requires the AWSAccessKeyId, Expires and Signature parameters.');
  }
  if (!/^\d{1,12}$/.test(expires)) throw new SvcError('AccessDenied', 'Expires must be a number of seconds since the epoch.');
  if (opts.clock.now() > Number(expires) * 1000) throw new SvcError('AccessDenied', 'Request has expired.', { expires: new Date(Number(expires) * 1000).toISOString() });
  const secret = lookupSecret(opts, accessKey, { sessionToken: sessionTokenOf(req) });
  if (!matches(signV2(secret.secretKey, stringToSignV2(req, expires, opts.domains)), signature)) throw new SvcError('SignatureDoesNotMatch');
  return context(secret, signature, req, true);
}

/** A POST form signed with the v2 scheme: `AWSAccessKeyId`, `policy`, `signature` (HMAC-SHA1 of the base64 policy). */
export function verifyPolicySignatureV2(opts: VerifyOptions, accessKey: string, policy: string, signature: string, sessionToken?: string): Credential {
  const secret = lookupSecret(opts, accessKey, { sessionToken });
  if (!matches(signV2(secret.secretKey, policy), signature)) throw new SvcError('SignatureDoesNotMatch');
  return secret;
}
