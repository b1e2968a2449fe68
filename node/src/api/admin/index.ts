/**
 * The admin API's HTTP edge for `/svc/admin/...` and `/compat/admin/...`:
 * verifies the SigV4 signature (service `s3`) with the S3 API's verifier,
 * reads the small body verified against its signed payload hash, runs the
 * admin core and writes its reply. An anonymous or badly signed request is
 * answered 403 before any route, parameter or service is looked at, so it
 * changes nothing.
 *
 * Why no express here: the admin core must run identically for a request
 * received over HTTP and for one forwarded by a peer over internode RPC
 * (`cluster/admin-peer.ts`), so it is a function from a verified call to a
 * reply, and its routes are one typed table (`routes.ts`) that also checks
 * the docs. A router holding `req`/`res` would have to fake both for
 * forwarded calls, and would add a second way of writing errors next to the
 * registry's.
 */
import { tagAudit } from '../audit-tag.ts';
import { newRequestId } from '../../util/request-id.ts';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Clock } from '../../util/clock.ts';
import { type HttpOperationMessage, httpRequestOperation } from '../../util/diagnostics.ts';
import type { Logger } from '../../util/logger.ts';
import { requestOrigin } from '../request-origin.ts';
import type { Credential, CredentialLookup } from '../s3/auth/sigv4.ts';
import { sessionTokenOf } from '../s3/auth/sigv4.ts';
import { verifyIncoming } from '../s3/auth/verify.ts';
import { credentialLookup } from '../s3/index.ts';
import { readSmallBody } from '../s3/put-data.ts';
import type { AdminCore } from './core.ts';
import { adminErrorReply } from './errors.ts';
import type { AdminReply } from './reply.ts';
import { adminSubpath, matchRoute } from './routes.ts';
import { closeAfterLinger } from '../../util/lingering-close.ts';

/** Largest admin request body (heal options are a few hundred bytes). */
export const MAX_ADMIN_BODY = 1024 * 1024;

export interface AdminHandlerOptions {
  readonly core: AdminCore;
  readonly credentials: Credential[] | CredentialLookup;
  /** Region clients sign for (the S3 region). */
  readonly region: string;
  /** Accept scopes naming any region (`SVC_ACCEPT_ANY_REGION`). */
  readonly anyRegion?: boolean;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly hostId: string;
}

export function writeAdminReply(req: IncomingMessage, res: ServerResponse, reply: AdminReply): void {
  const headers: Record<string, string | number> = { ...reply.headers, 'content-length': reply.body.length, server: 'svc' };
  if (reply.contentType !== undefined) headers['content-type'] = reply.contentType;
  res.writeHead(reply.status, headers);
  res.end(req.method === 'HEAD' ? undefined : reply.body);
}

/** Names the request's route (`PoolsList`, `Heal`, ...) for telemetry; an unknown path stays unnamed. */
function publishOperation(req: IncomingMessage, method: string, url: string): void {
  const sub = adminSubpath(url.split('?', 1)[0]!);
  if (sub === undefined) return;
  try {
    httpRequestOperation.publish({ req, operation: matchRoute(method, sub).route.op } satisfies HttpOperationMessage);
  } catch {
    // No such route: the core answers it; the metrics keep it as `unknown`.
  }
}

/** The `Code` of an admin error body. */
function errorCodeOf(body: Buffer | Uint8Array | string | undefined): string {
  try {
    const code = (JSON.parse(Buffer.from(body ?? '').toString('utf8')) as { Code?: unknown }).Code;
    return typeof code === 'string' ? code : 'Unknown';
  } catch {
    return 'Unknown';
  }
}

export function createAdminHandler(o: AdminHandlerOptions): (req: IncomingMessage, res: ServerResponse) => void {
  const lookup = credentialLookup(o.credentials);
  return (req, res) => {
    const requestId = newRequestId();
    const url = req.url ?? '/';
    const method = req.method ?? 'GET';
    if (httpRequestOperation.hasSubscribers) publishOperation(req, method, url);
    const run = async (): Promise<AdminReply> => {
      tagAudit(req, { api: `admin:${url.split('?')[0]!.replace(/^\/(svc|compat|minio)\/admin\//, '')}` });
      const auth = verifyIncoming(req, { credentials: lookup, region: o.region, anyRegion: o.anyRegion === true, clock: o.clock });
      tagAudit(req, { accessKey: auth.accessKey });
      const body = await readSmallBody(req.headers, req, auth, MAX_ADMIN_BODY);
      const sessionToken = sessionTokenOf({ method, url, headers: req.headers });
      return o.core.execute({ method, url, body, principal: auth.accessKey, ...(sessionToken !== undefined ? { sessionToken } : {}), requestId, clientAddress: requestOrigin(req).sourceIp });
    };
    run().then(
      (reply) => {
        if (reply.status >= 400) tagAudit(req, { errorCode: errorCodeOf(reply.body) });
        writeAdminReply(req, res, reply);
      },
      (err: unknown) => {
        // Authentication or body errors: nothing reached the core.
        o.logger.info({ event: 'admin_request_refused', url, remote: requestOrigin(req).sourceIp, err: err instanceof Error ? err.message : String(err) }, 'admin request refused');
        const reply = adminErrorReply(err, url.split('?')[0]!, requestId, o.hostId);
        tagAudit(req, { errorCode: errorCodeOf(reply.body) });
        if (!req.complete) closeAfterLinger(req, res);
        writeAdminReply(req, res, { ...reply, headers: { ...reply.headers, 'x-amz-request-id': requestId } });
      },
    );
  };
}
