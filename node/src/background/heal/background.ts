/**
 * Background heal, one per node: drains the read-repair queue (MRF: objects
 * a read or a partial write found short of shards on some drives) and the
 * objects the scanner flags, healing each with the engine.
 *
 * - Deduplicated: one pending task per (pool, set, bucket, object); a read
 *   that finds bitrot makes the task deep.
 * - Retried with exponential backoff (1 s doubling to 5 min, 10 attempts)
 *   while the drives it needs are offline or the heal fails; then given up
 *   (logged, counted), the scanner finds the object again on its next cycle.
 *   Refusals no retry can change (zero parity, geometry) are not retried.
 * - Bounded: at most `capacity` pending tasks (the oldest dropped and
 *   counted); one heal at a time per node.
 * - Throttled by the Worker contract's tranquility: after a heal that took
 *   t ms the worker sleeps t × tranquility ms (`SVC_HEAL_SPEED`; `default`
 *   is 2: at most a third of the node's time, and one rebuild stream,
 *   compete with clients). This is the
 *   client-latency budget `npm run bench` measures (GET throughput during a
 *   heal ≥ 70 % of idle).
 * - Dangling versions are removed (`remove`): a version below quorum for
 *   good is a delete a drive missed or a write that never committed.
 */
import type { Drive } from '../../storage/drive.ts';
import type { Clock } from '../../util/clock.ts';
import type { HealTaskType } from '../../util/diagnostics.ts';
import type { Logger } from '../../util/logger.ts';
import type { MrfEntry, MrfQueue } from '../../object/mrf.ts';
import { sleepUnlessAborted, Worker, type WorkResult } from '../../util/worker.ts';
import type { Healer } from './healer.ts';
import { NO_PARITY } from './plan.ts';
import type { HealResult } from './types.ts';

export interface HealTaskEntry {
  bucket: string;
  object: string;
  pool: number;
  set: number;
  /** Why it was queued (`read-missing`, `read-bitrot`, `write-partial`, `delete-partial`, `scanner`, `scanner-bitrot`). */
  reason: string;
  /** Set slots known to be short (may be empty). */
  slots: number[];
}

interface Pending extends HealTaskEntry {
  type: HealTaskType;
  deep: boolean;
  queuedAt: number;
  dueAt: number;
  attempts: number;
}

export interface BackgroundHealProgress {
  /** Tasks waiting (read-repair queue included). */
  queued: number;
  /** 1 while a heal runs. */
  active: number;
  /** Tasks waiting for a retry. */
  retrying: number;
  itemsHealed: number;
  bytesHealed: number;
  /** Heals that failed or were refused and given up. */
  itemsFailed: number;
  /** Tasks dropped because the queue was full. */
  dropped: number;
  /** Per drive endpoint: items and bytes rebuilt on it (madmin `mrf`). */
  perDrive: Record<string, { bytes_healed: number; items_healed: number }>;
  lastError?: string;
}

export interface BackgroundHealOptions {
  healer: Healer;
  mrf: MrfQueue;
  clock: Clock;
  logger: Logger;
  /** Sleep t × tranquility after each heal that took t ms (default 1). */
  tranquility?: number;
  /** Pending tasks at most (default 10 000). */
  capacity?: number;
  maxAttempts?: number;
  retryBaseMs?: number;
  retryMaxMs?: number;
}

const keyOf = (e: HealTaskEntry) => `${e.pool}\u0000${e.set}\u0000${e.bucket}\u0000${e.object}`;

export class BackgroundHeal {
  readonly worker: Worker<BackgroundHealProgress>;
  readonly #healer: Healer;
  readonly #mrf: MrfQueue;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #capacity: number;
  readonly #maxAttempts: number;
  readonly #retryBase: number;
  readonly #retryMax: number;
  readonly #pending = new Map<string, Pending>();
  #active = 0;
  #healed = 0;
  #bytes = 0;
  #failed = 0;
  #dropped = 0;
  #lastError: string | undefined;
  readonly #perDrive: Record<string, { bytes_healed: number; items_healed: number }> = {};
  readonly #unsubscribe: () => void;

