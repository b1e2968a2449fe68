/**
 * The cluster's namespace locker: the object layer's `NamespaceLocker` shape
 * (`lock`/`rlock` per (bucket, object) resolving to a release function),
 * backed by quorum locks (`DistLocker`). Structurally typed so this layer does
 * not import the object layer.
 *
 * Release is fire-and-forget for the caller (the object layer's contract is a
 * synchronous release); an unlock that cannot reach a locker is harmless since
 * that grant expires there without refresh.
 */
import type { Logger } from '../util/logger.ts';
import type { DistLocker } from './dist-lock.ts';

export interface DistNamespaceLockerOptions {
  /** The quorum locker guarding (bucket, object): one per erasure set, or one cluster-wide. */
  lockerFor: (bucket: string, object: string) => DistLocker;
  logger: Logger;
  /** Longest wait for a contended lock (default 30 s, then `SlowDown`). */
  timeoutMs?: number;
}

export class DistNamespaceLocker {
  readonly #lockerFor: (bucket: string, object: string) => DistLocker;
  readonly #logger: Logger;
  readonly #timeoutMs: number | undefined;

  constructor(opts: DistNamespaceLockerOptions) {
    this.#lockerFor = opts.lockerFor;
    this.#logger = opts.logger;
    this.#timeoutMs = opts.timeoutMs;
  }

  lock(bucket: string, object: string): Promise<() => void> {
    return this.#acquire(bucket, object, true);
  }

  rlock(bucket: string, object: string): Promise<() => void> {
    return this.#acquire(bucket, object, false);
  }

  async #acquire(bucket: string, object: string, write: boolean): Promise<() => void> {
    const held = await this.#lockerFor(bucket, object).acquire([`${bucket}/${object}`], {
      write,
      ...(this.#timeoutMs !== undefined ? { timeoutMs: this.#timeoutMs } : {}),
    });
    return () => {
      held.release().catch((err: unknown) => {
        this.#logger.warn({ event: 'lock_release_failed', bucket, object, err: String(err) }, 'namespace lock release failed');
      });
    };
  }
}
