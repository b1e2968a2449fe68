/**
 * Health probes on the S3 listener (SPEC "Health probes"). Unauthenticated.
 *
 * - GET/HEAD `/health`, GET `/health/live`, `/compat/health/live`: liveness,
 *   200 while the process is up (degraded included).
 * - GET `/health/ready`, `/compat/health/ready`: readiness JSON, 200 only
 *   when ready, else 503.
 * - GET `/compat/health/cluster` (write health) and `/compat/health/cluster/read`
 *   (read health): like readiness, additionally requiring lock quorum.
 *
 * HEAD is answered on every probe path (same status, no body); other methods
 * get 405. No scrape format is served here or anywhere.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

export type HealthProbe = 'ready' | 'cluster' | 'cluster-read';

/** What the probes read; the server's `Readiness` satisfies it. */
export interface HealthSource {
  report(probe: HealthProbe): {
    readonly ready: boolean;
    readonly status: string;
    readonly details: object;
    readonly degradedReasons: readonly string[];
    readonly pending?: string | undefined;
  };
}

const LIVE = new Set(['/health', '/health/live', '/compat/health/live']);
const PROBES: ReadonlyMap<string, HealthProbe> = new Map([
  ['/health/ready', 'ready'],
  ['/compat/health/ready', 'ready'],
  ['/compat/health/cluster', 'cluster'],
  ['/compat/health/cluster/read', 'cluster-read'],
]);

/** True when `path` is one of the health probe paths. */
export function isHealthPath(path: string): boolean {
  return LIVE.has(path) || PROBES.has(path);
}

function send(req: IncomingMessage, res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
    ...headers,
  });
  res.end(req.method === 'HEAD' ? undefined : text);
}

/** Answers a health probe; call only when `isHealthPath(path)`. */
export function handleHealth(source: HealthSource, req: IncomingMessage, res: ServerResponse, path: string): void {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    send(req, res, 405, { code: 'MethodNotAllowed', message: 'health probes accept GET and HEAD' }, { allow: 'GET, HEAD' });
    return;
  }
  if (LIVE.has(path)) {
    send(req, res, 200, { status: 'ok' });
    return;
  }
  const r = source.report(PROBES.get(path)!);
  const body = { ready: r.ready, status: r.status, details: r.details, degradedReasons: r.degradedReasons };
  send(req, res, r.ready ? 200 : 503, body, r.ready || r.pending === undefined ? {} : { 'x-svc-readiness-pending': r.pending });
}
