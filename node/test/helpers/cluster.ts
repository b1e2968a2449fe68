/**
 * Test harness: N real `svc` processes on 127.0.0.1…127.0.0.N, one port, the
 * same volume arguments on every node (e.g. `http://127.0.0.{1...4}:<port>/
 * <base>/data/d{1...2}`).
 *
 * Several pools on different node ranges (`pools`: e.g. nodes 1–4 then
 * 5–8, each `http://127.0.0.{a...b}:<port>/<base>/data/p<i>/d{1...n}`)
 * model a cluster that grows: `usePools(1)` starts with the first pool
 * only, `usePools(2)` + `restartAll()` restarts every node with the second
 * volume argument appended, as an operator does.
 *
 * On one machine every node would see the same drive paths, so each node runs
 * in its own mount namespace (`unshare --mount --propagation private`) with
 * its own folder bind-mounted on the shared path. Production code carries no
 * test hook: the processes are started exactly as an operator would, with
 * `SVC_ADDRESS=127.0.0.K:<port>`.
 *
 * Every run uses a fresh `/tmp/svc-cluster-<random>` base so concurrent test
 * files never collide. Needs root (mount) — true here and in CI.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createWriteStream, existsSync, type WriteStream } from 'node:fs';
import { mkdir, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { S3Client } from '@aws-sdk/client-s3';
import { keepAliveHandler } from './s3-client.ts';
import { Agent, request } from 'undici';
import type { NetNamespaces } from './netns.ts';
import { mountTmpfs, unmountUnder } from './tmpfs.ts';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const NODE_BIN = join(REPO, 'node_modules/.bin/node');
/** The program each node runs with `server <volume>`: the real `svc` command. */
const SVC_JS = join(REPO, 'node/bin/svc.js');

/**
 * Environment that runs a node with its clock `offset` off (libfaketime,
 * e.g. `+600s`), or undefined when libfaketime is not installed. The
 * library is preloaded into the node itself: the `faketime` wrapper forks,
 * and stopping it would leave the node running.
 */
export function skewedClockEnv(offset: string): Record<string, string> | undefined {
  const lib = ['/usr/lib/x86_64-linux-gnu', '/usr/lib/aarch64-linux-gnu', '/usr/lib']
    .map((d) => join(d, 'faketime', 'libfaketimeMT.so.1'))
    .find((p) => existsSync(p));
  return lib === undefined ? undefined : { LD_PRELOAD: lib, FAKETIME: offset, FAKETIME_DONT_FAKE_MONOTONIC: '1' };
}

/** True when this machine can give a process its own mount namespace. */
export function canUseMountNamespaces(): boolean {
  const r = spawnSync('unshare', ['--mount', '--propagation', 'private', 'true'], { stdio: 'ignore' });
  return r.status === 0;
}

