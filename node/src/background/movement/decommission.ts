/**
 * The decommission side of data movement on one node: the
 * `DecommissionWorker` port of the admin services (start, cancel, clear)
 * and the serial queue.
 *
 * The queue lives in `pool.bin`: entries move `queued → active →
 * completed | failed | canceled`, one pool moving data at a time across the
 * cluster. The head of the queue is the `active` entry, else the earliest
 * `queued` one; the node that leads the head's pool (the node of its first
 * endpoint, which also receives that pool's admin mutations) runs its drain
 * (`drain.ts`). Every node supervises the queue the same way from the
 * records, on every change notice and on a short poll, so when one drain
 * ends the next pool's leader picks it up, and a restarted node resumes the
 * non-terminal entry it leads (terminal entries are skipped).
 */
import { clusterFacts, type PoolDescriptor } from '../../object/admin/data-movement-admin.ts';
import { checkDecommissionStart } from '../../object/admin/data-movement-rules.ts';
import type { DecommissionWorker } from '../../object/admin/services.ts';
import type { Pool } from '../../object/pools.ts';
import { type ConfiguredPoolMeta, isTerminal, type PoolMeta, projectPoolMeta, queuedEntry, withPoolEntries } from '../../object/records/pool-meta.ts';
import { SvcError } from '../../util/errors.ts';
import { Worker } from '../../util/worker.ts';
import { BackgroundTasks, type MovementContext } from './context.ts';
import { type DrainProgress, DrainTask } from './drain.ts';

export interface DecommissionerOptions {
  readonly ctx: MovementContext;
  readonly pools: readonly Pick<PoolDescriptor, 'id' | 'cmdline' | 'ellipsis'>[];
  /** True when this node leads `pool` (serves its first endpoint). */
  leads(pool: number): boolean;
  readonly bucketConcurrency: number;
  readonly entryConcurrency: number;
  readonly uploadGraceMs?: number;
  readonly uploadPollMs?: number;
  /** How often a running drain persists its progress (default 2 s). */
  readonly persistEveryMs?: number;
  /** The records changed: apply them on this node and tell the others; resolves with the nodes that did not acknowledge. */
  changed(): Promise<string[]>;
  /** Tells the other nodes to apply the records now (no local supervision); resolves with those that did not acknowledge. */
  fence(): Promise<string[]>;
}

interface Running {
  readonly pool: number;
  readonly task: DrainTask;
  readonly worker: Worker<DrainProgress>;
}

/** The entry whose pool moves data now or next: the active one, else the earliest queued. */
export function queueHead(pools: readonly ConfiguredPoolMeta[]): ConfiguredPoolMeta | undefined {
  const open = pools.filter((p) => p.decommission !== null && !isTerminal(p.decommission.state));
  const active = open.find((p) => p.decommission!.state === 'active');
  if (active) return active;
  return open.sort((a, b) => a.decommission!.queuedAt - b.decommission!.queuedAt || a.id - b.id)[0];
}

export class Decommissioner implements DecommissionWorker {
  readonly #o: DecommissionerOptions;
  #running: Running | undefined;
  #closed = false;
  readonly #background = new BackgroundTasks();

  constructor(o: DecommissionerOptions) {
    this.#o = o;
  }

