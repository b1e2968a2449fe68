/** Test helper: an HTTP endpoint receiving newline-delimited JSON (a log shipper's HTTP input). */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface NdjsonEndpoint {
  readonly url: string;
  readonly port: number;
  /** Every record received, in order. */
  readonly lines: Record<string, unknown>[];
  /** Content type of every request. */
  readonly contentTypes: string[];
  readonly server: Server;
  /** Stops listening and cuts connections (the endpoint goes down). */
  stop(): Promise<void>;
  /** Listens again on the same port. */
  restart(): Promise<void>;
}

export async function ndjsonEndpoint(): Promise<NdjsonEndpoint> {
  const lines: Record<string, unknown>[] = [];
  const contentTypes: string[] = [];
  const server = createServer((req, res) => {
    contentTypes.push(req.headers['content-type'] ?? '');
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => {
      body += c;
    });
    req.on('end', () => {
      for (const l of body.split('\n')) if (l !== '') lines.push(JSON.parse(l) as Record<string, unknown>);
      res.writeHead(204).end();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/ingest`,
    port,
    lines,
    contentTypes,
    server,
    async stop() {
      if (!server.listening) return;
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
    async restart() {
      server.listen(port, '127.0.0.1');
      await once(server, 'listening');
    },
  };
}
