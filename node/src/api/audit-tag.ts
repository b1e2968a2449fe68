/**
 * What the audit log learns of a request from the API that served it: the
 * operation, bucket and object, and the access key it was signed with. The
 * S3 and admin handlers tag the request once they know; the audit wrapper
 * (`api/audit-log.ts`) reads the tag when the response is done.
 */
import type { IncomingMessage } from 'node:http';

export interface AuditTag {
  /** `PutObject`, `admin:v3/info`, … */
  api?: string;
  bucket?: string;
  object?: string;
  /** The signing access key ('' when anonymous). */
  accessKey?: string;
  /** The error code a refused request was answered with. */
  errorCode?: string;
}

const tags = new WeakMap<IncomingMessage, AuditTag>();

export function tagAudit(req: IncomingMessage, tag: AuditTag): void {
  tags.set(req, { ...tags.get(req), ...tag });
}

export function auditTagOf(req: IncomingMessage): AuditTag {
  return tags.get(req) ?? {};
}
