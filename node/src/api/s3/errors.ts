/**
 * S3 error responses: the XML body (`Code`, `Message`, `Resource`,
 * `RequestId`, `HostId`) with the registry's status; HEAD answers carry no
 * body. Anything not an SvcError is an InternalError (logged, never leaked).
 * Other server-side failures (5xx: quorum lost, a drive full) are warnings,
 * at most one per code every ten seconds when a limiter is given; client
 * errors (4xx) are debug records.
 */
import type { ServerResponse } from 'node:http';
import { SvcError, toSvcError } from '../../util/errors.ts';
import type { LogLimiter } from '../../util/log-limiter.ts';
import type { Logger } from '../../util/logger.ts';
import { toXml } from './xml.ts';

export interface ErrorContext {
  method: string;
  resource: string;
  requestId: string;
  hostId: string;
  logger: Logger;
  /** Extra response headers (the readiness gate's `x-svc-readiness-pending`). */
  headers?: Record<string, string>;
  /** Where 5xx answers other than InternalError are warned about (without it: debug records). */
  serverErrors?: LogLimiter;
}

export function sendError(res: ServerResponse, err: unknown, ctx: ErrorContext): void {
  if (res.headersSent) {
    // Mid-body failure: the only honest signal left is to cut the connection. A client
    // going away is routine; a storage failure while streaming is worth a warning.
    // An SvcError is the server's own failure (a block below read quorum, a drive error); the
    // response may already be destroyed by the writer that met it, so that cannot tell them apart.
    const code = (err as NodeJS.ErrnoException | undefined)?.code;
    const clientGone = !(err instanceof SvcError) && (res.destroyed || code === 'ERR_STREAM_PREMATURE_CLOSE' || code === 'ECONNRESET' || code === 'EPIPE');
    const log = { event: 's3_response_cut_short', requestId: ctx.requestId, resource: ctx.resource, ...(err instanceof SvcError ? { code: err.code } : {}), err };
    if (clientGone) ctx.logger.debug(log, 'S3 response cut short by the client');
    else ctx.logger.warn(log, 'S3 response failed mid-body');
    res.destroy();
    return;
  }
  const e = toSvcError(err);
  if (e.code === 'InternalError') {
    ctx.logger.error({ event: 's3_internal_error', err: (e.cause as Error | undefined) ?? e, requestId: ctx.requestId, resource: ctx.resource }, 'S3 request failed');
  } else {
    const warn = e.status >= 500 && ctx.serverErrors !== undefined;
    // a client's error (a 404 of a sync tool's HEAD) is common: its record is built only when debug is on
    if (warn || ctx.logger.isLevelEnabled('debug')) {
      const fields = { code: e.code, requestId: ctx.requestId, method: ctx.method, resource: ctx.resource, ...(e.details !== undefined ? { details: e.details } : {}), ...(e.code.startsWith('Erasure') ? { stack: e.stack } : {}) };
      if (warn) ctx.serverErrors!.warn(`s3_server_error:${e.code}`, { event: 's3_server_error', status: e.status, ...fields }, `S3 request answered ${e.status} ${e.code}: ${e.message}`);
      else ctx.logger.debug({ event: 's3_request_error', ...fields }, e.message);
    }
  }
  const body =
    ctx.method === 'HEAD' || e.status === 304
      ? ''
      : toXml('Error', { Code: e.code, Message: e.message, Resource: ctx.resource, RequestId: ctx.requestId, HostId: ctx.hostId }, false);
  const headers: Record<string, string | number> = {
    'x-amz-request-id': ctx.requestId,
    'x-amz-id-2': ctx.hostId,
  };
  if (body) {
    headers['content-type'] = 'application/xml';
    headers['content-length'] = Buffer.byteLength(body);
  }
  // 503s are worth retrying shortly (drives or peers away, a lock busy); a full store (507) is not until space is freed.
  if (e.status === 503) headers['retry-after'] = 5;
  if (ctx.headers) Object.assign(headers, ctx.headers);
  res.writeHead(e.status, headers);
  res.end(body);
}
