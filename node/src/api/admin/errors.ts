/**
 * Admin API error bodies: JSON `{"Code","Message","Resource","RequestId","HostId"}`
 * with `Content-Type: application/json` and the status of the one error
 * registry (madmin decodes this shape). Anything that is not a registered
 * `SvcError` is answered `InternalError` (and logged by the caller).
 */
import { toSvcError } from '../../util/errors.ts';
import { RETRY_AFTER_SECONDS } from './reply.ts';
import type { AdminReply } from './reply.ts';

export interface AdminErrorBody {
  Code: string;
  Message: string;
  Resource: string;
  RequestId: string;
  HostId: string;
}

export function adminErrorReply(err: unknown, resource: string, requestId: string, hostId: string): AdminReply {
  const e = toSvcError(err);
  const body: AdminErrorBody = { Code: e.code, Message: e.message, Resource: resource, RequestId: requestId, HostId: hostId };
  const headers: Record<string, string> = {};
  if (e.status === 503) headers['retry-after'] = String(RETRY_AFTER_SECONDS);
  return { status: e.status, headers, contentType: 'application/json', body: Buffer.from(JSON.stringify(body)) };
}
