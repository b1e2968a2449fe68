import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probeUrl, runProbe } from './probe-commands.ts';

describe('svc ping / svc ready', () => {
  let server: Server;
  let base: string;
  let ready = false;
  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === '/health') res.end();
      else if (req.url === '/health/ready') {
        res.statusCode = ready ? 200 : 503;
        res.end(JSON.stringify({ ready }));
      } else {
        res.statusCode = 404;
        res.end();
      }
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((r) => server.close(r)));

  it('builds probe URLs with or without a scheme', () => {
    expect(probeUrl('127.0.0.1:9000', '/health').href).toBe('http://127.0.0.1:9000/health');
    expect(probeUrl('https://h:1/x', '/health/ready').href).toBe('https://h:1/health/ready');
    expect(() => probeUrl('http://', '/health')).toThrow(/invalid server URL/);
  });
  it('ping exits 0 on 200; ready prints the JSON and exits 0 only when ready', async () => {
    const lines: string[] = [];
    expect(await runProbe(base, 'ping', (s) => lines.push(s))).toBe(0);
    expect(lines.pop()).toContain('alive');
    expect(await runProbe(base, 'ready', (s) => lines.push(s))).toBe(1);
    expect(lines.pop()).toBe('{"ready":false}');
    ready = true;
    expect(await runProbe(base, 'ready', (s) => lines.push(s))).toBe(0);
  });
  it('an unreachable server is exit 3 with the reason; no target is a usage error (2)', async () => {
    const lines: string[] = [];
    const s = createServer();
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    const port = (s.address() as AddressInfo).port;
    await new Promise((r) => s.close(r));
    expect(await runProbe(`http://127.0.0.1:${port}`, 'ping', (l) => lines.push(l))).toBe(3);
    expect(lines[0]).toBe(`http://127.0.0.1:${port}: unreachable: connection refused (is the server running?)`);
    expect(await runProbe(undefined, 'ping', (l) => lines.push(l), {})).toBe(2);
    expect(lines[1]).toContain('SVC_ENDPOINT');
    expect(await runProbe(undefined, 'ping', (l) => lines.push(l), { SVC_ENDPOINT: base })).toBe(0);
  });
});
