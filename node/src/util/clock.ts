/**
 * Injected time. Everything that waits, leases, backs off or schedules takes a
 * Clock so tests can drive time; production uses `systemClock`.
 */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /** Resolves after `ms` milliseconds (unref'd: never keeps the process alive). */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** Repeating timer; returns a function that cancels it. */
  every(ms: number, fn: () => void): () => void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      const t = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      t.unref();
      const onAbort = () => {
        clearTimeout(t);
        reject(signal?.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
    }),
  every: (ms, fn) => {
    const t = setInterval(fn, ms);
    t.unref();
    return () => clearInterval(t);
  },
};

/** A manually advanced clock for tests. */
export class ManualClock implements Clock {
  #now: number;
  #timers: { at: number; resolve: () => void }[] = [];
  constructor(start = 0) {
    this.#now = start;
  }
  now(): number {
    return this.#now;
  }
  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.#timers.push({ at: this.#now + ms, resolve }));
  }
  every(ms: number, fn: () => void): () => void {
    let stopped = false;
    const loop = async () => {
      while (!stopped) {
        await this.sleep(ms);
        if (!stopped) fn();
      }
    };
    void loop();
    return () => {
      stopped = true;
    };
  }
  /** Moves time forward and fires every timer that is due. */
  async advance(ms: number): Promise<void> {
    this.#now += ms;
    const due = this.#timers.filter((t) => t.at <= this.#now);
    this.#timers = this.#timers.filter((t) => t.at > this.#now);
    for (const t of due) t.resolve();
    await new Promise((r) => setImmediate(r));
  }
}
