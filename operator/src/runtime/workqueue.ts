/**
 * A keyed work queue with controller-runtime semantics: the latest state
 * matters, not each event. A key queued twice runs once; a key never runs
 * twice at once (an add while it runs re-runs it afterwards); failures back
 * off exponentially per key (5 s → 5 min by default); a handler may ask to
 * run again after a delay (level-triggered polling).
 */
export interface Timers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const realTimers: Timers = {
  setTimeout: (fn, ms) => {
    const t = setTimeout(fn, ms);
    t.unref?.();
    return t;
  },
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
};

export interface WorkResult {
  /** Run this key again after this many milliseconds. */
  readonly requeueAfterMs?: number | undefined;
}

export interface WorkQueueOptions {
  readonly handler: (key: string) => Promise<WorkResult | void>;
  readonly concurrency?: number;
  readonly baseBackoffMs?: number;
  readonly maxBackoffMs?: number;
  readonly timers?: Timers;
  readonly onError?: (key: string, err: unknown, retryInMs: number) => void;
}

export class WorkQueue {
  readonly #opts: Required<Omit<WorkQueueOptions, 'onError'>> & Pick<WorkQueueOptions, 'onError'>;
  readonly #ready: string[] = [];
  readonly #queued = new Set<string>();
  readonly #running = new Set<string>();
  readonly #dirty = new Set<string>();
  readonly #delayed = new Map<string, { at: number; handle: unknown }>();
  readonly #failures = new Map<string, number>();
  readonly #idleWaiters: (() => void)[] = [];
  #stopped = false;
  #now: () => number;

  constructor(opts: WorkQueueOptions, now: () => number = Date.now) {
    this.#opts = { concurrency: 2, baseBackoffMs: 5_000, maxBackoffMs: 300_000, timers: realTimers, ...opts };
    this.#now = now;
  }

  /** Queues `key` now, or after `delayMs` (an earlier request wins). */
  add(key: string, delayMs = 0): void {
    if (this.#stopped) return;
    if (delayMs > 0) {
      const at = this.#now() + delayMs;
      const prev = this.#delayed.get(key);
      if (prev && prev.at <= at) return;
      if (prev) this.#opts.timers.clearTimeout(prev.handle);
      const handle = this.#opts.timers.setTimeout(() => {
        this.#delayed.delete(key);
        this.add(key);
      }, delayMs);
      this.#delayed.set(key, { at, handle });
      return;
    }
    if (this.#running.has(key)) {
      this.#dirty.add(key);
      return;
    }
    if (this.#queued.has(key)) return;
    this.#queued.add(key);
    this.#ready.push(key);
    this.#pump();
  }

  get length(): number {
    return this.#ready.length;
  }

  failures(key: string): number {
    return this.#failures.get(key) ?? 0;
  }

  /** Resolves when nothing is queued or running (delayed keys do not count). */
  idle(): Promise<void> {
    if (this.#ready.length === 0 && this.#running.size === 0) return Promise.resolve();
    return new Promise((r) => this.#idleWaiters.push(r));
  }

  stop(): void {
    this.#stopped = true;
    for (const d of this.#delayed.values()) this.#opts.timers.clearTimeout(d.handle);
    this.#delayed.clear();
    this.#ready.length = 0;
    this.#queued.clear();
  }

  #pump(): void {
    while (!this.#stopped && this.#running.size < this.#opts.concurrency) {
      const i = this.#ready.findIndex((k) => !this.#running.has(k));
      if (i < 0) break;
      const key = this.#ready.splice(i, 1)[0]!;
      this.#queued.delete(key);
      this.#running.add(key);
      void this.#run(key);
    }
    if (this.#ready.length === 0 && this.#running.size === 0) for (const w of this.#idleWaiters.splice(0)) w();
  }

  async #run(key: string): Promise<void> {
    try {
      const r = await this.#opts.handler(key);
      this.#failures.delete(key);
      if (r?.requeueAfterMs !== undefined) this.add(key, r.requeueAfterMs);
    } catch (err) {
      const n = (this.#failures.get(key) ?? 0) + 1;
      this.#failures.set(key, n);
      const delay = Math.min(this.#opts.baseBackoffMs * 2 ** (n - 1), this.#opts.maxBackoffMs);
      this.#opts.onError?.(key, err, delay);
      this.add(key, delay);
    } finally {
      this.#running.delete(key);
      if (this.#dirty.delete(key)) this.add(key);
      this.#pump();
    }
  }
}
