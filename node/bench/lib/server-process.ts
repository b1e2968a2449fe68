/**
 * Runs a server under test as its own process for the benchmarks: the real
 * `svc server` over local drive folders, or a plain node:http ceiling server
 * (`http-ceiling.ts`). The bench (the client) measures the child's CPU time
 * from /proc, so client work never counts against the server.
 *
 * `BENCH_SERVER_NODE_ARGS` adds Node options to the `svc` process (e.g.
 * `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile it under the bench load).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { request } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { processCpuSeconds } from './proc.ts';

const here = dirname(fileURLToPath(import.meta.url));
const SVC = resolve(here, '..', '..', 'bin', 'svc.js');

export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

/** GET on 127.0.0.1 (over TLS, trusting `ca`, when given); resolves the status, 0 when unreachable. */
function get(port: number, path: string, ca?: string): Promise<number> {
  return new Promise((res) => {
    const opts = { host: '127.0.0.1', port, path, method: 'GET' };
    const req = (ca === undefined ? request(opts, onRes) : httpsRequest({ ...opts, ca }, onRes));
    function onRes(r: import('node:http').IncomingMessage) {
      r.resume();
      r.on('end', () => res(r.statusCode ?? 0));
    }
    req.on('error', () => res(0));
    req.end();
  });
}

export class ServerProcess {
  readonly child: ChildProcess;
  readonly port: number;
  /** The CA the server's certificate chains to, when it serves TLS. */
  readonly ca: string | undefined;
  #stderr = '';
  readonly #exited: Promise<number | null>;

  private constructor(child: ChildProcess, port: number, ca?: string) {
    this.child = child;
    this.port = port;
    this.ca = ca;
    child.stderr?.on('data', (d: Buffer) => {
      this.#stderr = (this.#stderr + d.toString()).slice(-8192);
    });
    child.stdout?.resume();
    this.#exited = new Promise((r) => child.on('exit', (code) => r(code)));
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** CPU-seconds (user + system, all threads) the process used so far. */
  cpuSeconds(): number {
    return processCpuSeconds(this.pid);
  }

  async #waitFor(path: string, timeoutMs: number): Promise<void> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      if (this.child.exitCode !== null) throw new Error(`server exited with ${this.child.exitCode}: ${this.#stderr}`);
      if ((await get(this.port, path, this.ca)) === 200) return;
      if (Date.now() > until) throw new Error(`server not ready after ${timeoutMs} ms: ${this.#stderr}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /**
   * `svc server <drives...>` with root credentials `accessKey`/`secretKey`,
   * ready to serve; `tls.ca`: the server serves TLS (its `SVC_CERTS_DIR` in
   * `env`) with a certificate from this CA.
   */
  static async svc(drives: string[], creds: { accessKey: string; secretKey: string }, env: Record<string, string> = {}, tls?: { ca: string }): Promise<ServerProcess> {
    const port = await freePort();
    const nodeArgs = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter((a) => a !== '');
    const child = spawn(process.execPath, [...nodeArgs, SVC, 'server', ...drives], {
      env: {
        ...process.env,
        SVC_ADDRESS: `127.0.0.1:${port}`,
        SVC_CONSOLE_ENABLE: 'false',
        SVC_ACCESS_KEY: creds.accessKey,
        SVC_SECRET_KEY: creds.secretKey,
        SVC_OBS_LOGGER_LEVEL: 'warn',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const p = new ServerProcess(child, port, tls?.ca);
    await p.#waitFor('/health/ready', 60_000);
    return p;
  }

  /** The plain node:http ceiling server (`http-ceiling.ts`), serving `bigBytes` on GET /big. */
  static async httpCeiling(bigBytes: number): Promise<ServerProcess> {
    const port = await freePort();
    const child = spawn(process.execPath, [join(here, 'http-ceiling.ts'), String(port), String(bigBytes)], {
      env: process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const p = new ServerProcess(child, port);
    await p.#waitFor('/ready', 30_000);
    return p;
  }

  /** SIGTERM, then the exit (SIGKILL after 10 s). */
  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return;
    this.child.kill('SIGTERM');
    const t = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
    await this.#exited;
    clearTimeout(t);
  }
}
