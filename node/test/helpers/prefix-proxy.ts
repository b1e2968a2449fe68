/**
 * A reverse proxy as nginx's `location /storage/ { proxy_pass http://svc:9001/; }`
 * runs it: requests under the prefix go to the target with the prefix
 * stripped and `X-Forwarded-Prefix`, `-Host`, `-Proto` set; bodies stream
 * both ways unchanged; anything else is the proxy's own 404.
 */
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface PrefixProxy {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  /** Requests forwarded so far (path as received). */
  readonly forwarded: string[];
  close(): Promise<void>;
}

export async function startPrefixProxy(prefix: string, target: string): Promise<PrefixProxy> {
  const t = new URL(target);
  const forwarded: string[] = [];
  const server: Server = createServer((req, res) => {
    const url = req.url ?? '/';
    if (url !== prefix && !url.startsWith(`${prefix}/`)) {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not behind this proxy\n');
      return;
    }
    if (url === prefix) {
      res.writeHead(301, { location: `${prefix}/` });
      res.end();
      return;
    }
    forwarded.push(url);
    const headers = { ...req.headers, host: t.host, 'x-forwarded-prefix': prefix, 'x-forwarded-host': req.headers.host ?? '', 'x-forwarded-proto': 'http', 'x-forwarded-for': req.socket.remoteAddress ?? '' };
    const up = request({ host: t.hostname, port: t.port, method: req.method, path: url.slice(prefix.length), headers }, (ur) => {
      res.writeHead(ur.statusCode ?? 502, ur.headers);
      ur.pipe(res);
    });
    up.on('error', () => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end('bad gateway\n');
    });
    req.pipe(up);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    forwarded,
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
