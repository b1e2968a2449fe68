/**
 * Data movement on one node, composed: the decommission queue
 * (`decommission.ts`) and the rebalance workers (`rebalance.ts`) over the
 * object layer, kept in step with the persisted records.
 *
 * `refresh()` is the one way this node applies `pool.bin` and
 * `rebalance.bin`: it sets every pool's admission (`admission.ts`), stops
 * local workers whose entry moved on, and starts the decommission drain this
 * node leads when it heads the queue. It runs at start-up (before the node
 * serves, bounded), on every notice from a peer, after every local change,
 * and on a short poll, so a node that missed a notice converges within
 * seconds. Refreshes are serialized; a record that cannot be read leaves
 * the admission as it was (a pool is never reopened on a read failure).
 */
import type { PoolDescriptor } from '../../object/admin/data-movement-admin.ts';
import type { DecommissionWorker, RebalanceWorker } from '../../object/admin/services.ts';
import { admissionPlan, applyAdmission } from './admission.ts';
import { errorMessage, type MovementContext, type MovementNotice, type MovementPeers } from './context.ts';
import { Decommissioner } from './decommission.ts';
import { Rebalancer } from './rebalance.ts';
import { type PeriodicProgress, periodicWorker, type Worker } from '../../util/worker.ts';

const STATE_NOTICE_TIMEOUT_MS = 3_000;

export interface DataMovementOptions {
  readonly ctx: MovementContext;
  readonly pools: readonly Pick<PoolDescriptor, 'id' | 'cmdline' | 'ellipsis'>[];
  /** True when this node leads `pool` (serves its first endpoint). */
  leads(pool: number): boolean;
  readonly peers: MovementPeers;
  readonly decommissionBucketConcurrency: number;
  readonly decommissionEntryConcurrency: number;
  readonly rebalanceMaxAttempts: number;
  /** Poll of the records (default 5 s). */
  readonly pollMs?: number;
  /** How often running workers persist progress (default 2 s). */
  readonly persistEveryMs?: number;
  /** How long a drain waits for open multipart uploads (default 15 min). */
  readonly uploadGraceMs?: number;
  readonly uploadPollMs?: number;
}

export class DataMovement {
  readonly decommissioner: Decommissioner;
  readonly rebalancer: Rebalancer;
  readonly #o: DataMovementOptions;
  #chain: Promise<void> = Promise.resolve();
  #poll: Worker<PeriodicProgress> | undefined;
  #recovered = false;
  #closed = false;

  constructor(o: DataMovementOptions) {
    this.#o = o;
    this.decommissioner = new Decommissioner({
      ctx: o.ctx,
      pools: o.pools,
      leads: (i) => o.leads(i),
      bucketConcurrency: o.decommissionBucketConcurrency,
      entryConcurrency: o.decommissionEntryConcurrency,
      ...(o.uploadGraceMs !== undefined ? { uploadGraceMs: o.uploadGraceMs } : {}),
      ...(o.uploadPollMs !== undefined ? { uploadPollMs: o.uploadPollMs } : {}),
      ...(o.persistEveryMs !== undefined ? { persistEveryMs: o.persistEveryMs } : {}),
      changed: async () => {
        await this.refresh();
        return this.#notify({ kind: 'state' }, STATE_NOTICE_TIMEOUT_MS);
      },
      fence: () => this.#notify({ kind: 'state' }, STATE_NOTICE_TIMEOUT_MS),
    });
    this.rebalancer = new Rebalancer({
      ctx: o.ctx,
      pools: o.pools,
      leads: (i) => o.leads(i),
      attempts: o.rebalanceMaxAttempts,
      ...(o.persistEveryMs !== undefined ? { persistEveryMs: o.persistEveryMs } : {}),
      refresh: () => this.refresh(),
      notify: (n, t) => this.#notify(n, t),
    });
  }

  /** The admin services' decommission port. */
  get decommission(): DecommissionWorker & { cleared(pool: number): Promise<void> } {
    return this.decommissioner;
  }

