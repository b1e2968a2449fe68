/**
 * Test helper: runs the real `svc` command (node/bin/svc.js under the repo's
 * Node 24) as a child process on loopback ports picked by the OS.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const REPO = resolve(import.meta.dirname, '..', '..');
export const NODE = join(REPO, 'node_modules', '.bin', 'node');
export const SVC = join(REPO, 'node', 'bin', 'svc.js');

export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), `svc-${prefix}-`));
}

/** A port that was free a moment ago on 127.0.0.1. */
export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

export interface SvcRun {
  readonly child: ChildProcess;
  readonly port: number;
  readonly consolePort: number;
  stdout(): string;
  stderr(): string;
  /** JSON log records seen so far. */
  logs(): Record<string, unknown>[];
  /** Resolves with the exit code. */
  readonly exited: Promise<number | null>;
  /** Resolves true once the node logs `startup_address`, false if it exits first. */
  readonly started: Promise<boolean>;
  stop(): Promise<number | null>;
}

export async function runSvc(args: string[], env: Record<string, string> = {}, opts: { port?: number; wrap?: string[]; nodeArgs?: string[] } = {}): Promise<SvcRun> {
  const port = opts.port ?? (await freePort());
  const consolePort = await freePort();
  // `wrap`: a command prefix the program runs under (e.g. nsenter into a mount namespace); `nodeArgs`: Node options.
  const [bin, ...pre] = [...(opts.wrap ?? []), NODE];
  const child = spawn(bin!, [...pre, ...(opts.nodeArgs ?? []), SVC, ...args], {
    cwd: REPO,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      SVC_ADDRESS: `127.0.0.1:${port}`,
      SVC_CONSOLE_ADDRESS: `127.0.0.1:${consolePort}`,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  let onStart: (v: boolean) => void = () => {};
  const started = new Promise<boolean>((r) => {
    onStart = r;
  });
  child.stdout!.on('data', (d: Buffer) => {
    out += d.toString();
    if (out.includes('"event":"startup_address"')) onStart(true);
  });
  child.stderr!.on('data', (d: Buffer) => {
    err += d.toString();
  });
  const exited = new Promise<number | null>((r) =>
    child.on('exit', (code) => {
      onStart(false);
      r(code);
    }),
  );
  const logs = () =>
    out
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  return {
    child,
    port,
    consolePort,
    stdout: () => out,
    stderr: () => err,
    logs,
    exited,
    started,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

/** What one run of the `svc` command printed and how it exited. */
export interface CommandRun {
  code: number | null;
  out: string;
  err: string;
}

/** Runs the `svc` command once to completion (the admin client, `svc ping`, …) with only PATH, HOME and `env`. */
export function runSvcCommand(args: string[], env: Record<string, string>): Promise<CommandRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(NODE, [SVC, ...args], { cwd: REPO, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, out, err }));
  });
}

/** The message of the admin error `code` a `svc ... --json` run was refused with (exit 1, the server's `{Code, Message}` on stdout); any other outcome throws. */
export function refusedWith(r: CommandRun, code: string): string {
  const e = r.code === 1 ? (JSON.parse(r.out) as { Code?: string; Message?: string }) : {};
  if (e.Code !== code) throw new Error(`expected a refusal with ${code} (exit 1), got exit ${r.code}: ${r.out}${r.err}`);
  return e.Message ?? '';
}

/** Waits until `url`'s `/health/ready` answers 200 (the node formatted and loaded), failing if the process exits first or 60 s pass. */
export async function waitReady(run: SvcRun, url: string): Promise<void> {
  const end = Date.now() + 60_000;
  for (;;) {
    if (run.child.exitCode !== null) throw new Error(`svc server exited: ${run.stderr()}${run.stdout().slice(-3000)}`);
    if (await fetch(`${url}/health/ready`).then((r) => r.status === 200, () => false)) return;
    if (Date.now() > end) throw new Error(`svc server not ready: ${run.stdout().slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
