import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keepAliveHandler } from './s3-client.ts';

// The server announces `Keep-Alive: timeout=2` and closes idle connections after 3 s.
const server = createServer((_req, res) => res.end('ok'));
server.keepAliveTimeout = 2_000;
let connections = 0;
server.on('connection', () => connections++);
let port = 0;
beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

async function get(h: NodeHttpHandler): Promise<void> {
  const { response } = await h.handle({ protocol: 'http:', hostname: '127.0.0.1', port, method: 'GET', path: '/', query: {}, headers: { host: `127.0.0.1:${port}` } } as unknown as Parameters<NodeHttpHandler['handle']>[0]);
  for await (const _ of response.body as AsyncIterable<Uint8Array>);
}

async function connectionsFor(h: NodeHttpHandler): Promise<number> {
  const before = connections;
  await get(h);
  // Past the hint less Node's one-second margin, short of the server's close.
  await new Promise((r) => setTimeout(r, 1_500));
  await get(h);
  h.destroy();
  return connections - before;
}

describe('the test clients’ request handler', () => {
  it('retires an idle connection before the server’s announced keep-alive timeout (the SDK default keeps it)', async () => {
    expect(await connectionsFor(keepAliveHandler())).toBe(2);
    // What the hint is for: the SDK's default handler reuses the connection it should have let go.
    expect(await connectionsFor(new NodeHttpHandler())).toBe(1);
  });
});
