/**
 * The one dispatcher of the S3 listener, by path:
 *   health probes → `/svc/rpc/`, `/svc/peer/` → `/svc/admin/`, `/compat/admin/` → S3.
 *
 * Handlers for RPC, peer, admin and S3 are injected (`RouteHandlers`) at
 * construction: those that answer from the first request, and an `Eventual`
 * of those the object-layer phase produces (S3, STS), which answer as absent
 * until it settles.
 * S3 requests are gated on the start-up stages: while one is pending
 * (storage read quorum, IAM, finalization) they get 503 with
 * `Retry-After: 5` and `x-svc-readiness-pending`. Without an S3 handler the
 * answer is an S3 XML `ServiceUnavailable`, never a fake success.
 */
import { randomBytes } from 'node:crypto';
import { newRequestId } from '../util/request-id.ts';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type HealthSource, handleHealth, isHealthPath } from '../api/health/health-handler.ts';
import { adminErrorReply } from '../api/admin/errors.ts';
import { writeAdminReply } from '../api/admin/index.ts';
import { sendError } from '../api/s3/errors.ts';
import { type HttpRequestMessage, httpRequestEnd, httpRequestStart } from '../util/diagnostics.ts';
import { ERRORS, SvcError } from '../util/errors.ts';
import type { Eventual } from '../util/eventual.ts';
import type { Logger } from '../util/logger.ts';

export type RequestHandler = (req: IncomingMessage, res: ServerResponse) => void;

export interface RouteHandlers {
  /** Internode RPC under `/svc/rpc/`. */
  readonly rpc?: RequestHandler | undefined;
  /** Peer calls under `/svc/peer/`. */
  readonly peer?: RequestHandler | undefined;
  /** Admin API under `/svc/admin/` and `/compat/admin/`. */
  readonly admin?: RequestHandler | undefined;
  /** Everything else: the S3 API (e.g. from `createS3Handler(...)`). */
  readonly s3?: RequestHandler | undefined;
  /** STS (`POST /` with a form body), beside the S3 API on the same port. */
  readonly sts?: RequestHandler | undefined;
}

/** An STS call: a form POST to the root path (S3 has no POST on `/`; POST Object forms are multipart). */
export function isStsRequest(req: IncomingMessage, path: string): boolean {
  return req.method === 'POST' && path === '/' && /^application\/x-www-form-urlencoded/i.test(req.headers['content-type'] ?? '');
}

export type Route = 'health' | 'rpc' | 'peer' | 'admin' | 's3';

export const RETRY_AFTER_SECONDS = 5;

/** Classifies a request path (pure). */
export function routeOf(path: string, healthEnabled: boolean): Route {
  if (healthEnabled && isHealthPath(path)) return 'health';
  if (path.startsWith('/svc/rpc/')) return 'rpc';
  if (path.startsWith('/svc/peer/')) return 'peer';
  if (path.startsWith('/svc/admin/') || path.startsWith('/compat/admin/') || path.startsWith('/minio/admin/')) return 'admin';
  return 's3';
}

/** An S3 XML error from the dispatcher itself (the readiness gate, no S3 handler): the S3 API's one error writer. */
function sendS3Error(req: IncomingMessage, res: ServerResponse, logger: Logger, hostId: string, message: string, headers: Record<string, string>): void {
  const resource = (req.url ?? '/').split('?')[0]!;
  const requestId = newRequestId();
  sendError(res, new SvcError('ServiceUnavailable', message), { method: req.method ?? 'GET', resource, requestId, hostId, logger, headers });
}

function sendJsonError(req: IncomingMessage, res: ServerResponse, status: number, code: string, message: string): void {
  const body = JSON.stringify({ code, message });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(req.method === 'HEAD' ? undefined : body);
}

export interface DispatcherOptions {
  readonly health: HealthSource & { report(probe: 'ready'): { ready: boolean; pending?: string | undefined } };
  readonly healthEnabled: boolean;
  readonly logger: Logger;
  /** Handlers that answer from the first request (internode RPC and peer calls, the admin API). */
  readonly handlers?: RouteHandlers;
  /** Handlers a later phase produces (the S3 and STS handlers over the object layer); they take precedence once settled. */
  readonly later?: Eventual<RouteHandlers>;
}

export interface Dispatcher {
  readonly handle: RequestHandler;
}

export function createDispatcher(opts: DispatcherOptions): Dispatcher {
  const early: RouteHandlers = { ...opts.handlers };
  const handlerOf = (route: keyof RouteHandlers): RequestHandler | undefined => opts.later?.get()?.[route] ?? early[route];
  const hostId = randomBytes(24).toString('base64');
  const serve = (req: IncomingMessage, res: ServerResponse, path: string, route: Route): void => {
    // Installed as the server's `checkContinue` listener too: only the S3
    // handler decides (after authentication) whether the body is wanted.
    if (route !== 's3' && /100-continue/i.test(req.headers.expect ?? '')) res.writeContinue();
    try {
      switch (route) {
        case 'health':
          handleHealth(opts.health, req, res, path);
          return;
        case 'rpc':
        case 'peer': {
          const h = handlerOf(route);
          if (h) h(req, res);
          else sendJsonError(req, res, 503, 'ServiceUnavailable', 'internode RPC is not enabled on this node');
          return;
        }
        case 'admin': {
          const h = handlerOf('admin');
          if (h) h(req, res);
          else writeAdminReply(req, res, adminErrorReply(new SvcError('ServiceUnavailable', 'the admin API is not available on this node'), path, newRequestId(), ''));
          return;
        }
        case 's3': {
          const r = opts.health.report('ready');
          // Only a missing start-up stage (storage read quorum, IAM, finalization) stops S3:
          // a node that lost peers (or the key store) stays not ready but serves what it can
          // (reads with read quorum); writes fail on their own (lock quorum, XSvcKMSNotReady).
          if (r.pending !== undefined) {
            sendS3Error(req, res, opts.logger, hostId, `The server is not ready yet (pending ${r.pending}); retry later.`, {
              'retry-after': String(RETRY_AFTER_SECONDS),
              'cache-control': 'no-store',
              'x-svc-readiness-pending': r.pending,
            });
            return;
          }
          const sts = handlerOf('sts');
          if (sts && isStsRequest(req, path)) {
            sts(req, res);
            return;
          }
          const h = handlerOf('s3');
          if (h) h(req, res);
          else sendS3Error(req, res, opts.logger, hostId, 'The S3 API is not available on this node.', { 'retry-after': String(RETRY_AFTER_SECONDS) });
          return;
        }
      }
    } catch (err) {
      opts.logger.error({ event: 'http_dispatch_error', route, path, err }, 'request handler threw');
      if (!res.headersSent) sendJsonError(req, res, 500, 'InternalError', ERRORS.InternalError.message);
      else res.destroy();
    }
  };
  const handle: RequestHandler = (req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    const route = routeOf(path, opts.healthEnabled);
    // Observability: only when someone listens (no allocation otherwise). The
    // handler runs inside the stores subscribers bind (the request's span).
    if (route !== 'health' && httpRequestStart.hasSubscribers) {
      const msg: HttpRequestMessage = { api: route === 'peer' ? 'rpc' : route, req, res };
      res.once('close', () => httpRequestEnd.publish(msg));
      httpRequestStart.runStores(msg, serve, undefined, req, res, path, route);
      return;
    }
    serve(req, res, path, route);
  };
  return { handle };
}
