/**
 * Presigned (query-string) SigV4: `X-Amz-Algorithm`, `X-Amz-Credential`,
 * `X-Amz-Date`, `X-Amz-Expires` (1 s to 7 days), `X-Amz-SignedHeaders`,
 * `X-Amz-Signature`. The payload is unsigned unless `X-Amz-Content-Sha256`
 * is part of the query.
 */
import { SvcError } from '../../../util/errors.ts';
import { ALGORITHM, type AuthContext, canonicalRequest, hmacHex, lookupSecret, MAX_SKEW_MS, parseAmzDate, parseCredentialScope, payloadModeOf, type SignableRequest, sessionTokenOf, signaturesEqual, signingKey, stringToSign, UNSIGNED_PAYLOAD, type VerifyOptions } from './sigv4.ts';
import { parseQuery, splitTarget } from '../headers.ts';

/** Longest presign validity S3 accepts: 7 days. */
export const MAX_PRESIGN_EXPIRES_S = 7 * 24 * 3600;

/** True when the request carries presigned-query authentication. */
export function isPresigned(url: string): boolean {
  return /[?&]X-Amz-Algorithm=/.test(url) || /[?&]X-Amz-Signature=/.test(url);
}

export function verifyPresigned(req: SignableRequest, opts: VerifyOptions): AuthContext {
  const { path, query } = splitTarget(req.url);
  const pairs = parseQuery(query);
  const q = new Map(pairs);
  const bad = (msg: string) => new SvcError('AuthorizationQueryParametersError', msg);
  if (q.get('X-Amz-Algorithm') !== ALGORITHM) throw bad(`X-Amz-Algorithm only supports "${ALGORITHM}".`);
  const credential = q.get('X-Amz-Credential');
  const amzDate = q.get('X-Amz-Date');
  const expiresRaw = q.get('X-Amz-Expires');
  const signedHeaders = q.get('X-Amz-SignedHeaders');
  const signature = q.get('X-Amz-Signature');
  if (!credential || !amzDate || !signedHeaders || !signature || expiresRaw === undefined) {
    throw bad('Query-string authentication requires the X-Amz-Algorithm, X-Amz-Credential, X-Amz-Signature, X-Amz-Date, X-Amz-SignedHeaders, and X-Amz-Expires parameters.');
  }
  const scope = parseCredentialScope(credential, opts, 'AuthorizationQueryParametersError');
  const when = parseAmzDate(amzDate);
  if (Number.isNaN(when)) throw bad('X-Amz-Date must be in the ISO8601 Long Format "yyyyMMdd\'T\'HHmmss\'Z\'".');
  if (!/^\d+$/.test(expiresRaw)) throw bad('X-Amz-Expires should be a number.');
  const expires = Number(expiresRaw);
  // out of range is refused as S3 refuses it: 403, not a malformed query
  if (expires < 1) throw new SvcError('AccessDenied', 'X-Amz-Expires must be non-negative.');
  if (expires > MAX_PRESIGN_EXPIRES_S) throw new SvcError('AccessDenied', 'X-Amz-Expires must be less than a week (in seconds) that is 604800.');
  const now = opts.clock.now();
  if (when - now > MAX_SKEW_MS) throw new SvcError('AccessDenied', 'Request is not valid yet.');
  if (now > when + expires * 1000) throw new SvcError('AccessDenied', 'Request has expired.');
  if (amzDate.slice(0, 8) !== scope.date) throw new SvcError('SignatureDoesNotMatch', 'The credential scope date does not match X-Amz-Date.');
  const signed = signedHeaders.split(';');
  if (!signed.includes('host')) throw bad('The host header must be signed.');
  const payloadValue = q.get('X-Amz-Content-Sha256') ?? UNSIGNED_PAYLOAD;
  const payload = payloadModeOf(payloadValue);
  if (payload.kind === 'streaming') throw bad('Streaming payloads cannot be presigned.');
  const cred = lookupSecret(opts, scope.accessKey, { sessionToken: sessionTokenOf(req), signedAt: when });
  const canonical = canonicalRequest(req.method, path, pairs, req.headers, signed, payloadValue, 'X-Amz-Signature');
  const key = signingKey(cred.secretKey, scope.date, scope.region, scope.service);
  const expected = hmacHex(key, stringToSign(amzDate, scope.scope, canonical));
  if (!signaturesEqual(expected, signature)) throw new SvcError('SignatureDoesNotMatch');
  return { accessKey: cred.accessKey, ...(cred.principal ? { principal: cred.principal } : {}), payload, signingKey: key, signature, amzDate, scope: scope.scope, presigned: true };
}
