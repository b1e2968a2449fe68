/**
 * Failed sign-ins, counted per key in a sliding window (the sign-in counts
 * each failure under its client address and access key together, and under
 * the address alone with a higher limit): past the limit in `windowMs`,
 * sign-in is refused (429 with Retry-After) until the oldest failure leaves
 * the window. A successful sign-in forgets that pair's failures. Memory is
 * bounded (`maxKeys`, least recently failed dropped first). Pure apart from
 * the injected clock.
 */
import type { Clock } from '../../util/clock.ts';

export interface LoginLimiterOptions {
  readonly clock: Clock;
  readonly max?: number;
  readonly windowMs?: number;
  readonly maxKeys?: number;
  /** A higher (or lower) limit for keys starting with a prefix (`{'address:': 50}`). */
  readonly maxByPrefix?: Readonly<Record<string, number>>;
}

export class LoginLimiter {
  readonly #clock: Clock;
  readonly #max: number;
  readonly #windowMs: number;
  readonly #maxKeys: number;
  readonly #failures = new Map<string, number[]>();
  readonly #maxByPrefix: Readonly<Record<string, number>>;

  constructor(o: LoginLimiterOptions) {
    this.#clock = o.clock;
    this.#max = o.max ?? 10;
    this.#windowMs = o.windowMs ?? 10 * 60_000;
    this.#maxKeys = o.maxKeys ?? 10_000;
    this.#maxByPrefix = o.maxByPrefix ?? {};
  }

  #maxOf(key: string): number {
    for (const [p, n] of Object.entries(this.#maxByPrefix)) if (key.startsWith(p)) return n;
    return this.#max;
  }

  #recent(key: string, now: number): number[] {
    const list = (this.#failures.get(key) ?? []).filter((t) => t > now - this.#windowMs);
    if (list.length === 0) this.#failures.delete(key);
    else this.#failures.set(key, list);
    return list;
  }

  /** 0 when an attempt may go ahead, else the milliseconds to wait. */
  retryAfterMs(keys: readonly string[]): number {
    const now = this.#clock.now();
    let wait = 0;
    for (const k of keys) {
      const list = this.#recent(k, now);
      const max = this.#maxOf(k);
      if (list.length >= max) wait = Math.max(wait, list[list.length - max]! + this.#windowMs - now);
    }
    return wait;
  }

  fail(keys: readonly string[]): void {
    const now = this.#clock.now();
    for (const k of keys) {
      const list = this.#recent(k, now);
      list.push(now);
      this.#failures.delete(k);
      this.#failures.set(k, list.slice(-this.#maxOf(k)));
    }
    while (this.#failures.size > this.#maxKeys) {
      const oldest = this.#failures.keys().next().value;
      if (oldest === undefined) break;
      this.#failures.delete(oldest);
    }
  }

  succeed(key: string): void {
    this.#failures.delete(key);
  }
}
