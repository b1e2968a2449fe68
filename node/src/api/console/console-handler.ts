/**
 * The console listener (default :9001). It serves what it honestly can: the
 * console health path and a status page rendering this node's readiness and
 * pool layout. No login, no object browser, no metrics.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HealthSource } from '../health/health-handler.ts';

export interface ConsolePool {
  readonly index: number;
  readonly cmdline: string;
  readonly setCount: number;
  readonly setDriveCount: number;
  readonly standardParity: number;
  readonly rrsParity: number;
}

export interface ConsoleSource {
  readonly health: HealthSource;
  /** Pools as configured (empty until the layout is known). */
  pools(): readonly ConsolePool[];
  deploymentId(): string | undefined;
  readonly version: string;
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

export function renderStatusPage(src: ConsoleSource): string {
  const r = src.health.report('ready');
  const readiness = { ready: r.ready, status: r.status, details: r.details, degradedReasons: r.degradedReasons };
  const rows = src
    .pools()
    .map(
      (p) =>
        `<tr><td>${p.index}</td><td><code>${escapeHtml(p.cmdline)}</code></td><td>${p.setCount}</td><td>${p.setDriveCount}</td><td>EC:${p.standardParity}</td><td>EC:${p.rrsParity}</td></tr>`,
    )
    .join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>svc console</title>
<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px}</style></head>
<body><h1>svc ${escapeHtml(src.version)}</h1>
<p>Status: <strong>${r.ready ? 'ready' : 'not ready'}</strong>${r.pending ? ` (pending ${escapeHtml(r.pending)})` : ''}</p>
<p>Deployment: <code>${escapeHtml(src.deploymentId() ?? 'not formatted yet')}</code></p>
<h2>Pools</h2>
<table><tr><th>#</th><th>command line</th><th>sets</th><th>drives per set</th><th>STANDARD</th><th>RRS</th></tr>${rows}</table>
<h2>Readiness</h2>
<pre>${escapeHtml(JSON.stringify(readiness, null, 2))}</pre>
</body></html>
`;
}

/** Request handler of the console listener. */
export function createConsoleHandler(src: ConsoleSource): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    const get = req.method === 'GET' || req.method === 'HEAD';
    const reply = (status: number, type: string, body: string, extra: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body), 'cache-control': 'no-store', ...extra });
      res.end(req.method === 'HEAD' ? undefined : body);
    };
    if (!get) {
      reply(405, 'application/json', JSON.stringify({ code: 'MethodNotAllowed', message: 'the console accepts GET and HEAD' }), { allow: 'GET, HEAD' });
      return;
    }
    if (path === '/svc/console/health') {
      reply(200, 'application/json', JSON.stringify({ status: 'ok' }));
      return;
    }
    if (path === '/' || path === '/svc/console') {
      res.writeHead(302, { location: '/svc/console/', 'content-length': 0 });
      res.end();
      return;
    }
    if (path === '/svc/console/') {
      reply(200, 'text/html; charset=utf-8', renderStatusPage(src));
      return;
    }
    reply(404, 'application/json', JSON.stringify({ code: 'NotFound', message: `no console page at ${path}` }));
  };
}
