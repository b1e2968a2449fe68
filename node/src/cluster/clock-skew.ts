/**
 * Clock skew of each peer, as this node sees it: every authenticated
 * internode call carries the caller's clock (its token's timestamp), so
 * the difference to this node's clock is measured on every call. A call's
 * delay (the network, a queue, a process that was paused: SIGSTOP, a VM
 * stall, a long GC) only ever adds to what it shows, so a peer's skew is
 * the smallest value its calls showed over the last `WINDOW_MS`, and a
 * warning needs that value beyond the bound for `CONFIRM_MS`: a burst of
 * calls queued while this node was frozen is not a clock 12 s off. The value per peer feeds
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
/** How long a call's measurement counts towards its peer's skew. */
export const WINDOW_MS = 10_000;
/** How long the skew must stay beyond the bound before it is reported. */
export const CONFIRM_MS = 2_000;

interface PeerState {
  /** Recent measurements, oldest first (the last one is kept however old). */
  samples: { at: number; ms: number }[];
  skewMs: number;
  at: number;
  warnedAt: number;
  /** Since when the skew has been beyond the bound (undefined: it is not). */
  overSince: number | undefined;
}

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
  readonly #skews = new Map<string, PeerState>();
  #publishedAt = Number.NEGATIVE_INFINITY;

  constructor(opts: { clock: Clock; logger: Logger; warnMs?: number }) {
    this.#clock = opts.clock;
    this.#logger = opts.logger;
    this.#warnMs = opts.warnMs ?? SKEW_WARN_MS;
  }

  /** One call's measurement (a refused token's too): this node's clock minus the caller's token time. */
  record(peer: string, skewMs: number): void {
    const now = this.#clock.now();
    let st = this.#skews.get(peer);
    if (st === undefined) {
      st = { samples: [], skewMs, at: now, warnedAt: Number.NEGATIVE_INFINITY, overSince: undefined };
      this.#skews.set(peer, st);
    }
    st.samples.push({ at: now, ms: skewMs });
    while (st.samples.length > 1 && (now - st.samples[0]!.at > WINDOW_MS || st.samples.length > 64)) st.samples.shift();
    // The call least delayed is the best measure (a delay only adds).
    let best = st.samples[0]!.ms;
    for (const x of st.samples) if (x.ms < best) best = x.ms;
    st.skewMs = best;
    st.at = now;
    if (Math.abs(best) < this.#warnMs) st.overSince = undefined;
    else st.overSince ??= now;
    if (st.overSince !== undefined && now - st.overSince >= CONFIRM_MS && now - st.warnedAt >= 60_000) {
      st.warnedAt = now;
      this.#logger.warn(
        { event: 'peer_clock_skew', peer, skewMs: Math.round(best) },
        `clock of ${peer} is ${(Math.abs(best) / 1000).toFixed(1)} s ${best > 0 ? 'behind' : 'ahead of'} this node's; keep the nodes' clocks synchronized (NTP): object lock, lifecycle and internode tokens depend on it`,
      );
    }
    if (peerClockSkew.hasSubscribers && now - this.#publishedAt >= 1_000) {
      this.#publishedAt = now;
      peerClockSkew.publish({ skews: this.list().map((s) => ({ peer: s.peer, seconds: s.skewMs / 1000 })) } satisfies PeerClockSkewMessage);
    }
  }

  list(): PeerSkew[] {
    return [...this.#skews].map(([peer, s]) => ({ peer, skewMs: Math.round(s.skewMs), at: s.at }));
  }
}