  constructor(o: BackgroundHealOptions) {
    this.#healer = o.healer;
    this.#mrf = o.mrf;
    this.#clock = o.clock;
    this.#log = o.logger;
    this.#capacity = o.capacity ?? 10_000;
    this.#maxAttempts = o.maxAttempts ?? 10;
    this.#retryBase = o.retryBaseMs ?? 1_000;
    this.#retryMax = o.retryMaxMs ?? 5 * 60_000;
    this.worker = new Worker(
      {
        name: 'background-heal',
        work: (signal) => this.#work(signal),
        waitForWork: (signal) => sleepUnlessAborted(this.#clock, this.#untilDue(), signal),
        progress: () => this.progress(),
      },
      { clock: o.clock, logger: o.logger, tranquility: o.tranquility ?? 1 },
    );
    this.#unsubscribe = this.#mrf.onEnqueue((e) => {
      this.#healer.queued(this.#typeOf(e.reason), e.pool, e.set);
      this.worker.wake();
    });
  }

  progress(): BackgroundHealProgress {
    const now = this.#clock.now();
    let retrying = 0;
    for (const p of this.#pending.values()) if (p.attempts > 0 && p.dueAt > now) retrying++;
    return {
      queued: this.#pending.size + this.#mrf.size,
      active: this.#active,
      retrying,
      itemsHealed: this.#healed,
      bytesHealed: this.#bytes,
      itemsFailed: this.#failed,
      dropped: this.#dropped + this.#mrf.dropped,
      perDrive: structuredClone(this.#perDrive),
      ...(this.#lastError !== undefined ? { lastError: this.#lastError } : {}),
    };
  }

  /** Queues an object for heal (the scanner's findings); `deep` verifies every frame. */
  enqueue(e: HealTaskEntry, deep = false): void {
    this.#healer.queued(this.#typeOf(e.reason), e.pool, e.set);
    this.#add(e, deep);
    this.worker.wake();
  }

  start(): void {
    if (!this.worker.active) this.worker.start();
  }

  async stop(): Promise<void> {
    this.#unsubscribe();
    await this.worker.stop();
  }

  #typeOf(reason: string): HealTaskType {
    return reason.startsWith('scanner') ? 'object' : 'mrf';
  }

  #add(e: HealTaskEntry | MrfEntry, deep: boolean): void {
    const key = keyOf(e);
    const now = this.#clock.now();
    const cur = this.#pending.get(key);
    const bitrot = deep || e.reason.endsWith('bitrot');
    if (cur) {
      cur.deep ||= bitrot;
      cur.slots = [...new Set([...cur.slots, ...e.slots])];
      // New evidence: try again now rather than at the end of a backoff.
      cur.dueAt = Math.min(cur.dueAt, now);
      return;
    }
    if (this.#pending.size >= this.#capacity) {
      const oldest = this.#pending.keys().next().value;
      if (oldest !== undefined) this.#pending.delete(oldest);
      this.#dropped++;
    }
    this.#pending.set(key, {
      bucket: e.bucket,
      object: e.object,
      pool: e.pool,
      set: e.set,
      reason: e.reason,
      slots: [...e.slots],
      type: this.#typeOf(e.reason),
      deep: bitrot,
      queuedAt: now,
      dueAt: now,
      attempts: 0,
    });
  }

  #untilDue(): number {
    if (this.#mrf.size > 0) return 0;
    const now = this.#clock.now();
    let next = Number.POSITIVE_INFINITY;
    for (const p of this.#pending.values()) next = Math.min(next, p.dueAt);
    // Idle: sleep until woken (an enqueue) or the next retry is due; a minute at most.
    return next === Number.POSITIVE_INFINITY ? 60_000 : Math.max(0, next - now);
  }

  async #work(signal: AbortSignal): Promise<WorkResult> {
    for (const e of this.#mrf.drain()) this.#add(e, false);
    const now = this.#clock.now();
    let task: Pending | undefined;
    for (const p of this.#pending.values()) if (p.dueAt <= now && (task === undefined || p.dueAt < task.dueAt)) task = p;
    if (task === undefined) return 'idle';
    if (signal.aborted) return 'busy';
    this.#pending.delete(keyOf(task));
    const set = this.#healer.pools.list[task.pool]?.sets[task.set];
    if (set === undefined) return 'busy';
    if (await this.#allUnreachable(set.drives, task.slots)) {
      // Every drive the object missed is unreachable: nothing to heal onto yet. Waiting takes no
      // lock (a heal would hold the object's write lock for nothing, and a node killed while
      // holding it leaves the object's readers waiting for the lock to expire).
      this.#retryLater(task, 'the drives it missed are unreachable');
      return 'busy';
    }
    this.#active = 1;
    let r: HealResult;
    try {
      r = await this.#healer.task(task.type, task.pool, task.set, task.queuedAt, () =>
        this.#healer.healInSet(set, task.bucket, task.object, { dryRun: false, remove: true, deep: task.deep }).catch((err: unknown) => this.#healer.failure(set, task.bucket, task.object, err)),
      );
    } finally {
      this.#active = 0;
    }
    this.#account(r);
    const stillShort = task.slots.some((s) => r.after[s]?.state === 'offline' || r.after[s]?.state === 'missing' || r.after[s]?.state === 'corrupt');
    const permanent = r.outcome === 'refused' && (r.detail.includes(NO_PARITY) || r.detail.includes('stored geometry'));
    const retry = !permanent && (r.outcome === 'failed' || r.outcome === 'refused' || (stillShort && r.outcome !== 'absent' && r.outcome !== 'removed'));
    if (retry) {
      this.#retryLater(task, r.detail || r.outcome, r.outcome);
    } else if (permanent) {
      this.#failed++;
      this.#lastError = `${task.bucket}/${task.object}: ${r.detail}`;
      this.#log.warn({ event: 'heal_mrf_unrecoverable', bucket: task.bucket, object: task.object, detail: r.detail }, 'background heal cannot heal an object');
    }
    return 'busy';
  }

  /**
   * True when `slots` is not empty and none of those drives answers a probe
   * (a drive of an offline peer fails at once). Only a drive already marked
   * offline is probed: one believed online means the heal goes ahead, with
   * no extra I/O on the common path.
   */
  async #allUnreachable(drives: readonly Drive[], slots: readonly number[]): Promise<boolean> {
    if (slots.length === 0 || slots.some((s) => drives[s]?.isOnline() === true)) return false;
    const answers = await Promise.all(slots.map((s) => drives[s]?.diskInfo().then((i) => i.online !== false, () => false) ?? false));
    return answers.every((ok) => !ok);
  }

  /** Backs `task` off for another attempt, or gives up on it after the last one (the scanner finds it again). */
  #retryLater(task: Pending, detail: string, outcome = 'waiting'): void {
    task.attempts++;
    if (task.attempts >= this.#maxAttempts) {
      this.#failed++;
      this.#lastError = `${task.bucket}/${task.object}: ${detail}`;
      this.#log.warn(
        { event: 'heal_mrf_gave_up', bucket: task.bucket, object: task.object, attempts: task.attempts, outcome, detail },
        'background heal gave up on an object; the scanner will find it again',
      );
      return;
    }
    task.dueAt = this.#clock.now() + Math.min(this.#retryMax, this.#retryBase * 2 ** (task.attempts - 1));
    if (!this.#pending.has(keyOf(task))) this.#pending.set(keyOf(task), task);
  }

  #account(r: HealResult): void {
    if (r.outcome !== 'healed' && r.outcome !== 'removed') return;
    this.#healed++;
    this.#bytes += r.bytesHealed;
    const changed = r.after.filter((d, i) => d.state === 'ok' && r.before[i]?.state !== 'ok');
    for (const d of changed) {
      const e = (this.#perDrive[d.endpoint] ??= { bytes_healed: 0, items_healed: 0 });
      e.items_healed++;
      e.bytes_healed += Math.round(r.bytesHealed / changed.length);
    }
    this.#log.debug({ event: 'heal_mrf_healed', bucket: r.bucket, object: r.object, outcome: r.outcome, detail: r.detail }, 'background heal healed an object');
  }
}
