import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../util/logger.ts';
import { createDispatcher, type RequestHandler, type RouteHandlers, routeOf } from './dispatcher.ts';
import { eventual } from '../util/eventual.ts';
import { Readiness } from './readiness.ts';

describe('routeOf', () => {
  it('classifies paths in dispatch order', () => {
    expect(routeOf('/health', true)).toBe('health');
    expect(routeOf('/health', false)).toBe('s3');
    expect(routeOf('/compat/health/cluster/read', true)).toBe('health');
    expect(routeOf('/svc/rpc/v1/x', true)).toBe('rpc');
    expect(routeOf('/svc/peer/v1/x', true)).toBe('peer');
    expect(routeOf('/svc/admin/v3/pools/list', true)).toBe('admin');
    expect(routeOf('/compat/admin/v3/info', true)).toBe('admin');
    expect(routeOf('/bucket/key', true)).toBe('s3');
    expect(routeOf('/svc/rpcx', true)).toBe('s3');
  });
});

describe('dispatcher over real HTTP', () => {
  const readiness = new Readiness();
  // The handlers a later phase produces, settled once below; the S3 handler behind it is swapped by the last test.
  const later = eventual<RouteHandlers>('the test handlers');
  let s3: RequestHandler = (_req, res) => res.end('s3');
  const dispatcher = createDispatcher({ health: readiness, healthEnabled: true, logger: silentLogger, later: later.eventual });
  let server: Server;
  let base: string;
  beforeAll(async () => {
    server = createServer(dispatcher.handle);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
  });

  it('liveness is 200 even when not ready; readiness 503 with the JSON shape', async () => {
    for (const p of ['/health', '/health/live', '/compat/health/live']) expect((await fetch(base + p)).status).toBe(200);
    expect((await fetch(`${base}/health`, { method: 'HEAD' })).status).toBe(200);
    const r = await fetch(`${base}/health/ready`);
    expect(r.status).toBe(503);
    expect(await r.json()).toEqual({
      ready: false,
      status: 'degraded',
      details: { storage: { status: 'disconnected', ready: false }, iam: { status: 'disconnected', ready: false }, lock: { status: 'connected', ready: true } },
      degradedReasons: ['storage_quorum_unavailable'],
    });
    expect((await fetch(`${base}/health/live`, { method: 'POST' })).status).toBe(405);
  });

  it('S3 requests get 503 + Retry-After + pending header while not ready', async () => {
    const r = await fetch(`${base}/bucket/key`);
    expect(r.status).toBe(503);
    expect(r.headers.get('retry-after')).toBe('5');
    expect(r.headers.get('x-svc-readiness-pending')).toBe('storage_quorum');
    expect(await r.text()).toContain('<Code>ServiceUnavailable</Code>');
    readiness.update({ storageRead: true, storageWrite: true });
    expect((await fetch(`${base}/b`)).headers.get('x-svc-readiness-pending')).toBe('iam');
  });

  it('when ready: probes 200, S3 without a handler is an XML 503, injected handlers are called', async () => {
    readiness.update({ storageRead: true, storageWrite: true, iam: true, finalized: true });
    for (const p of ['/health/ready', '/compat/health/ready', '/compat/health/cluster', '/compat/health/cluster/read']) {
      const r = await fetch(base + p);
      expect(r.status).toBe(200);
      expect(await r.json()).toMatchObject({ ready: true, status: 'ok', degradedReasons: [] });
    }
    const none = await fetch(`${base}/bucket`);
    expect(none.status).toBe(503);
    expect(none.headers.get('x-svc-readiness-pending')).toBeNull();
    expect(await none.text()).toContain('S3 API is not available');
    expect((await fetch(`${base}/svc/admin/v3/pools/list`)).status).toBe(503);
    later.settle({
      s3: (req, res) => s3(req, res),
      admin: (_req, res) => res.end('admin'),
      rpc: (_req, res) => res.end('rpc'),
      peer: (_req, res) => res.end('peer'),
    });
    expect(await (await fetch(`${base}/bucket`)).text()).toBe('s3');
    expect(await (await fetch(`${base}/compat/admin/v3/x`)).text()).toBe('admin');
    expect(await (await fetch(`${base}/svc/rpc/x`)).text()).toBe('rpc');
    expect(await (await fetch(`${base}/svc/peer/x`)).text()).toBe('peer');
    readiness.update({ lock: false });
    expect((await fetch(`${base}/health/ready`)).status).toBe(200);
    const c = await fetch(`${base}/compat/health/cluster`);
    expect(c.status).toBe(503);
    expect(((await c.json()) as { degradedReasons: string[] }).degradedReasons).toEqual(['lock_quorum_unavailable']);
    readiness.update({ lock: true });
  });

  it('a throwing handler becomes a 500, not a crash', async () => {
    s3 = () => {
      throw new Error('boom');
    };
    expect((await fetch(`${base}/bucket`)).status).toBe(500);
  });
});

