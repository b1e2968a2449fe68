/**
 * A real `svc server` process for contract tests: local-path pools under a
 * fresh temp dir, listening on 127.0.0.1:<free port>. The program is the
 * repository's own `node/bin/svc.js`, started as a user would. As root each
 * drive is a small file system of its own (tmpfs): temp-dir drives all report
 * the host disk, and the decommission's capacity rule would then depend on
 * how full that disk is.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { canMountTmpfs, mountTmpfs, unmountUnder } from '../../node/test/helpers/tmpfs.ts';

export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const NODE_BIN = join(REPO, 'node_modules/.bin/node');
export const SVC_JS = join(REPO, 'node/bin/svc.js');

export async function freePort(host = '127.0.0.1'): Promise<number> {
  const s = createServer();
  s.listen(0, host);
  await once(s, 'listening');
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

export interface SvcServer {
  readonly url: string;
  readonly pools: string[];
  readonly accessKey: string;
  readonly secretKey: string;
  log(): string;
  stop(): Promise<void>;
}

/** Starts `svc server` with `pools` pools of `drives` local drives each and waits until it is ready. */
export async function startSvcServer(opts: { pools: number; drives: number }): Promise<SvcServer> {
  const base = await mkdtemp(join(tmpdir(), 'svc-admin-contract-'));
  const pools: string[] = [];
  for (let p = 0; p < opts.pools; p++) {
    for (let d = 1; d <= opts.drives; d++) {
      await mkdir(join(base, `p${p}`, `d${d}`), { recursive: true });
      if (canMountTmpfs()) mountTmpfs(join(base, `p${p}`, `d${d}`), 256 * 1024 * 1024);
    }
    pools.push(join(base, `p${p}`, `d{1...${opts.drives}}`));
  }
  const port = await freePort();
  const accessKey = 'contractadmin';
  const secretKey = 'contract-secret-key';
  let output = '';
  const child: ChildProcess = spawn(NODE_BIN, [SVC_JS, 'server', ...pools], {
    cwd: REPO,
    env: {
      PATH: process.env['PATH'] ?? '/usr/bin:/bin',
      HOME: process.env['HOME'] ?? '/root',
      SVC_ADDRESS: `127.0.0.1:${port}`,
      SVC_CONSOLE_ENABLE: 'false',
      SVC_ACCESS_KEY: accessKey,
      SVC_SECRET_KEY: secretKey,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (b: Buffer) => (output += b.toString()));
  child.stderr!.on('data', (b: Buffer) => (output += b.toString()));
  const exited = once(child, 'exit');
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`svc server exited: ${output.slice(-2000)}`);
    const ok = await fetch(`${url}/health/ready`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`svc server not ready within 60 s: ${output.slice(-2000)}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    url,
    pools,
    accessKey,
    secretKey,
    log: () => output,
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        const t = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(t);
      }
      unmountUnder(base);
      await rm(base, { recursive: true, force: true });
    },
  };
}