  get #cmdlines(): string[] {
    return this.#o.pools.map((p) => p.cmdline);
  }

  #pool(i: number): Pool {
    const p = this.#o.ctx.layer.movement.pools.list[i];
    if (p === undefined) throw new SvcError('InvalidArgument', `specified pool index ${i} not found`);
    return p;
  }

  /** The drain running on this node, if any. */
  get running(): { pool: number; progress: DrainProgress } | undefined {
    const r = this.#running;
    return r === undefined ? undefined : { pool: r.pool, progress: r.worker.status().progress };
  }

  async start(pools: readonly number[], stored: readonly (number | undefined)[] = []): Promise<void> {
    const { ctx } = this.#o;
    const now = ctx.clock.now();
    await ctx.records.updatePoolMeta(async (meta) => {
      // Re-checked under pool.bin's lock (a rebalance start takes it too).
      const [rebalance, caps, buckets] = await Promise.all([ctx.records.readRebalanceMeta(), ctx.layer.capacity(), ctx.layer.listBuckets()]);
      checkDecommissionStart(clusterFacts(this.#o.pools, projectPoolMeta(meta, this.#cmdlines).pools, rebalance, caps, stored), pools);
      const names = buckets.map((b) => b.name);
      return withPoolEntries(
        meta,
        // The batch drains in the order it was given: queue time breaks the tie.
        pools.map((i, n) => ({ id: i, cmdline: this.#pool(i).cmdline, lastUpdate: now, decommission: queuedEntry(now + n, caps[i]?.usableTotal ?? 0, caps[i]?.usableFree ?? 0, names) })),
      );
    });
    ctx.logger.info({ event: 'decommission_queued', pools, cmdlines: pools.map((i) => this.#cmdlines[i]) }, `decommission queued for pool(s) ${pools.join(', ')}`);
    await this.#changed();
  }

  async cancel(pool: number): Promise<void> {
    const { ctx } = this.#o;
    const cmdline = this.#pool(pool).cmdline;
    const now = ctx.clock.now();
    await ctx.records.updatePoolMeta((meta) => {
      const e = projectPoolMeta(meta, this.#cmdlines).pools[pool]?.decommission ?? null;
      if (e === null || isTerminal(e.state)) throw new SvcError('XSvcDecommissionNotAllowed', `pool ${pool} (${cmdline}) is not being decommissioned; nothing to cancel`);
      return withPoolEntries(meta, [{ id: pool, cmdline, lastUpdate: now, decommission: { ...e, state: 'canceled', endTime: now } }]);
    });
    ctx.logger.info({ event: 'decommission_canceled', pool, cmdline }, `decommission of pool ${pool} canceled; moved objects stay where they are`);
    if (this.#running?.pool === pool) await this.#stopRunning();
    await this.#changed();
  }

  /** A failed or canceled entry was cleared (the admin service removed it): the pool reopens everywhere. */
  async cleared(pool: number): Promise<void> {
    this.#o.ctx.logger.info({ event: 'decommission_cleared', pool }, `decommission entry of pool ${pool} cleared; the pool takes new objects again`);
    await this.#changed();
  }

  async #changed(): Promise<void> {
    const failed = await this.#o.changed();
    if (failed.length > 0) {
      this.#o.ctx.logger.warn({ event: 'decommission_notice_unacknowledged', peers: failed }, 'some nodes did not acknowledge the change; they apply it from pool.bin within seconds');
    }
  }

  /**
   * Applies the queue in `meta` on this node: stops a local drain whose
   * entry left `active`, starts the head's drain when this node leads it.
   */
  async supervise(meta: PoolMeta | undefined): Promise<void> {
    const configured = projectPoolMeta(meta, this.#cmdlines).pools;
    const r = this.#running;
    if (r !== undefined) {
      const e = configured[r.pool]?.decommission ?? null;
      if (e === null || isTerminal(e.state)) await this.#stopRunning();
      else return;
    }
    const head = queueHead(configured);
    if (head === undefined || this.#closed || !this.#o.leads(head.id) || this.#running !== undefined) return;
    this.#startDrain(head.id);
  }

  #startDrain(pool: number): void {
    const { ctx } = this.#o;
    const task = new DrainTask({
      ctx,
      pool: this.#pool(pool),
      bucketConcurrency: this.#o.bucketConcurrency,
      entryConcurrency: this.#o.entryConcurrency,
      ...(this.#o.uploadGraceMs !== undefined ? { uploadGraceMs: this.#o.uploadGraceMs } : {}),
      ...(this.#o.uploadPollMs !== undefined ? { uploadPollMs: this.#o.uploadPollMs } : {}),
      fence: () => this.#o.fence(),
    });
    const worker = new Worker(task, { clock: ctx.clock, logger: ctx.logger, persistEveryMs: this.#o.persistEveryMs ?? 2_000, idleMs: this.#o.uploadPollMs ?? 5_000 });
    const running: Running = { pool, task, worker };
    this.#running = running;
    worker.start();
    this.#background.run(
      async () => {
        const st = await worker.done();
        await task.close();
        if (this.#running === running) this.#running = undefined;
        // The next pool in the queue (or the pool's admission) follows from the records.
        if (!this.#closed && st.state !== 'stopped') await this.#changed();
      },
      (err) => ctx.logger.error({ event: 'decommission_supervision_failed', pool, err }, 'decommission supervision failed'),
    );
  }

  async #stopRunning(): Promise<void> {
    const r = this.#running;
    if (r === undefined) return;
    await r.worker.stop();
    await r.task.close();
    if (this.#running === r) this.#running = undefined;
  }

  /** The drain worker running on this node (none or one). */
  workers(): Worker<DrainProgress>[] {
    return this.#running === undefined ? [] : [this.#running.worker];
  }

  /** Stops a local drain without changing its entry (it resumes at the next start). */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#stopRunning();
    await this.#background.idle();
  }
}
