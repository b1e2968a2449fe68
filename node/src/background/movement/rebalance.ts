/**
 * The rebalance side of data movement on one node: the `RebalanceWorker`
 * port of the admin services (start, stop), the workers of the pools this
 * node leads, and what a restart does.
 *
 * - start: under `pool.bin`'s lock (so a decommission start cannot slip in
 *   between) and `rebalance.bin`'s, the rules are checked again and the plan
 *   persisted (`rebalance-plan.ts`): participating pools `started`. Then the
 *   start propagates: every node applies the admission fence (new keys avoid
 *   the participating pools) and the leaders of the participating pools
 *   start their workers. If a node does not acknowledge, the start is rolled
 *   back (every started pool `failed`, fences lifted, workers stopped) and
 *   the refusal names the nodes that did not start and those that did not
 *   acknowledge the rollback.
 * - stop: the record is marked (`stoppedAt`, started pools `stopping`), the
 *   fence is lifted, local and remote workers stop and persist `stopped`
 *   with the moves made; `stopPropagation` records which nodes did not
 *   acknowledge.
 * - restart: a node never starts a rebalance by itself. Pools it leads that
 *   the record shows `started` or `stopping` lost their worker with the
 *   process: they are recorded `stopped`, with the reason in `lastError`.
 */
import { randomUUID } from 'node:crypto';
import { SvcError } from '../../util/errors.ts';
import { clusterFacts, type PoolDescriptor } from '../../object/admin/data-movement-admin.ts';
import { checkRebalanceStart } from '../../object/admin/data-movement-rules.ts';
import type { RebalanceWorker } from '../../object/admin/services.ts';
import { projectPoolMeta } from '../../object/records/pool-meta.ts';
import { type RebalanceMeta, rebalanceRunning } from '../../object/records/rebalance-meta.ts';
import { Worker } from '../../util/worker.ts';
import { BackgroundTasks, errorMessage, type MovementContext, type MovementNotice } from './context.ts';
import { planRebalance, targetFill } from './rebalance-plan.ts';
import { RebalanceTask, type RebalanceTaskProgress } from './rebalance-task.ts';

/** Longest a node waits for its rebalance workers to stop before it acknowledges a stop. */
const LOCAL_STOP_WAIT_MS = 6_000;
const START_NOTICE_TIMEOUT_MS = 5_000;
const STOP_NOTICE_TIMEOUT_MS = 8_000;

export interface RebalancerOptions {
  readonly ctx: MovementContext;
  readonly pools: readonly Pick<PoolDescriptor, 'id' | 'cmdline' | 'ellipsis'>[];
  leads(pool: number): boolean;
  /** `SVC_REBALANCE_MAX_ATTEMPTS`. */
  readonly attempts: number;
  readonly persistEveryMs?: number;
  /** Applies the records on this node (admission, supervision). */
  refresh(): Promise<void>;
  /** Sends a notice to every other node; resolves with the nodes that did not acknowledge. */
  notify(notice: MovementNotice, timeoutMs: number): Promise<string[]>;
}

interface Running {
  readonly id: string;
  readonly pool: number;
  readonly task: RebalanceTask;
  readonly worker: Worker<RebalanceTaskProgress>;
}

export class Rebalancer implements RebalanceWorker {
  readonly #o: RebalancerOptions;
  readonly #running = new Map<number, Running>();
  #closed = false;
  readonly #background = new BackgroundTasks();

  constructor(o: RebalancerOptions) {
    this.#o = o;
  }

