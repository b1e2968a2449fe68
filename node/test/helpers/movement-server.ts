/**
 * A real `svc server` process over several pools of tmpfs drives (each drive
 * its own small file system, so capacity is per drive), restartable with the
 * same drives: a graceful stop, a kill -9, or a restart with fewer pool
 * arguments (a drained pool removed from the launch command).
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { S3Client } from '@aws-sdk/client-s3';
import type { DecommissionStatusReport, RebalanceStatus } from '../../src/object/admin/types.ts';
import { freePort, runSvc, type SvcRun, tempDir, waitReady } from '../svc-process.ts';
import { admin, type AdminRequest, type Creds } from './admin.ts';
import { mountTmpfs, unmountUnder } from './tmpfs.ts';
import { keepAliveHandler } from './s3-client.ts';

export interface PoolArg {
  /** Folder name of the pool's drives (`<base>/<name>/d1..dN`). */
  name: string;
  drives: number;
  /** Size of each drive's tmpfs. */
  driveBytes: number;
}

export class MovementServer {
  readonly base: string;
  readonly creds: Creds = { accessKey: 'moveadmin', secretKey: 'move-admin-secret' };
  /** Volume argument of each pool, in configured order. */
  readonly volumes: string[];
  readonly #pools: readonly PoolArg[];
  readonly #env: Record<string, string>;
  #port = 0;
  #run: SvcRun | undefined;

  private constructor(base: string, pools: readonly PoolArg[], env: Record<string, string>) {
    this.base = base;
    this.#pools = pools;
    this.#env = env;
    this.volumes = pools.map((p) => `${base}/${p.name}/d{1...${p.drives}}`);
  }

  /** Mounts the drives; starts nothing. */
  static async create(pools: readonly PoolArg[], env: Record<string, string> = {}): Promise<MovementServer> {
    const s = new MovementServer(tempDir('move'), pools, env);
    for (const p of pools) for (let d = 1; d <= p.drives; d++) mountTmpfs(join(s.base, p.name, `d${d}`), p.driveBytes);
    s.#port = await freePort();
    return s;
  }

  get url(): string {
    return `http://127.0.0.1:${this.#port}`;
  }

  get run(): SvcRun | undefined {
    return this.#run;
  }

  /** Drive roots of a pool (by its position in `create`). */
  roots(pool: number): string[] {
    const p = this.#pools[pool]!;
    return Array.from({ length: p.drives }, (_, d) => join(this.base, p.name, `d${d + 1}`));
  }

  /** Starts `svc server` with these volume arguments (default: every pool) and waits until it is ready. */
  async start(volumes: readonly string[] = this.volumes, env: Record<string, string> = {}): Promise<void> {
    if (this.#run !== undefined) throw new Error('already running');
    const run = await runSvc(['server', ...volumes], { SVC_ACCESS_KEY: this.creds.accessKey, SVC_SECRET_KEY: this.creds.secretKey, SVC_CONSOLE_ENABLE: 'false', ...this.#env, ...env }, { port: this.#port });
    this.#run = run;
    await waitReady(run, this.url);
  }

  /** SIGKILL: no shutdown path runs. */
  async kill9(): Promise<void> {
    const run = this.#run;
    if (run === undefined) return;
    run.child.kill('SIGKILL');
    await run.exited;
    this.#run = undefined;
  }

  /** Graceful stop (SIGTERM). */
  async stop(): Promise<void> {
    const run = this.#run;
    this.#run = undefined;
    await run?.stop();
  }

  /** JSON log records of the running process. */
  logs(): Record<string, unknown>[] {
    return this.#run?.logs() ?? [];
  }

  s3(opts: { maxAttempts?: number } = {}): S3Client {
    return new S3Client({
      requestHandler: keepAliveHandler(),
      endpoint: this.url,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: this.creds.accessKey, secretAccessKey: this.creds.secretKey },
      maxAttempts: opts.maxAttempts ?? 1,
    });
  }

  admin(r: AdminRequest): ReturnType<typeof admin> {
    return admin(this.url, this.creds, r);
  }

  async decommissionStatus(): Promise<DecommissionStatusReport> {
    const r = await this.admin({ method: 'GET', path: 'v3/decommission/status' });
    if (r.status !== 200) throw new Error(`decommission status: ${r.status} ${r.body}`);
    return r.json() as DecommissionStatusReport;
  }

  async rebalanceStatus(): Promise<RebalanceStatus> {
    const r = await this.admin({ method: 'GET', path: 'v3/rebalance/status' });
    if (r.status !== 200) throw new Error(`rebalance status: ${r.status} ${r.body}`);
    return r.json() as RebalanceStatus;
  }

  /** Polls the decommission status until `done` holds for it. */
  async waitDecommission(done: (r: DecommissionStatusReport) => boolean, timeoutMs = 60_000): Promise<DecommissionStatusReport> {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const r = await this.decommissionStatus();
      if (done(r)) return r;
      if (Date.now() > end) throw new Error(`decommission status still ${JSON.stringify(r.pools.map((p) => [p.id, p.status, p.decommissionInfo.objectsDecommissioned, p.decommissionInfo.lastError]))}`);
      await new Promise((res) => setTimeout(res, 100));
    }
  }

  async cleanup(): Promise<void> {
    await this.stop().catch(() => undefined);
    unmountUnder(this.base);
    rmSync(this.base, { recursive: true, force: true });
  }
}