  get rebalance(): RebalanceWorker {
    return this.rebalancer;
  }

  async #notify(notice: MovementNotice, timeoutMs: number): Promise<string[]> {
    const rs = await this.#o.peers.broadcast(notice, timeoutMs);
    return rs.filter((r) => r.error !== undefined).map((r) => `${r.peer}${r.error ? ` (${r.error})` : ''}`);
  }

  /** Applies the records on this node now (serialized; see the module comment). */
  refresh(): Promise<void> {
    const run = this.#chain.then(() => this.#refresh());
    this.#chain = run.catch(() => undefined);
    return run;
  }

  async #refresh(): Promise<void> {
    if (this.#closed) return;
    const { ctx } = this.#o;
    if (!this.#recovered) {
      await this.rebalancer.recover();
      this.#recovered = true;
    }
    const [poolMeta, rebalance] = await Promise.all([ctx.records.readPoolMeta(), ctx.records.readRebalanceMeta()]);
    const changed = applyAdmission(ctx.layer, admissionPlan(this.#o.pools.map((p) => p.cmdline), poolMeta, rebalance));
    for (const c of changed) {
      ctx.logger.info(
        { event: 'pool_admission_changed', pool: c.pool, admitting: c.admitting, reason: c.reason, existingKeys: c.existingKeys ?? false },
        c.admitting ? `pool ${c.pool} takes new objects` : `pool ${c.pool} closed to new ${c.existingKeys ? 'keys' : 'objects'} (${c.reason})`,
      );
    }
    await this.rebalancer.supervise(rebalance);
    await this.decommissioner.supervise(poolMeta);
  }

  /** A notice from a peer: applied before it is acknowledged. */
  async notice(n: MovementNotice): Promise<void> {
    if (n.kind === 'state') await this.refresh();
    else await this.rebalancer.notice(n);
  }

  /**
   * Start-up: recovers the rebalance record (never resumes it), applies the
   * records and resumes this node's decommission, then polls. When the
   * records cannot be read yet (peers still starting), start-up goes on and
   * the poll retries every second until they are applied, then every
   * `pollMs` (nothing here may hold start-up up: the process has no
   * listener yet to keep it alive).
   */
  async start(): Promise<void> {
    const { ctx } = this.#o;
    let applied = false;
    try {
      await this.refresh();
      applied = true;
    } catch (err) {
      ctx.logger.warn({ event: 'data_movement_records_unreadable', err: errorMessage(err) }, 'pool.bin / rebalance.bin are not readable yet; decommission and rebalance state is applied as soon as they are');
    }
    const pollMs = Math.max(1, Math.round((this.#o.pollMs ?? 5_000) / 1_000)) * 1_000;
    this.#poll = periodicWorker({
      name: 'data-movement-poll',
      everyMs: () => (applied ? pollMs : 1_000),
      atStart: false,
      tick: () =>
        this.refresh().then(
          () => {
            if (!applied) ctx.logger.info({ event: 'data_movement_records_applied' }, 'decommission and rebalance state applied');
            applied = true;
          },
          (err: unknown) => ctx.logger.debug({ event: 'data_movement_refresh_failed', err: errorMessage(err) }, 'data movement refresh failed'),
        ),
      clock: ctx.clock,
      logger: ctx.logger,
    });
    this.#poll.start();
  }

  /** The workers running now: the records poll, this node's decommission drain and rebalance workers. */
  workers(): Worker<unknown>[] {
    return [...(this.#poll ? [this.#poll] : []), ...this.decommissioner.workers(), ...this.rebalancer.workers()];
  }

  /** Stops the poll and the local workers; persisted state is left for the next start. */
  async close(): Promise<void> {
    await this.#poll?.stop();
    this.#closed = true;
    await this.#chain;
    await Promise.all([this.decommissioner.close(), this.rebalancer.close()]);
  }
}
