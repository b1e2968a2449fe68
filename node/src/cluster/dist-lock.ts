/**
 * Distributed namespace read/write locks over a quorum of lockers (one locker
 * per distinct host of an erasure set's endpoints), after the dsync rules
 * (reference/on-disk-and-placement.md §4.5):
 *
 * - n lockers, tolerance t = ⌊n/2⌋;
 * - read quorum  = n − t;
 * - write quorum = n − t, plus one when that equals t (an even split must
 *   never let two writers both believe they won: split-brain guard);
 * - a held lock is refreshed every 10 s on every locker and is lost (its
 *   `lost` signal aborts) when fewer than quorum lockers confirm it;
 * - lockers drop a grant that is not refreshed for 1 min, so a killed holder's
 *   lock expires on its own.
 *
 * A failed attempt releases whatever it got and retries with a randomised
 * backoff until the caller's timeout. When the lockers known to be online
 * cannot form a quorum the attempt fails at once (`ErasureWriteQuorum` /
 * `ErasureReadQuorum`), instead of holding a request for the whole timeout.
 */
import { randomUUID } from 'node:crypto';
import type { Clock } from '../util/clock.ts';
import { SvcError } from '../util/errors.ts';
import type { Logger } from '../util/logger.ts';
import type { LockArgs, Locker } from './lock-server.ts';

export const LOCK_REFRESH_INTERVAL_MS = 10_000;
export const DEFAULT_LOCK_TIMEOUT_MS = 30_000;

export interface LockQuorum {
  read: number;
  write: number;
}

/** dsync quorum for `n` lockers. */
export function lockQuorum(n: number): LockQuorum {
  if (!Number.isInteger(n) || n < 1) throw new SvcError('InternalError', `lock quorum needs at least one locker (got ${n})`);
  const tolerance = Math.floor(n / 2);
  const read = n - tolerance;
  const write = read === tolerance ? read + 1 : read;
  return { read, write };
}

export interface AcquireOptions {
  write: boolean;
  /** Give up after this long (default 30 s) with `SlowDown`. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** A lock held on a quorum of lockers. */
export interface HeldLock {
  readonly uid: string;
  readonly resources: readonly string[];
  readonly write: boolean;
  /** Aborted when a refresh fails to reach quorum: the holder must stop. */
  readonly lost: AbortSignal;
  /** Releases the lock on every locker (idempotent). */
  release(): Promise<void>;
}

export interface DistLockerOptions {
  lockers: readonly Locker[];
  /** This node's id, recorded as the holder. */
  owner: string;
  clock: Clock;
  logger: Logger;
  refreshIntervalMs?: number;
  /** Bounds of the randomised retry backoff. */
  retryMinMs?: number;
  retryMaxMs?: number;
  /** Source of randomness in [0, 1) for the backoff. */
  random?: () => number;
}

export class DistLocker {
  readonly lockers: readonly Locker[];
  readonly quorum: LockQuorum;
  readonly #owner: string;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #refreshMs: number;
  readonly #retryMinMs: number;
  readonly #retryMaxMs: number;
  readonly #random: () => number;
  /** Locks this node holds now, and releases on their way to the lockers (see `close`). */
  readonly #holding = new Set<HeldLock>();
  readonly #releasing = new Set<Promise<void>>();

  constructor(opts: DistLockerOptions) {
    this.lockers = opts.lockers;
    this.quorum = lockQuorum(opts.lockers.length);
    this.#owner = opts.owner;
    this.#clock = opts.clock;
    this.#logger = opts.logger;
    this.#refreshMs = opts.refreshIntervalMs ?? LOCK_REFRESH_INTERVAL_MS;
    this.#retryMinMs = opts.retryMinMs ?? 10;
    this.#retryMaxMs = opts.retryMaxMs ?? 250;
    this.#random = opts.random ?? Math.random;
  }

  /** True when the lockers known to be online can form the (write) quorum. */
  quorumAvailable(write = true): boolean {
    const online = this.lockers.filter((l) => l.isOnline()).length;
    return online >= (write ? this.quorum.write : this.quorum.read);
  }