  get #cmdlines(): string[] {
    return this.#o.pools.map((p) => p.cmdline);
  }

  /** Pools whose rebalance worker runs on this node. */
  get runningPools(): number[] {
    return [...this.#running.keys()].sort((a, b) => a - b);
  }

  async start(): Promise<{ id: string }> {
    const { ctx } = this.#o;
    const id = randomUUID();
    let meta: RebalanceMeta | undefined;
    await ctx.records.updatePoolMeta(async (poolMeta) => {
      await ctx.records.updateRebalanceMeta(async (cur) => {
        const caps = await ctx.layer.capacity();
        checkRebalanceStart(clusterFacts(this.#o.pools, projectPoolMeta(poolMeta, this.#cmdlines).pools, cur, caps));
        meta = planRebalance(id, ctx.clock.now(), this.#o.pools, caps);
        return meta;
      });
      return undefined;
    });
    const m = meta!;
    ctx.logger.info(
      { event: 'rebalance_started', id, participating: m.pools.filter((p) => p.participating).map((p) => p.id), target: targetFill(m) },
      `rebalance ${id} started`,
    );
    try {
      await this.notice({ kind: 'rebalance-start', id });
    } catch (err) {
      return this.#rollback(id, [`${ctx.selfId} (${errorMessage(err)})`]);
    }
    const failed = await this.#o.notify({ kind: 'rebalance-start', id }, START_NOTICE_TIMEOUT_MS);
    if (failed.length > 0) await this.#rollback(id, failed);
    return { id };
  }

  async #rollback(id: string, failed: string[]): Promise<never> {
    const { ctx } = this.#o;
    const now = ctx.clock.now();
    const why = `start propagation failed: ${failed.join(', ')} did not acknowledge the start; the rebalance was rolled back`;
    await ctx.records.updateRebalanceMeta((cur) =>
      cur?.id !== id
        ? undefined
        : { ...cur, pools: cur.pools.map((p) => (p.state === 'started' || p.stopping ? { ...p, state: 'failed', stopping: false, lastError: why } : p)) },
    );
    await this.notice({ kind: 'rebalance-stop', id });
    const unrolled = await this.#o.notify({ kind: 'rebalance-stop', id }, STOP_NOTICE_TIMEOUT_MS);
    await ctx.records.updateRebalanceMeta((cur) =>
      cur?.id !== id
        ? undefined
        : {
            ...cur,
            stopPropagation: { lastAttemptAt: now, failedPeers: failed, terminalReloadAttemptAt: now, terminalReloadFailedPeers: unrolled, pendingTerminalReload: unrolled.length > 0 },
          },
    );
    ctx.logger.error({ event: 'rebalance_start_rolled_back', id, failedPeers: failed, rollbackFailedPeers: unrolled }, why);
    throw new SvcError(
      'XSvcRebalanceStartFailed',
      `rebalance ${id} did not start on ${failed.join(', ')}; it was rolled back${unrolled.length > 0 ? `, but ${unrolled.join(', ')} did not acknowledge the rollback (they apply it from rebalance.bin within seconds)` : ' on every node'}. Bring the nodes back online and start again`,
      { id, failedPeers: failed, rollbackFailedPeers: unrolled },
    );
  }

  async stop(): Promise<void> {
    const { ctx } = this.#o;
    const now = ctx.clock.now();
    let id: string | undefined;
    await ctx.records.updateRebalanceMeta((cur) => {
      if (cur === undefined || !rebalanceRunning(cur)) return undefined;
      id = cur.id;
      return { ...cur, stoppedAt: now, pools: cur.pools.map((p) => (p.state === 'started' ? { ...p, stopping: true } : p)) };
    });
    if (id === undefined) return;
    ctx.logger.info({ event: 'rebalance_stopping', id }, `rebalance ${id} stopping`);
    await this.notice({ kind: 'rebalance-stop', id });
    const failed = await this.#o.notify({ kind: 'rebalance-stop', id }, STOP_NOTICE_TIMEOUT_MS);
    const stopId = id;
    await ctx.records.updateRebalanceMeta((cur) =>
      cur?.id !== stopId ? undefined : { ...cur, stopPropagation: { ...cur.stopPropagation, lastAttemptAt: now, failedPeers: failed } },
    );
    if (failed.length > 0) ctx.logger.warn({ event: 'rebalance_stop_unacknowledged', id, peers: failed }, 'some nodes did not acknowledge the rebalance stop');
  }

  /** A rebalance notice (from this node or a peer). */
  async notice(n: MovementNotice): Promise<void> {
    if (n.kind === 'rebalance-start') {
      await this.#o.refresh();
      await this.#startLocal(n.id);
    } else if (n.kind === 'rebalance-stop') {
      await this.#stopLocal(n.id);
      await this.#settle(n.id, 'stopped by request');
      await this.#o.refresh();
    }
  }

  /** Starts the workers of the participating pools this node leads. */
  async #startLocal(id: string): Promise<void> {
    const { ctx } = this.#o;
    const meta = await ctx.records.readRebalanceMeta();
    if (meta?.id !== id || this.#closed) return;
    const target = targetFill(meta);
    for (const e of meta.pools) {
      const i = this.#cmdlines.indexOf(e.cmdline);
      if (i < 0 || !e.participating || e.state !== 'started' || e.stopping || !this.#o.leads(i) || this.#running.has(i)) continue;
      const pool = ctx.layer.movement.pools.list[i]!;
      const task = new RebalanceTask({ ctx, pool, id, target, attempts: this.#o.attempts, initUsed: Math.max(0, e.initCapacity - e.initFreeSpace) });
      const worker = new Worker(task, { clock: ctx.clock, logger: ctx.logger, persistEveryMs: this.#o.persistEveryMs ?? 2_000 });
      const running: Running = { id, pool: i, task, worker };
      this.#running.set(i, running);
      worker.start();
      this.#background.run(
        async () => {
          await worker.done();
          await task.close();
          if (this.#running.get(i) === running) this.#running.delete(i);
          if (!this.#closed) await this.#ended(id);
        },
        (err) => ctx.logger.error({ event: 'rebalance_supervision_failed', pool: i, err }, 'rebalance supervision failed'),
      );
    }
  }

  /** A local worker ended: lift its fence everywhere; the last one records the terminal reload. */
  async #ended(id: string): Promise<void> {
    const { ctx } = this.#o;
    await this.#o.refresh();
    const failed = await this.#o.notify({ kind: 'state' }, STOP_NOTICE_TIMEOUT_MS);
    const now = ctx.clock.now();
    await ctx.records.updateRebalanceMeta((cur) => {
      if (cur?.id !== id || rebalanceRunning(cur)) return undefined;
      return { ...cur, stopPropagation: { ...cur.stopPropagation, terminalReloadAttemptAt: now, terminalReloadFailedPeers: failed, pendingTerminalReload: failed.length > 0 } };
    });
  }

  async #stopLocal(id: string | undefined): Promise<void> {
    const mine = [...this.#running.values()].filter((r) => id === undefined || r.id === id);
    const stops = Promise.all(
      mine.map(async (r) => {
        await r.worker.stop();
        await r.task.close();
        if (this.#running.get(r.pool) === r) this.#running.delete(r.pool);
      }),
    );
    await Promise.race([stops, this.#o.ctx.clock.sleep(LOCAL_STOP_WAIT_MS)]);
  }

  /**
   * Pools this node leads that the record shows `started` or `stopping`
   * with no worker here: recorded `stopped` (their worker is gone).
   */
  async #settle(id: string | undefined, why: string): Promise<void> {
    const { ctx } = this.#o;
    const now = ctx.clock.now();
    await ctx.records.updateRebalanceMeta((cur) => {
      if (cur === undefined || (id !== undefined && cur.id !== id)) return undefined;
      let changed = false;
      const pools = cur.pools.map((p) => {
        const i = this.#cmdlines.indexOf(p.cmdline);
        if (i < 0 || !this.#o.leads(i) || this.#running.has(i) || (p.state !== 'started' && !p.stopping)) return p;
        changed = true;
        return { ...p, state: 'stopped' as const, stopping: false, lastError: p.stopping ? p.lastError : why };
      });
      return changed ? { ...cur, stoppedAt: cur.stoppedAt || now, pools } : undefined;
    });
  }

  /** At start-up: a restart never resumes a rebalance (SPEC); the pools this node was moving are recorded stopped. */
  async recover(): Promise<void> {
    await this.#settle(undefined, `interrupted: ${this.#o.ctx.selfId} restarted at ${new Date(this.#o.ctx.clock.now()).toISOString()}; the moves made are kept; start a new rebalance to continue`);
  }

  /** Stops local workers whose pool is no longer `started` in the record (after a stop or rollback elsewhere). */
  async supervise(meta: RebalanceMeta | undefined): Promise<void> {
    for (const r of [...this.#running.values()]) {
      const e = meta?.id === r.id ? meta.pools.find((p) => p.cmdline === this.#cmdlines[r.pool]) : undefined;
      if (e === undefined || e.state !== 'started' || e.stopping) {
        await r.worker.stop();
        await r.task.close();
        if (this.#running.get(r.pool) === r) this.#running.delete(r.pool);
      }
    }
  }

  /** The rebalance workers running on this node, by pool. */
  workers(): Worker<RebalanceTaskProgress>[] {
    return [...this.#running.values()].map((r) => r.worker);
  }

  /** Stops the local workers without touching the record (a graceful shutdown: the restart rule applies). */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#stopLocal(undefined);
    await this.#background.idle();
  }
}
