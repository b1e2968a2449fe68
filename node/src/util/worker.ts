/**
 * The contract of every background worker (decommission, rebalance,
 * heal/MRF, scanner): a task does bounded units of work; `Worker` runs it
 * in a loop with uniform state, stop, pause, self-throttling, periodic
 * progress persistence and a status snapshot for the admin API. Modelled on
 * Garage's `util/background/worker.rs` (work / wait-for-work, Busy / Idle /
 * Done) and its tranquilizer.
 *
 * States:
 *
 *   idle ──start──▶ running ◀──work available──▶ idle (waiting for work)
 *   running ──pause──▶ paused ──resume──▶ running
 *   running | idle | paused ──stop──▶ stopping ──loop quiet──▶ stopped
 *   running ──task done──▶ completed        running ──task threw──▶ failed
 *
 * `idle` is both "not started yet" (`startedAt` undefined) and "started,
 * waiting for work". A worker that ended (stopped, completed, failed) can be
 * started again; the task decides whether it resumes from persisted
 * progress.
 *
 * Throttling: after a busy step that took `t` ms, the loop sleeps
 * `t × tranquility` ms, so a worker at tranquility 1 uses at most about half
 * of the time it could (foreground traffic gets the rest); 0 runs flat out.
 * All waiting goes through the injected clock.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Clock } from './clock.ts';
import { SvcError } from './errors.ts';
import type { Logger } from './logger.ts';

export type WorkerState = 'idle' | 'running' | 'paused' | 'stopping' | 'stopped' | 'completed' | 'failed';

/** What one `work()` call found: more to do now, nothing to do now, or nothing left ever. */
export type WorkResult = 'busy' | 'idle' | 'done';

export interface WorkerTask<P> {
  /** Stable name for logs and the admin API (`decommission`, `rebalance`, `heal`, `scanner`, …). */
  readonly name: string;
  /**
   * One bounded unit of work (an object, a batch, a bucket). Should check
   * `signal` between sub-steps and return soon after it aborts. A throw
   * fails the worker (unless it is stopping): retry transient errors inside.
   */
  work(signal: AbortSignal): Promise<WorkResult>;
  /**
   * Resolves when new work may exist after an `idle` result (default: the
   * worker's `idleMs`). Must return once `signal` aborts (stop or `wake`).
   */
  waitForWork?(signal: AbortSignal): Promise<void>;
  /** Progress snapshot (plain data for the admin API). */
  progress(): P;
  /**
   * Persists progress (`pool.bin`, `rebalance.bin`, …): every
   * `persistEveryMs` while it runs and once when it ends. A failure is
   * logged and counted, never fatal (the next persist retries).
   */
  persist?(status: WorkerStatus<P>): Promise<void>;
}

export interface WorkerOptions {
  clock: Clock;
  logger: Logger;
  /** Sleep `t × tranquility` after a busy step that took `t` ms (default 0). */
  tranquility?: number;
  /** Wait after an `idle` result when the task has no `waitForWork` (default 10 s). */
  idleMs?: number;
  /** Persist at most this often while running (default 10 s). */
  persistEveryMs?: number;
}

export interface WorkerStatus<P> {
  name: string;
  state: WorkerState;
  /** Unix ms of the last start; undefined before the first. */
  startedAt?: number;
  /** Unix ms the last run ended. */
  endedAt?: number;
  /** Busy steps since the last start. */
  steps: number;
  /** Milliseconds slept for throttling since the last start. */
  throttledMs: number;
  tranquility: number;
  /** Why the last run failed (`failed`), or the last persist error. */
  lastError?: string;
  persistErrors: number;
  progress: P;
}

/**
 * Runs a function in the async context of module load, where no request is
 * active: a worker started by a request (an admin heal, a decommission) runs
 * its loop as background work, not inside that request's trace, so its drive
 * I/O makes no spans and its log records carry no trace id (only the start
 * itself, logged by the caller, belongs to the request).
 */
const detached = AsyncLocalStorage.snapshot();

