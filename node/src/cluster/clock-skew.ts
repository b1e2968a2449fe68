/**
 * Clock skew of each peer, as this node sees it: every authenticated
 * internode call carries the caller's clock (its token's timestamp), so
 * the difference to this node's clock is measured on every call, network
 * delay included (milliseconds on a LAN). A smoothed value per peer feeds
 * the log (`peer_clock_skew`, once a minute per peer while above
 * `warnMs`), the metric `svc_peer_clock_skew_seconds` (through
 * `svc:peer:clock-skew`) and the cluster snapshot (the console's alert).
 * Tokens from a peer more than the validity window off are refused
 * (`rpc_clock_skew`, with the skew): that is measured here too.
 */
import type { Clock } from '../util/clock.ts';
import { type PeerClockSkewMessage, peerClockSkew } from '../util/diagnostics.ts';
import type { Logger } from '../util/logger.ts';

/** Skew worth a warning: clocks kept by NTP stay within milliseconds. */
export const SKEW_WARN_MS = 2_000;

export interface PeerSkew {
  readonly peer: string;
  /** This node's clock minus the peer's, smoothed. */
  readonly skewMs: number;
  /** When it was last measured (this node's clock). */
  readonly at: number;
}

export class ClockSkews {
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #warnMs: number;
  readonly #skews = new Map<string, { skewMs: number; at: number; warnedAt: number }>();
  #publishedAt = Number.NEGATIVE_INFINITY;

  constructor(opts: { clock: Clock; logger: Logger; warnMs?: number }) {
    this.#clock = opts.clock;
    this.#logger = opts.logger;
    this.#warnMs = opts.warnMs ?? SKEW_WARN_MS;
  }

  /** One call's measurement (a refused token's too). */
  record(peer: string, skewMs: number): void {
    const now = this.#clock.now();
    const cur = this.#skews.get(peer);
    // Smoothed: a call delayed in a queue should not look like a clock step.
    const skew = cur === undefined || Math.abs(skewMs - cur.skewMs) > 10_000 ? skewMs : cur.skewMs * 0.8 + skewMs * 0.2;
    const warnedAt = cur?.warnedAt ?? Number.NEGATIVE_INFINITY;
    const next = { skewMs: skew, at: now, warnedAt };
    if (Math.abs(skew) >= this.#warnMs && now - warnedAt >= 60_000) {
      next.warnedAt = now;
      this.#logger.warn(
        { event: 'peer_clock_skew', peer, skewMs: Math.round(skew) },
        `clock of ${peer} is ${(Math.abs(skew) / 1000).toFixed(1)} s ${skew > 0 ? 'behind' : 'ahead of'} this node's; keep the nodes' clocks synchronized (NTP): object lock, lifecycle and internode tokens depend on it`,
      );
    }
    this.#skews.set(peer, next);
    if (peerClockSkew.hasSubscribers && now - this.#publishedAt >= 1_000) {
      this.#publishedAt = now;
      peerClockSkew.publish({ skews: this.list().map((s) => ({ peer: s.peer, seconds: s.skewMs / 1000 })) } satisfies PeerClockSkewMessage);
    }
  }

  list(): PeerSkew[] {
    return [...this.#skews].map(([peer, s]) => ({ peer, skewMs: Math.round(s.skewMs), at: s.at }));
  }
}
