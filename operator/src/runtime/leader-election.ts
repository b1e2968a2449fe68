/**
 * Leader election over a coordination.k8s.io/v1 Lease (client-node has
 * none). The decision is pure (`decideLease`); `LeaderElector` runs it on a
 * timer through an injected lease client, so both are testable with a fake
 * clock. Writes carry the lease's resourceVersion: two candidates racing for
 * an expired lease cannot both win (the loser gets 409).
 */
import type { Timers } from './workqueue.ts';

export interface LeaseRecord {
  readonly holderIdentity?: string | undefined;
  readonly leaseDurationSeconds?: number | undefined;
  readonly acquireTime?: string | undefined;
  readonly renewTime?: string | undefined;
  readonly leaseTransitions?: number | undefined;
  readonly resourceVersion?: string | undefined;
}

export type LeaseDecision = { action: 'create' } | { action: 'acquire' } | { action: 'renew' } | { action: 'wait'; holder: string; expiresInMs: number };

export function decideLease(lease: LeaseRecord | undefined, identity: string, now: Date): LeaseDecision {
  if (!lease) return { action: 'create' };
  if (!lease.holderIdentity) return { action: 'acquire' };
  if (lease.holderIdentity === identity) return { action: 'renew' };
  const renewed = Date.parse(lease.renewTime ?? lease.acquireTime ?? '1970-01-01T00:00:00Z');
  const expires = renewed + (lease.leaseDurationSeconds ?? 15) * 1000;
  if (now.getTime() >= expires) return { action: 'acquire' };
  return { action: 'wait', holder: lease.holderIdentity, expiresInMs: expires - now.getTime() };
}

export interface LeaseClient {
  get(): Promise<LeaseRecord | undefined>;
  create(rec: LeaseRecord): Promise<void>;
  /** Replaces the lease; rejects on a stale resourceVersion. */
  update(rec: LeaseRecord): Promise<void>;
}

export interface LeaderElectorOptions {
  readonly identity: string;
  readonly client: LeaseClient;
  readonly leaseDurationSeconds?: number;
  readonly renewDeadlineMs?: number;
  readonly retryPeriodMs?: number;
  readonly now?: () => Date;
  readonly timers?: Timers;
  readonly onStartedLeading: () => void;
  readonly onStoppedLeading: () => void;
  readonly onError?: (err: unknown) => void;
}

export class LeaderElector {
  readonly #o: Required<Omit<LeaderElectorOptions, 'onError'>> & Pick<LeaderElectorOptions, 'onError'>;
  #leading = false;
  #lastRenew = 0;
  #timer: unknown;
  #stopped = false;

  constructor(o: LeaderElectorOptions) {
    this.#o = {
      leaseDurationSeconds: 15,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2_000,
      now: () => new Date(),
      timers: {
        // Not unref'd: while a standby waits for the lease this timer is all that keeps
        // the process alive (with the probe server off nothing else does); stop() clears it.
        setTimeout: (fn, ms) => setTimeout(fn, ms),
        clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
      },
      ...o,
    };
  }

  get leading(): boolean {
    return this.#leading;
  }

  start(): void {
    void this.tick();
  }

  /** One round: read, decide, write. Exposed for tests. */
  async tick(): Promise<void> {
    if (this.#stopped) return;
    const now = this.#o.now();
    try {
      const lease = await this.#o.client.get();
      const d = decideLease(lease, this.#o.identity, now);
      const base = { holderIdentity: this.#o.identity, leaseDurationSeconds: this.#o.leaseDurationSeconds, renewTime: now.toISOString() };
      if (d.action === 'create') await this.#o.client.create({ ...base, acquireTime: now.toISOString(), leaseTransitions: 0 });
      else if (d.action === 'acquire') {
        await this.#o.client.update({ ...base, acquireTime: now.toISOString(), leaseTransitions: (lease?.leaseTransitions ?? 0) + 1, resourceVersion: lease?.resourceVersion });
      } else if (d.action === 'renew') await this.#o.client.update({ ...lease, ...base, resourceVersion: lease?.resourceVersion });
      if (d.action === 'wait') this.#lose();
      else {
        this.#lastRenew = now.getTime();
        if (!this.#leading) {
          this.#leading = true;
          this.#o.onStartedLeading();
        }
      }
    } catch (err) {
      this.#o.onError?.(err);
      if (this.#leading && now.getTime() - this.#lastRenew > this.#o.renewDeadlineMs) this.#lose();
    }
    if (!this.#stopped) this.#timer = this.#o.timers.setTimeout(() => void this.tick(), this.#o.retryPeriodMs);
  }

  #lose(): void {
    if (!this.#leading) return;
    this.#leading = false;
    this.#o.onStoppedLeading();
  }

  /** Stops renewing; a leader releases the lease so a successor need not wait for expiry. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#o.timers.clearTimeout(this.#timer);
    if (this.#leading) {
      this.#leading = false;
      const lease = await this.#o.client.get().catch(() => undefined);
      if (lease?.holderIdentity === this.#o.identity) {
        await this.#o.client.update({ ...lease, holderIdentity: '', renewTime: this.#o.now().toISOString() }).catch(() => undefined);
      }
    }
  }
}
