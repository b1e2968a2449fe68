import type { Clock } from './clock.ts';
import type { Logger } from './logger.ts';

/**
 * Logs at most one warning per key and period; the next one carries how
 * many were suppressed in between. For conditions a flood of requests can
 * meet at once (a listener refusing connections, quorum lost under load):
 * each is worth a line, ten thousand of the same are not.
 */
export class LogLimiter {
  readonly #last = new Map<string, { at: number; suppressed: number }>();
  readonly #logger: Logger;
  readonly #clock: Clock;
  readonly #periodMs: number;
  constructor(logger: Logger, clock: Clock, periodMs = 10_000) {
    this.#logger = logger;
    this.#clock = clock;
    this.#periodMs = periodMs;
  }

  /** Warns unless `key` warned less than a period ago (then only counts it). */
  warn(key: string, fields: Record<string, unknown>, message: string): void {
    const now = this.#clock.now();
    const s = this.#last.get(key);
    if (s !== undefined && now - s.at < this.#periodMs) {
      s.suppressed++;
      return;
    }
    this.#last.set(key, { at: now, suppressed: 0 });
    this.#logger.warn({ ...fields, ...(s !== undefined && s.suppressed > 0 ? { suppressed: s.suppressed } : {}) }, message);
  }
}
