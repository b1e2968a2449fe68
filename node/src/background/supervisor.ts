/**
 * The one place long-running background jobs are registered, started and
 * stopped. A job names the jobs it needs (`after`): `start()` starts them in
 * dependency order (registration order among independent ones; jobs
 * registered later are started by the next `start()`), `stop()` stops the
 * started ones in exactly the reverse order they started, and `list()` reports
 * every registered job with its state, from its `Worker`s (the Worker
 * contract, `util/worker.ts`) where it has them, so the admin API and the
 * console read one list.
 *
 * A job that fails to start is reported `failed` with its error and the
 * start stops there (the jobs after it would run without what they need);
 * the ones already started keep running until `stop()`. A failing stop is
 * logged and the rest still stop.
 */
import type { Logger } from '../util/logger.ts';
import type { Worker, WorkerState, WorkerStatus } from '../util/worker.ts';

/** What the supervisor reads of a job's worker. */
export interface JobWorker {
  status(): WorkerStatus<unknown>;
}

export type JobState = WorkerState | 'not started';

export interface Job {
  /** Unique among the supervisor's jobs (`heal-background`, `scanner`, ...). */
  readonly name: string;
  /** Jobs that must be started before this one (and stopped after it). */
  readonly after?: readonly string[];
  /** What the job does, for the admin API and the console. */
  readonly description: string;
  start(): void | Promise<void>;
  stop(): Promise<void>;
  /** The Workers the job runs now (one for a loop; one per running sequence for a queue of them). */
  workers(): readonly JobWorker[];
}

export interface JobReport {
  name: string;
  description: string;
  after: string[];
  /** `not started` before `start()` reached it; else its worker's state (a job without one running: `idle`). */
  state: JobState;
  /** Its workers' status (state, steps, throttling, progress), when it has any. */
  workers: WorkerStatus<unknown>[];
  /** Why it failed to start or stop, if it did. */
  lastError?: string;
}

/** A job whose work is one Worker's loop. */
export function workerJob<P>(name: string, description: string, worker: Worker<P>, o: { after?: readonly string[]; start?: () => void | Promise<void>; stop?: () => Promise<void> } = {}): Job {
  return {
    name,
    description,
    ...(o.after ? { after: o.after } : {}),
    start: o.start ?? (() => (worker.active ? undefined : worker.start())),
    stop: o.stop ?? (() => worker.stop()),
    workers: () => [worker],
  };
}

export class Supervisor {
  readonly #jobs = new Map<string, Job>();
  readonly #log: Logger;
  /** Jobs in the order they were started. */
  #started: Job[] = [];
  readonly #errors = new Map<string, string>();
  #stopping = false;
  /** Jobs stopped (a partial `stop` leaves the others started). */
  readonly #stopped = new Set<Job>();
  /** The last `stop()`, settled (stops are serialized). */
  #stopChain: Promise<void> = Promise.resolve();
  /** The last `start()`, settled (starts are serialized). */
  #starting: Promise<void> = Promise.resolve();

  constructor(o: { logger: Logger }) {
    this.#log = o.logger;
  }

  /**
   * Adds a job; an error for a duplicate name or once stopped. Jobs may be
   * added after a `start()` (a node registers the object layer's jobs once
   * format quorum is reached): the next `start()` starts them.
   */
  register(job: Job): void {
    if (this.#jobs.has(job.name)) throw new Error(`background job ${job.name} is registered twice`);
    if (this.#stopping) throw new Error(`background job ${job.name} registered after stop`);
    this.#jobs.set(job.name, job);
  }

  /** Dependency order (each job after the jobs it names); an error for an unknown name or a cycle. */
  order(): Job[] {
    const out: Job[] = [];
    const state = new Map<string, 'visiting' | 'done'>();
    const visit = (job: Job, path: string[]): void => {
      const s = state.get(job.name);
      if (s === 'done') return;
      if (s === 'visiting') throw new Error(`background jobs depend on each other in a circle: ${[...path, job.name].join(' → ')}`);
      state.set(job.name, 'visiting');
      for (const dep of job.after ?? []) {
        const d = this.#jobs.get(dep);
        if (!d) throw new Error(`background job ${job.name} needs ${dep}, which is not registered`);
        visit(d, [...path, job.name]);
      }
      state.set(job.name, 'done');
      out.push(job);
    };
    for (const job of this.#jobs.values()) visit(job, []);
    return out;
  }

  /** Starts every job not started yet, in dependency order; an error once stopped. Calls run one after another. */
  start(): Promise<void> {
    const run = this.#starting.then(() => this.#start());
    this.#starting = run.catch(() => undefined);
    return run;
  }

  async #start(): Promise<void> {
    if (this.#stopping) throw new Error('background jobs are stopped');
    for (const job of this.order()) {
      if (this.#started.includes(job)) continue;
      if (this.#stopping) throw new Error(`background job ${job.name} not started: the jobs are stopping`);
      try {
        await job.start();
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        this.#errors.set(job.name, message);
        this.#log.error({ event: 'background_job_start_failed', job: job.name, err }, `background job ${job.name} failed to start`);
        throw err;
      }
      this.#started.push(job);
    }
    this.#log.debug({ event: 'background_jobs_started', jobs: this.#started.map((j) => j.name) }, 'background jobs started');
  }

  /**
   * Stops the started jobs in reverse start order (after a start in progress
   * settled); nothing starts or registers afterwards. `keep` names jobs this
   * call leaves running (a graceful stop ends the object phase's jobs, closes
   * the layer, then stops the rest with a second call). Calls run one after
   * another; a job is stopped once.
   */
  stop(keep?: (name: string) => boolean): Promise<void> {
    this.#stopping = true;
    const run = this.#stopChain.then(() => this.#stop(keep));
    this.#stopChain = run;
    return run;
  }

  async #stop(keep: ((name: string) => boolean) | undefined): Promise<void> {
    await this.#starting;
    for (const job of [...this.#started].reverse()) {
      if (this.#stopped.has(job) || keep?.(job.name) === true) continue;
      this.#stopped.add(job);
      try {
        await job.stop();
      } catch (err) {
        this.#errors.set(job.name, err instanceof Error ? err.message : String(err));
        this.#log.error({ event: 'background_job_stop_failed', job: job.name, err }, `background job ${job.name} failed to stop`);
      }
    }
  }

  /** Every registered job, in registration order, with its state. */
  list(): JobReport[] {
    return [...this.#jobs.values()].map((job) => {
      const workers = job.workers().map((w) => w.status());
      const started = this.#started.includes(job);
      const error = this.#errors.get(job.name);
      const state: JobState = !started ? (error !== undefined ? 'failed' : 'not started') : workers.length === 0 ? (this.#stopped.has(job) ? 'stopped' : 'idle') : aggregate(workers.map((w) => w.state));
      return {
        name: job.name,
        description: job.description,
        after: [...(job.after ?? [])],
        state,
        workers,
        ...(error !== undefined ? { lastError: error } : {}),
      };
    });
  }
}

/** One state for several workers: the busiest wins (running over paused over idle ...). */
function aggregate(states: WorkerState[]): WorkerState {
  const rank: WorkerState[] = ['running', 'stopping', 'paused', 'failed', 'idle', 'completed', 'stopped'];
  return rank.find((s) => states.includes(s)) ?? 'idle';
}