  async acquire(resources: readonly string[], opts: AcquireOptions): Promise<HeldLock> {
    if (resources.length === 0) throw new SvcError('InternalError', 'lock of no resource');
    const quorum = opts.write ? this.quorum.write : this.quorum.read;
    const deadline = this.#clock.now() + (opts.timeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS);
    for (;;) {
      opts.signal?.throwIfAborted();
      if (!this.quorumAvailable(opts.write)) {
        throw new SvcError(opts.write ? 'ErasureWriteQuorum' : 'ErasureReadQuorum', 'lock quorum unavailable', {
          resources,
          online: this.lockers.filter((l) => l.isOnline()).length,
          quorum,
        });
      }
      const args: LockArgs = { uid: randomUUID(), resources: [...resources], owner: this.#owner };
      const answers = await this.#ask(args, opts.write, quorum);
      const granted = answers.filter((a) => a === 'granted').length;
      // A release goes to every locker that did not refuse: one that failed to answer (or has
      // not answered yet) may still have granted (otherwise its grant lingers until expiry).
      const holders = this.lockers.filter((_, i) => answers[i] !== 'refused');
      if (granted >= quorum) return this.#held(args, opts.write, quorum, holders);
      await this.#releaseOn(args, opts.write, holders);
      if (this.#clock.now() >= deadline) {
        // Which locker said what on the last attempt: a refusal is a holder elsewhere (or a grant
        // whose release was lost, until it expires); a failure is a locker that did not answer.
        const byLocker = Object.fromEntries(this.lockers.map((l, i) => [l.id, `${answers[i]}${l.isOnline() ? '' : ' (offline)'}`]));
        this.#logger.warn({ event: 'lock_timeout', resources, write: opts.write, granted, quorum, lockers: byLocker }, 'timed out waiting for a namespace lock');
        throw new SvcError('SlowDown', 'timed out waiting for a namespace lock', { resources, granted, quorum });
      }
      const delay = this.#retryMinMs + Math.floor(this.#random() * (this.#retryMaxMs - this.#retryMinMs));
      await this.#clock.sleep(Math.min(delay, Math.max(1, deadline - this.#clock.now())), opts.signal);
    }
  }

  /**
   * Asks every locker; settles once `quorum` granted or every locker
   * answered. A locker still silent then is `pending` (a slow or frozen
   * peer must not hold a lock that the others already granted; it is sent
   * the release like any holder).
   */
  #ask(args: LockArgs, write: boolean, quorum: number): Promise<('granted' | 'refused' | 'failed' | 'pending')[]> {
    const answers: ('granted' | 'refused' | 'failed' | 'pending')[] = this.lockers.map(() => 'pending');
    return new Promise((resolve) => {
      let settled = 0;
      let done = false;
      this.lockers.forEach((l, i) => {
        (write ? l.lock(args) : l.rlock(args))
          .then(
            (ok) => (ok ? 'granted' : 'refused'),
            () => 'failed' as const,
          )
          .then((a) => {
            answers[i] = a;
            settled++;
            if (done) return;
            if (settled === this.lockers.length || answers.filter((x) => x === 'granted').length >= quorum) {
              done = true;
              resolve([...answers]);
            }
          });
      });
    });
  }

  #held(args: LockArgs, write: boolean, quorum: number, holders: readonly Locker[]): HeldLock {
    // Made when someone asks for the signal or the lock is lost: most holders never look (a GET's
    // read lock is held for microseconds), and an AbortController per request was measurable.
    let lostCtl: AbortController | undefined;
    let released = false;
    let refreshing = false;
    const stopRefresh = this.#clock.every(this.#refreshMs, () => {
      if (released || refreshing) return;
      refreshing = true;
      void this.#refresh(args, quorum)
        .then((ok) => {
          if (ok || released) return;
          this.#logger.warn({ event: 'lock_lost', resources: args.resources, uid: args.uid, write }, 'namespace lock lost: refresh quorum failed');
          (lostCtl ??= new AbortController()).abort(new SvcError(write ? 'ErasureWriteQuorum' : 'ErasureReadQuorum', 'namespace lock lost'));
          // The normal release: to the lockers that granted it, and awaited by `close()`.
          return held.release();
        })
        .finally(() => {
          refreshing = false;
        });
    });
    const held: HeldLock = {
      uid: args.uid,
      resources: args.resources,
      write,
      get lost() {
        return (lostCtl ??= new AbortController()).signal;
      },
      release: async () => {
        if (released) return;
        released = true;
        stopRefresh();
        this.#holding.delete(held);
        const sent = this.#releaseOn(args, write, holders);
        this.#releasing.add(sent);
        try {
          await sent;
        } finally {
          this.#releasing.delete(sent);
        }
      },
    };
    this.#holding.add(held);
    return held;
  }

  /**
   * A node closing down: releases what it still holds and waits for every
   * release on its way, so none is cut off when the node's RPC clients close.
   * A grant whose release never arrived would block its resource on the
   * other lockers until it expires (a minute), longer than a lock wait.
   */
  async close(): Promise<void> {
    await Promise.all([...this.#holding].map((h) => h.release()));
    await Promise.all([...this.#releasing]);
  }

  async #refresh(args: LockArgs, quorum: number): Promise<boolean> {
    const answers = await Promise.all(this.lockers.map((l) => l.refresh(args).catch(() => false)));
    return answers.filter(Boolean).length >= quorum;
  }

  async #releaseOn(args: LockArgs, write: boolean, lockers: readonly Locker[]): Promise<void> {
    await Promise.all(
      lockers.map((l) =>
        (write ? l.unlock(args) : l.runlock(args)).catch((err: unknown) => {
          // The grant expires on that locker by itself (no refresh).
          this.#logger.debug({ event: 'lock_release_failed', locker: l.id, err: String(err) }, 'lock release failed');
        }),
      ),
    );
  }
}
