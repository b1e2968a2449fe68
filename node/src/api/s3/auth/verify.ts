/**
 * One entry point for request authentication: SigV4 (header or presigned
 * query) and, where the caller allows it, SigV2 (header or presigned query).
 * Every scheme finds the secret through the same lookup (`VerifyOptions.credentials`).
 * Exported from the S3 package for the admin API (SigV4 only, service `s3`).
 */
import type { IncomingMessage } from 'node:http';
import { SvcError } from '../../../util/errors.ts';
import { isPresigned, verifyPresigned } from './presign.ts';
import { isPresignedV2, V2_PREFIX, verifyHeaderAuthV2, verifyPresignedV2 } from './sigv2.ts';
import { type AuthContext, type PayloadMode, payloadModeOf, type SignableRequest, type VerifyOptions, verifyHeaderAuth } from './sigv4.ts';

function refuseV2(opts: VerifyOptions): void {
  if (!opts.signatureV2) throw new SvcError('AccessDenied', 'This API accepts AWS Signature Version 4 only (AWS4-HMAC-SHA256); the request is signed with Signature Version 2.');
}

/**
 * Authenticates a request: the signed context, or the anonymous one when the
 * request carries no signature at all (authorization then decides what an
 * anonymous caller may do). A present but bad signature always fails.
 */
export function authenticateRequest(req: SignableRequest, opts: VerifyOptions): AuthContext {
  const authorization = req.headers.authorization;
  const hasHeader = authorization !== undefined;
  const presigned = isPresigned(req.url);
  const presignedV2 = !presigned && isPresignedV2(req.url);
  if (hasHeader && (presigned || presignedV2)) {
    throw new SvcError('InvalidArgument', 'Only one auth mechanism allowed; only the X-Amz-Algorithm query parameter or the Authorization header should be specified.');
  }
  if (presigned) return verifyPresigned(req, opts);
  if (presignedV2) {
    refuseV2(opts);
    return verifyPresignedV2(req, opts);
  }
  if (hasHeader && authorization.startsWith(V2_PREFIX)) {
    refuseV2(opts);
    return verifyHeaderAuthV2(req, opts);
  }
  if (hasHeader) return verifyHeaderAuth(req, opts);
  return anonymousContext(req);
}

/** Signed requests only (the admin API): anonymous is AccessDenied. */
export function verifyRequest(req: SignableRequest, opts: VerifyOptions): AuthContext {
  const auth = authenticateRequest(req, opts);
  if (auth.anonymous) throw new SvcError('AccessDenied', 'Anonymous access is not allowed; sign the request with AWS Signature Version 4.');
  return auth;
}

/** An unsigned request: its body is checked against a hex x-amz-content-sha256 when one is sent; streaming modes need a signature. */
function anonymousContext(req: SignableRequest): AuthContext {
  const raw = req.headers['x-amz-content-sha256'];
  const value = Array.isArray(raw) ? raw[0] : raw;
  const payload: PayloadMode = value === undefined ? { kind: 'unsigned' } : payloadModeOf(value);
  if (payload.kind === 'streaming' && payload.signed) {
    throw new SvcError('AccessDenied', 'A signed streaming payload needs a signed request.');
  }
  return { accessKey: '', anonymous: true, payload, signingKey: Buffer.alloc(0), signature: '', amzDate: '', scope: '', presigned: false };
}

/** `verifyRequest` for a node:http request (the admin API's entry point). */
export function verifyIncoming(req: IncomingMessage, opts: VerifyOptions): AuthContext {
  return verifyRequest({ method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers }, opts);
}