/** A TCP port free on 127.0.0.1 (then used on every 127.0.0.K). */
export async function freePort(): Promise<number> {
  const s = createServer();
  s.listen(0, '127.0.0.1');
  await once(s, 'listening');
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** One pool of a multi-pool cluster: a range of nodes, each with the same number of drives. */
export interface ClusterPoolSpec {
  /** First and last node (1-based, inclusive). */
  nodes: [number, number];
  drivesPerNode: number;
}

/**
 * Pools given as raw volume arguments (from the port and the shared drive
 * path) plus the drive folders to create in every node's folder: any layout,
 * every node runs every pool's argument.
 */
export interface ClusterCustomPools {
  volumes: (port: number, sharedPath: string) => string[];
  driveDirs: string[];
}

export interface ClusterOptions {
  /** Highest node number. */
  nodes: number;
  /** Drives per node of the single pool over nodes 1…`nodes` (when `pools` is not given). */
  drivesPerNode: number;
  /**
   * Pools on node ranges, in pool order (folders `p<i>/d<j>`), or a custom
   * layout; default: one pool over every node,
   * `http://127.0.0.{1...N}:<port><shared>/d{1...M}`.
   */
  pools?: ClusterPoolSpec[] | ClusterCustomPools;
  /**
   * Each drive on its own tmpfs of this many bytes (node-range layouts):
   * capacity is real and per drive, as decommission's capacity rule and
   * rebalance's fill target need. The mounts survive node restarts (they
   * live in the host's namespace; each node's bind mount includes them).
   */
  tmpfsBytes?: (pool: number) => number;
  /** Extra environment for every node. */
  env?: Record<string, string>;
  accessKey?: string;
  secretKey?: string;
  /** Node K reads its root credential from these files (`SVC_*_KEY_FILE`) instead of `SVC_*_KEY` values. */
  credentialFiles?: (k: number) => { accessKey: string; secretKey: string };
  /**
   * TLS: `https://` endpoints, node K's certificate directory (`SVC_CERTS_DIR`),
   * and the CA the test's own clients trust.
   */
  tls?: { readonly ca: string; readonly certsDir: (k: number) => string };
  /**
   * Each node in a network namespace of its own on a private bridge
   * (`netns.ts`): addresses 10.A.B.K instead of 127.0.0.K, and faults on a
   * node's link (partition, slow). The caller owns it (closes it after the cluster).
   */
  network?: NetNamespaces;
}

interface NodeProc {
  child: ChildProcess;
  exited: Promise<number | null>;
  log: WriteStream;
}

export class TestCluster {
  readonly base: string;
  /** The drive root path every node sees (its own folder mounted there). */
  readonly sharedPath: string;
  readonly port: number;
  /** The first pool's volume argument. */
  readonly volume: string;
  /** Every pool's volume argument, in pool order. */
  readonly volumes: readonly string[];
  readonly accessKey: string;
  readonly secretKey: string;
  readonly #opts: ClusterOptions;
  /** Node ranges of the pools (undefined for a custom layout: every node runs every pool). */
  readonly #ranges: readonly ClusterPoolSpec[] | undefined;
  /** Drive folder of pool i under a node's folder ('' for the single default pool). */
  readonly #poolDir: (i: number) => string;
  #active: number;
  readonly #procs = new Map<number, NodeProc>();
  readonly #clients = new Map<number, S3Client>();
  #agent: Agent | undefined;

  private constructor(opts: ClusterOptions, base: string, port: number) {
    this.#opts = opts;
    this.base = base;
    this.port = port;
    this.sharedPath = join(base, 'data');
    const pools = opts.pools;
    this.#poolDir = pools ? (i) => `p${i + 1}` : () => '';
    if (pools !== undefined && !Array.isArray(pools)) {
      this.#ranges = undefined;
      this.volumes = pools.volumes(port, this.sharedPath);
    } else {
      this.#ranges = pools ?? [{ nodes: [1, opts.nodes], drivesPerNode: opts.drivesPerNode }];
      const hosts = (a: number, b: number) => opts.network?.ellipsis(a, b) ?? `127.0.0.{${a}...${b}}`;
      this.volumes = this.#ranges.map(
        (p, i) => `${opts.tls ? 'https' : 'http'}://${hosts(p.nodes[0], p.nodes[1])}:${port}${join(this.sharedPath, this.#poolDir(i))}/d{1...${p.drivesPerNode}}`,
      );
    }
    this.volume = this.volumes[0]!;
    this.#active = this.volumes.length;
    this.accessKey = opts.accessKey ?? 'clusteradmin';
    this.secretKey = opts.secretKey ?? `secret-${randomBytes(6).toString('hex')}`;
  }

  /** Creates the folders (node K's drives under `<base>/node<K>/[p<i>/]d*`); starts nothing. */
  static async create(opts: ClusterOptions): Promise<TestCluster> {
    const base = `/tmp/svc-cluster-${randomBytes(6).toString('hex')}`;
    const c = new TestCluster(opts, base, await freePort());
    await mkdir(c.sharedPath, { recursive: true });
    if (opts.pools !== undefined && !Array.isArray(opts.pools)) {
      for (let k = 1; k <= opts.nodes; k++) for (const d of opts.pools.driveDirs) await mkdir(join(c.nodeDir(k), d), { recursive: true });
      return c;
    }
    for (const [i, p] of c.#ranges!.entries()) {
      for (let k = p.nodes[0]; k <= p.nodes[1]; k++) {
        for (let d = 1; d <= p.drivesPerNode; d++) {
          await mkdir(c.drivePath(k, i, d), { recursive: true });
          if (opts.tmpfsBytes !== undefined) mountTmpfs(c.drivePath(k, i, d), opts.tmpfsBytes(i));
        }
      }
    }
    return c;
  }

  /** Node K's folder holding drive `d` (1-based) of pool `pool` (0-based); node-range layouts only. */
  drivePath(k: number, pool: number, d: number): string {
    if (!this.#ranges) throw new Error('drivePath needs pools given as node ranges');
    return join(this.nodeDir(k), this.#poolDir(pool), `d${d}`);
  }

  /** Nodes of pool `pool` (0-based); every node for a custom layout. */
  nodesOf(pool: number): number[] {
    const [a, b] = this.#ranges?.[pool]?.nodes ?? [1, this.#opts.nodes];
    return Array.from({ length: b - a + 1 }, (_, i) => a + i);
  }

  /** Nodes of the pools in use, ascending. */
  activeNodes(): number[] {
    return [...new Set(this.volumes.slice(0, this.#active).flatMap((_v, i) => this.nodesOf(i)))].sort((a, b) => a - b);
  }

  /** Nodes started from now on get the volume arguments of the first `count` pools. */
  usePools(count: number): void {
    if (count < 1 || count > this.volumes.length) throw new Error(`pool count ${count} out of 1…${this.volumes.length}`);
    this.#active = count;
  }

  /** Stops every running node (graceful) and starts every node of the pools in use. */
  async restartAll(): Promise<void> {
    await Promise.all([...this.#procs.keys()].map((k) => this.stop(k, 'SIGTERM')));
    await Promise.all(this.activeNodes().map((k) => this.start(k)));
  }

  /** Node K's own folder, mounted on `sharedPath` inside its namespace. */
  nodeDir(k: number): string {
    return join(this.base, `node${k}`);
  }

  host(k: number): string {
    return this.#opts.network?.ip(k) ?? `127.0.0.${k}`;
  }

  /** Node K's process id while it runs (`nsenter` into its mount namespace, `/proc`). */
  pid(k: number): number | undefined {
    return this.#procs.get(k)?.child.pid;
  }

  url(k: number): string {
    return `${this.#opts.tls ? 'https' : 'http'}://${this.host(k)}:${this.port}`;
  }

  /** The undici dispatcher trusting the test CA (TLS clusters). */
  #dispatcher(): Agent | undefined {
    if (!this.#opts.tls) return undefined;
    this.#agent ??= new Agent({ connect: { ca: this.#opts.tls.ca } });
    return this.#agent;
  }

  logPath(k: number): string {
    return join(this.base, `node${k}.log`);
  }

  async logs(k: number): Promise<string> {
    return readFile(this.logPath(k), 'utf8').catch(() => '');
  }

  /** The last `n` warning and error records of every node, for a failed test's output. */
  async warnings(n = 40): Promise<string> {
    const out: string[] = [];
    for (let k = 1; k <= this.#opts.nodes; k++) {
      const lines = (await this.logs(k)).split('\n').filter((l) => /"level":"(warn|error|fatal)"/.test(l));
      out.push(`--- node ${k}: last ${Math.min(n, lines.length)} of ${lines.length} warnings/errors`, ...lines.slice(-n));
    }
    return out.join('\n');
  }

  /** Resident set size of node K in bytes (from /proc; the child execs into node). */
  async rssBytes(k: number): Promise<number> {
    const pid = this.#procs.get(k)?.child.pid;
    if (pid === undefined) throw new Error(`node ${k} is not running`);
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const m = /^VmRSS:\s+(\d+) kB$/m.exec(status);
    if (!m) throw new Error(`no VmRSS for node ${k}`);
    return Number(m[1]) * 1024;
  }

  isRunning(k: number): boolean {
    return this.#procs.has(k);
  }

  /**
   * Starts node K (its own mount namespace, `SVC_ADDRESS=127.0.0.K:<port>`); `env` adds to this node's
   * environment; `wrap` is a command the node runs under (e.g. `['faketime', '-f', '+600s']`: a skewed clock).
   */
  async start(k: number, env: Record<string, string> = {}, wrap: readonly string[] = []): Promise<void> {
    if (this.#procs.has(k)) throw new Error(`node ${k} already running`);
    const log = createWriteStream(this.logPath(k), { flags: 'a' });
    await once(log, 'open');
    // --rbind: the node's folder with the drive mounts inside it (tmpfsBytes).
    const script = 'mount --rbind "$SVC_TEST_OWN_DIR" "$SVC_TEST_SHARED_DIR" && exec $SVC_TEST_WRAP "$SVC_TEST_NODE" "$SVC_TEST_SVC_JS" server "$@"';
    const volumes = this.volumes.slice(0, this.#active);
    const unshare = ['unshare', '--mount', '--propagation', 'private', 'sh', '-c', script, 'svc-node', ...volumes];
    const [cmd, ...args] = this.#opts.network ? [...this.#opts.network.wrap(k), ...unshare] : unshare;
    const child = spawn(cmd!, args, {
      cwd: REPO,
      env: {
        PATH: process.env['PATH'] ?? '/usr/bin:/bin',
        HOME: process.env['HOME'] ?? '/root',
        SVC_TEST_OWN_DIR: this.nodeDir(k),
        SVC_TEST_SHARED_DIR: this.sharedPath,
        SVC_TEST_NODE: NODE_BIN,
        SVC_TEST_SVC_JS: SVC_JS,
        SVC_TEST_WRAP: wrap.join(' '),
        SVC_ADDRESS: `${this.host(k)}:${this.port}`,
        SVC_CONSOLE_ENABLE: 'false',
        ...this.#credentialEnv(k),
        ...(this.#opts.tls ? { SVC_CERTS_DIR: this.#opts.tls.certsDir(k) } : {}),
        SVC_OBS_LOGGER_LEVEL: 'info',
        ...this.#opts.env,
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.pipe(log, { end: false });
    child.stderr!.pipe(log, { end: false });
    const exited = new Promise<number | null>((r) => child.once('exit', (code, sig) => r(code ?? (sig ? -1 : null))));
    this.#procs.set(k, { child, exited, log });
    void exited.then(() => {
      if (this.#procs.get(k)?.child === child) this.#procs.delete(k);
      log.end();
    });
  }

  #credentialEnv(k: number): Record<string, string> {
    const files = this.#opts.credentialFiles?.(k);
    if (files === undefined) return { SVC_ACCESS_KEY: this.accessKey, SVC_SECRET_KEY: this.secretKey };
    return { SVC_ACCESS_KEY_FILE: files.accessKey, SVC_SECRET_KEY_FILE: files.secretKey };
  }

  /** Stops node K: SIGKILL (a crash, default) or SIGTERM (graceful). Resolves once it exited. */
  async stop(k: number, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const p = this.#procs.get(k);
    if (p === undefined) return;
    p.child.kill(signal);
    const timer = setTimeout(() => p.child.kill('SIGKILL'), 10_000);
    await p.exited;
    clearTimeout(timer);
    this.#procs.delete(k);
  }

  /** Sends `signal` to node K's process without waiting for it to exit (SIGSTOP freezes it, SIGCONT resumes it). */
  signal(k: number, signal: NodeJS.Signals): void {
    const p = this.#procs.get(k);
    if (p === undefined) throw new Error(`node ${k} is not running`);
    p.child.kill(signal);
  }

  async restart(k: number): Promise<void> {
    await this.stop(k);
    await this.start(k);
  }

  /** GET a path on node K (no auth: health probes). */
  async get(k: number, path: string): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
    const dispatcher = this.#dispatcher();
    const res = await request(`${this.url(k)}${path}`, { method: 'GET', headersTimeout: 5_000, bodyTimeout: 5_000, ...(dispatcher ? { dispatcher } : {}) });
    return { status: res.statusCode, headers: res.headers, body: await res.body.text() };
  }

  /** Waits until `/health` answers on node K (the listener is up). */
  async waitLive(k: number, timeoutMs = 20_000): Promise<void> {
    await this.#waitFor(k, async () => (await this.get(k, '/health')).status === 200, timeoutMs, 'live');
  }

  /** Waits until `/health/ready` answers 200 on node K. */
  async waitReady(k: number, timeoutMs = 30_000): Promise<void> {
    await this.#waitFor(k, async () => (await this.get(k, '/health/ready')).status === 200, timeoutMs, 'ready');
  }

  async #waitFor(k: number, probe: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
    const end = Date.now() + timeoutMs;
    for (;;) {
      if (!this.#procs.has(k)) throw new Error(`node ${k} exited while waiting for ${what}:\n${(await this.logs(k)).slice(-4000)}`);
      try {
        if (await probe()) return;
      } catch {
        // Not listening yet.
      }
      if (Date.now() > end) throw new Error(`node ${k} not ${what} within ${timeoutMs} ms:\n${(await this.logs(k)).slice(-4000)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** An S3 client (@aws-sdk/client-s3, no retries) talking to node K, kept until `close`. */
  s3(k: number): S3Client {
    let c = this.#clients.get(k);
    if (c === undefined) {
      c = new S3Client({
        endpoint: this.url(k),
        region: 'us-east-1',
        forcePathStyle: true,
        credentials: { accessKeyId: this.accessKey, secretAccessKey: this.secretKey },
        maxAttempts: 1,
        requestHandler: keepAliveHandler(this.#opts.tls ? { agent: { ca: this.#opts.tls.ca } } : {}),
      });
      this.#clients.set(k, c);
    }
    return c;
  }

  /** Stops every node and removes the base folder. */
  async close(): Promise<void> {
    for (const c of this.#clients.values()) c.destroy();
    await this.#agent?.close();
    await Promise.all([...this.#procs.keys()].map((k) => this.stop(k)));
    unmountUnder(this.base);
    await rm(this.base, { recursive: true, force: true });
  }
}