function describe(err: unknown): string {
  if (err instanceof SvcError) return `${err.code}: ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}

/** Sleeps on `clock`, returning early (never throwing) when `signal` aborts. */
export async function sleepUnlessAborted(clock: Clock, ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted || ms <= 0) return;
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<void>((resolve) => {
    onAbort = resolve;
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    await Promise.race([clock.sleep(ms, signal).catch(() => undefined), aborted]);
  } finally {
    signal.removeEventListener('abort', onAbort!);
  }
}

export class Worker<P> {
  readonly #task: WorkerTask<P>;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #idleMs: number;
  readonly #persistEveryMs: number;
  #tranquility: number;
  #state: WorkerState = 'idle';
  #startedAt: number | undefined;
  #endedAt: number | undefined;
  #steps = 0;
  #throttledMs = 0;
  #lastError: string | undefined;
  #persistErrors = 0;
  #lastPersist = 0;
  #stop: AbortController | undefined;
  /** Aborted to cut a wait short (wake, resume, stop). */
  #nap: AbortController | undefined;
  #loop: Promise<void> | undefined;

  constructor(task: WorkerTask<P>, opts: WorkerOptions) {
    this.#task = task;
    this.#clock = opts.clock;
    this.#log = opts.logger;
    this.#tranquility = opts.tranquility ?? 0;
    this.#idleMs = opts.idleMs ?? 10_000;
    this.#persistEveryMs = opts.persistEveryMs ?? 10_000;
  }

  get name(): string {
    return this.#task.name;
  }

  get state(): WorkerState {
    return this.#state;
  }

  /** True while the loop runs (running, idle after a start, paused, stopping). */
  get active(): boolean {
    return this.#loop !== undefined;
  }

  status(): WorkerStatus<P> {
    const s: WorkerStatus<P> = {
      name: this.#task.name,
      state: this.#state,
      steps: this.#steps,
      throttledMs: this.#throttledMs,
      tranquility: this.#tranquility,
      persistErrors: this.#persistErrors,
      progress: this.#task.progress(),
    };
    if (this.#startedAt !== undefined) s.startedAt = this.#startedAt;
    if (this.#endedAt !== undefined) s.endedAt = this.#endedAt;
    if (this.#lastError !== undefined) s.lastError = this.#lastError;
    return s;
  }

  /** Starts the loop; an error when it already runs. */
  start(): void {
    if (this.#loop) throw new Error(`worker ${this.#task.name} is already ${this.#state}`);
    this.#stop = new AbortController();
    this.#state = 'running';
    this.#startedAt = this.#clock.now();
    this.#endedAt = undefined;
    this.#lastError = undefined;
    this.#steps = 0;
    this.#throttledMs = 0;
    this.#lastPersist = this.#startedAt;
    this.#log.info({ event: 'worker_started', worker: this.#task.name }, `${this.#task.name} worker started`);
    const signal = this.#stop.signal;
    const loop = detached(() => this.#run(signal));
    this.#loop = loop;
    void loop.finally(() => {
      if (this.#loop === loop) this.#loop = undefined;
    });
  }

  /** Holds the loop after its current step (no-op unless running or idle). */
  pause(): void {
    if (this.#state === 'running' || (this.#state === 'idle' && this.#loop)) this.#state = 'paused';
  }

  resume(): void {
    if (this.#state !== 'paused') return;
    this.#state = 'running';
    this.#nap?.abort();
  }

  /** Cuts an idle wait short (new work arrived). */
  wake(): void {
    this.#nap?.abort();
  }

  setTranquility(t: number): void {
    if (!(t >= 0) || !Number.isFinite(t)) throw new RangeError(`tranquility must be a finite number >= 0, got ${t}`);
    this.#tranquility = t;
  }

  /**
   * Stops the loop: aborts the task's signal and resolves once the current
   * step returned and the final progress was persisted. Idempotent.
   */
  async stop(): Promise<void> {
    const loop = this.#loop;
    if (!loop) return;
    if (this.#state !== 'stopping') {
      this.#state = 'stopping';
      this.#log.info({ event: 'worker_stopping', worker: this.#task.name }, `${this.#task.name} worker stopping`);
    }
    this.#stop?.abort();
    this.#nap?.abort();
    await loop;
  }

  /** Resolves with the final status once the loop ends (immediately when it does not run). */
  async done(): Promise<WorkerStatus<P>> {
    await this.#loop;
    return this.status();
  }

  async #run(signal: AbortSignal): Promise<void> {
    let end: 'stopped' | 'completed' | 'failed' = 'stopped';
    try {
      while (!signal.aborted) {
        if (this.#state === 'paused') {
          await this.#napFor(this.#idleMs, signal);
          continue;
        }
        this.#state = 'running';
        const t0 = this.#clock.now();
        const r = await this.#task.work(signal);
        if (signal.aborted) break;
        if (r === 'done') {
          end = 'completed';
          break;
        }
        if (r === 'busy') {
          this.#steps++;
          const pause = Math.round((this.#clock.now() - t0) * this.#tranquility);
          if (pause > 0) {
            this.#throttledMs += pause;
            await sleepUnlessAborted(this.#clock, pause, signal);
          }
        } else {
          if (this.#state === 'running') this.#state = 'idle';
          await this.#waitForWork(signal);
        }
        if (this.#clock.now() - this.#lastPersist >= this.#persistEveryMs) await this.#persist();
      }
    } catch (err) {
      if (!signal.aborted) {
        end = 'failed';
        this.#lastError = describe(err);
        this.#log.error({ event: 'worker_failed', worker: this.#task.name, err }, `${this.#task.name} worker failed`);
      }
    }
    this.#state = end;
    this.#endedAt = this.#clock.now();
    await this.#persist();
    this.#log.info({ event: 'worker_ended', worker: this.#task.name, state: end, steps: this.#steps }, `${this.#task.name} worker ${end}`);
  }

  async #waitForWork(signal: AbortSignal): Promise<void> {
    const nap = new AbortController();
    this.#nap = nap;
    const both = AbortSignal.any([signal, nap.signal]);
    try {
      if (this.#task.waitForWork) await this.#task.waitForWork(both);
      else await sleepUnlessAborted(this.#clock, this.#idleMs, both);
    } finally {
      if (this.#nap === nap) this.#nap = undefined;
    }
  }

  async #napFor(ms: number, signal: AbortSignal): Promise<void> {
    const nap = new AbortController();
    this.#nap = nap;
    try {
      await sleepUnlessAborted(this.#clock, ms, AbortSignal.any([signal, nap.signal]));
    } finally {
      if (this.#nap === nap) this.#nap = undefined;
    }
  }

  async #persist(): Promise<void> {
    if (!this.#task.persist) return;
    this.#lastPersist = this.#clock.now();
    try {
      await this.#task.persist(this.status());
    } catch (err) {
      this.#persistErrors++;
      this.#lastError = describe(err);
      this.#log.warn({ event: 'worker_persist_failed', worker: this.#task.name, err }, `${this.#task.name} worker could not persist its progress`);
    }
  }
}

/** What a periodic worker reports: its rounds, how many failed, and why the last failing one did. */
export interface PeriodicProgress {
  ticks: number;
  failures: number;
  lastError?: string;
}

export interface PeriodicOptions {
  /** The worker's name (`capacity-sampling`, `data-movement-poll`, …). */
  readonly name: string;
  /** Pause between the end of one tick and the next; a function is asked again after every tick. */
  readonly everyMs: number | (() => number);
  /** One round of the loop; a throw is logged and counted, and the next period tries again. */
  tick(signal: AbortSignal): unknown;
  /** Tick as soon as the worker starts (default), or wait one period first. */
  readonly atStart?: boolean;
  readonly clock: Clock;
  readonly logger: Logger;
}

/**
 * A periodic loop under the Worker contract (what was a plain
 * `clock.every` timer): the same start, stop, state and status as every
 * other background job. A tick never overlaps the previous one, and a
 * failing tick never ends the loop.
 */
export function periodicWorker(o: PeriodicOptions): Worker<PeriodicProgress> {
  const progress: PeriodicProgress = { ticks: 0, failures: 0 };
  const period = () => (typeof o.everyMs === 'number' ? o.everyMs : o.everyMs());
  // When the next round is due: one period after the start (or after the
  // last round ended), measured from the moment `start()` was called, so a
  // clock moved right after it still finds the round due.
  let dueAt = 0;
  let run: number | undefined;
  const task: WorkerTask<PeriodicProgress> = {
    name: o.name,
    work: async (signal) => {
      const startedAt = worker.status().startedAt ?? o.clock.now();
      if (run !== startedAt) {
        run = startedAt;
        if (o.atStart === false) {
          dueAt = startedAt + period();
          return 'idle';
        }
      }
      progress.ticks++;
      try {
        await o.tick(signal);
      } catch (err) {
        progress.failures++;
        progress.lastError = describe(err);
        o.logger.warn({ event: 'periodic_tick_failed', worker: o.name, err }, `${o.name}: a periodic round failed; the next one tries again`);
      }
      dueAt = o.clock.now() + period();
      return 'idle';
    },
    waitForWork: (signal) => sleepUnlessAborted(o.clock, dueAt - o.clock.now(), signal),
    progress: () => ({ ...progress }),
  };
  const worker = new Worker(task, { clock: o.clock, logger: o.logger });
  return worker;
}
