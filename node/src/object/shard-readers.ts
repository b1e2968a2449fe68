/**
 * Reads one erasure block at a time from K of a version's shard streams,
 * failing over to the next good drive: a stream that fails (bitrot, short,
 * I/O) is closed and reported, and a spare opened from that block on. Used
 * by reads (`ErasureSet.readRange`) and by the heal's shard rebuild.
 *
 * Hedged: when some of the K streams have not delivered a block `hedgeMs`
 * after it was asked for, a spare is started for each of them and the first
 * K blocks to arrive are used. A stream that lost the race is dropped for
 * the rest of the read (its slot goes back among the spares), so a drive
 * that hangs never holds a read that already has K good shards.
 */
import { SvcError } from '../util/errors.ts';

/** Default delay before a block's stragglers are hedged with spares. */
export const DEFAULT_HEDGE_MS = 150;

type Outcome = { slot: number; ok: true; value: Uint8Array } | { slot: number; ok: false; error: unknown };

export class ShardReaders {
  readonly #k: number;
  readonly #open: (slot: number, block: number) => Promise<AsyncGenerator<Uint8Array>>;
  readonly #onFail: (slot: number, block: number, err: unknown) => void;
  readonly #readers = new Map<number, AsyncGenerator<Uint8Array>>();
  readonly #hedgeMs: number;
  #active: number[];
  #spare: number[];

  /**
   * `order`: the usable slots, preferred first (the first K are read);
   * `open(slot, block)`: a verified stream of that slot's shard blocks from
   * `block` on.
   */
  constructor(
    order: readonly number[],
    k: number,
    open: (slot: number, block: number) => Promise<AsyncGenerator<Uint8Array>>,
    onFail: (slot: number, block: number, err: unknown) => void,
    opts: { hedgeMs?: number } = {},
  ) {
    this.#k = k;
    this.#open = open;
    this.#onFail = onFail;
    this.#hedgeMs = opts.hedgeMs ?? DEFAULT_HEDGE_MS;
    this.#active = order.slice(0, k);
    this.#spare = order.slice(k);
  }

  async #read(s: number, b: number, sLen: number): Promise<Uint8Array> {
    let r = this.#readers.get(s);
    if (r === undefined) {
      r = await this.#open(s, b);
      this.#readers.set(s, r);
    }
    const it = await r.next();
    if (it.done || it.value.length !== sLen) throw new SvcError('FileCorrupt', 'short shard');
    return it.value;
  }

  /** Drops a slot's stream (never awaited: a hung stream must not hold the read). */
  #drop(s: number): void {
    const reader = this.#readers.get(s);
    this.#readers.delete(s);
    void reader?.return(undefined).catch(() => undefined);
  }

  /** Block `b`'s shard (of `sLen` bytes) from K slots, by slot; `ErasureReadQuorum` when fewer than K are left. */
  async block(b: number, sLen: number): Promise<Map<number, Uint8Array>> {
    const got = new Map<number, Uint8Array>();
    const inflight = new Map<number, Promise<Outcome>>();
    const start = (s: number) =>
      inflight.set(
        s,
        this.#read(s, b, sLen).then(
          (value): Outcome => ({ slot: s, ok: true, value }),
          (error: unknown): Outcome => ({ slot: s, ok: false, error }),
        ),
      );
    for (const s of this.#active) start(s);
    let hedged = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      while (got.size < this.#k && inflight.size > 0) {
        const race: Promise<Outcome | 'hedge'>[] = [...inflight.values()];
        if (!hedged && this.#spare.length > 0 && this.#hedgeMs > 0) {
          race.push(
            new Promise<'hedge'>((resolve) => {
              timer = setTimeout(() => resolve('hedge'), this.#hedgeMs);
            }),
          );
        }
        const r = await Promise.race(race);
        if (timer !== undefined) clearTimeout(timer);
        timer = undefined;
        if (r === 'hedge') {
          // Stragglers: one spare each, first K blocks win.
          hedged = true;
          const missing = this.#k - got.size;
          for (let i = 0; i < Math.min(missing, inflight.size) && this.#spare.length > 0; i++) start(this.#spare.shift()!);
          continue;
        }
        inflight.delete(r.slot);
        if (r.ok) {
          got.set(r.slot, r.value);
          continue;
        }
        this.#onFail(r.slot, b, r.error);
        this.#drop(r.slot);
        const next = this.#spare.shift();
        if (next !== undefined) start(next);
      }
    } finally {
      if (timer !== undefined) clearTimeout(timer);
    }
    // Slots still reading lost the race: their streams stop, their slots wait among the spares.
    for (const s of inflight.keys()) {
      this.#drop(s);
      this.#spare.push(s);
    }
    this.#active = [...got.keys()];
    if (got.size < this.#k) throw new SvcError('ErasureReadQuorum', undefined, { good: got.size, needed: this.#k });
    return got;
  }

  /** Closes every open stream. */
  async close(): Promise<void> {
    for (const r of this.#readers.values()) await r.return(undefined).catch(() => undefined);
    this.#readers.clear();
    this.#spare = [];
  }
}
