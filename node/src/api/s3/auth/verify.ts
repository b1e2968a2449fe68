/**
 * One entry point for SigV4 request authentication: header or presigned
 * query. Exported from the S3 package for the admin API (same signing,
 * service `s3`).
 */
import type { IncomingMessage } from 'node:http';
import { SvcError } from '../../../util/errors.ts';
import { isPresigned, verifyPresigned } from './presign.ts';
import { type AuthContext, type SignableRequest, type VerifyOptions, verifyHeaderAuth } from './sigv4.ts';

export function verifyRequest(req: SignableRequest, opts: VerifyOptions): AuthContext {
  const hasHeader = req.headers.authorization !== undefined;
  const presigned = isPresigned(req.url);
  if (hasHeader && presigned) throw new SvcError('InvalidArgument', 'Only one auth mechanism allowed; only the X-Amz-Algorithm query parameter or the Authorization header should be specified.');
  if (presigned) return verifyPresigned(req, opts);
  if (hasHeader) return verifyHeaderAuth(req, opts);
  throw new SvcError('AccessDenied', 'Anonymous access is not allowed; sign the request with AWS Signature Version 4.');
}

/** `verifyRequest` for a node:http request (the admin API's entry point). */
export function verifyIncoming(req: IncomingMessage, opts: VerifyOptions): AuthContext {
  return verifyRequest({ method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers }, opts);
}
