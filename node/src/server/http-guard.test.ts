/**
 * The guard's connection cap per address, and the addresses it was built to
 * exempt (cluster peers that made an authenticated internode call): over a
 * real listener, connections from 127.0.0.2 and 127.0.0.3.
 */
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../util/clock.ts';
import { silentLogger } from '../util/logger.ts';
import { DEFAULT_HTTP_LIMITS } from '../util/net-config.ts';
import { HttpGuard, httpServerOptions } from './http-guard.ts';

let server: Server | undefined;
let guard: HttpGuard | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  guard?.close();
  if (server) await new Promise((r) => server!.close(r));
  server = undefined;
});

/** One request on a fresh connection from `from`; resolves with the first bytes answered. */
function ask(port: number, from: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port, localAddress: from }, () => s.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n'));
    sockets.push(s);
    s.once('data', (d) => resolve(d.toString('latin1')));
    s.once('error', reject);
  });
}

describe('HttpGuard connection caps', () => {
  it('refuses a second connection from one address beyond its cap, but never from an exempt address', async () => {
    guard = new HttpGuard({ limits: DEFAULT_HTTP_LIMITS, caps: { global: 100, perAddress: 1 }, logger: silentLogger, clock: systemClock, listener: 's3', exempt: (a) => a === '127.0.0.3' });
    const g = guard;
    // The handler never answers: each connection stays open, counted against its address.
    server = createServer(httpServerOptions(DEFAULT_HTTP_LIMITS), (req, res) => void g.watch(req, res, 'client'));
    guard.attach(server);
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;

    void ask(port, '127.0.0.2');
    await new Promise((r) => setTimeout(r, 100));
    expect(await ask(port, '127.0.0.2')).toMatch(/^HTTP\/1\.1 503/);
    expect(guard.stats().refused.address).toBe(1);

    const peer = [ask(port, '127.0.0.3'), ask(port, '127.0.0.3'), ask(port, '127.0.0.3')];
    const answered = await Promise.race([Promise.any(peer).then(() => 'answered'), new Promise((r) => setTimeout(() => r('open'), 300))]);
    // Held open like the first client's, not refused.
    expect(answered).toBe('open');
    expect(guard.stats().refused.address).toBe(1);
  });
});
