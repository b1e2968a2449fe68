/**
 * One entry point for SigV4 request authentication: header or presigned
 * query. Exported from the S3 package for the admin API (same signing,
 * service `s3`).
 */
import type { IncomingMessage } from 'node:http';
import { SvcError } from '../../../util/errors.ts';
import { isPresigned, verifyPresigned } from './presign.ts';
import { type AuthContext, type PayloadMode, payloadModeOf, type SignableRequest, type VerifyOptions, verifyHeaderAuth } from './sigv4.ts';

/**
 * Authenticates a request: the signed context, or the anonymous one when the
 * request carries no signature at all (authorization then decides what an
 * anonymous caller may do). A present but bad signature always fails.
 */
export function authenticateRequest(req: SignableRequest, opts: VerifyOptions): AuthContext {
  const hasHeader = req.headers.authorization !== undefined;
  const presigned = isPresigned(req.url);
  if (hasHeader && presigned) throw new SvcError('InvalidArgument', 'Only one auth mechanism allowed; only the X-Amz-Algorithm query parameter or the Authorization header should be specified.');
  if (presigned) return verifyPresigned(req, opts);
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
