/**
 * Reads one erasure block at a time from K of a version's shard streams,
 * failing over to the next good drive: a stream that fails (bitrot, short,
 * I/O) is closed and reported, and a spare opened from that block on. Used
 * by reads (`ErasureSet.readRange`) and by the heal's shard rebuild.
 */
import { SvcError } from '../util/errors.ts';

export class ShardReaders {
  readonly #k: number;
  readonly #open: (slot: number, block: number) => Promise<AsyncGenerator<Uint8Array>>;
  readonly #onFail: (slot: number, block: number, err: unknown) => void;
  readonly #readers = new Map<number, AsyncGenerator<Uint8Array>>();
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
  ) {
    this.#k = k;
    this.#open = open;
    this.#onFail = onFail;
    this.#active = order.slice(0, k);
    this.#spare = order.slice(k);
  }

  /** Block `b`'s shard (of `sLen` bytes) from K slots, by slot; `ErasureReadQuorum` when fewer than K are left. */
  async block(b: number, sLen: number): Promise<Map<number, Uint8Array>> {
    const got = new Map<number, Uint8Array>();
    let pending = this.#active;
    while (pending.length > 0) {
      const rs = await Promise.allSettled(
        pending.map(async (s) => {
          let r = this.#readers.get(s);
          if (r === undefined) {
            r = await this.#open(s, b);
            this.#readers.set(s, r);
          }
          const it = await r.next();
          if (it.done || it.value.length !== sLen) throw new SvcError('FileCorrupt', 'short shard');
          return it.value;
        }),
      );
      const retry: number[] = [];
      rs.forEach((r, i) => {
        const s = pending[i]!;
        if (r.status === 'fulfilled') {
          got.set(s, r.value);
          return;
        }
        this.#onFail(s, b, r.reason);
        const reader = this.#readers.get(s);
        this.#readers.delete(s);
        void reader?.return(undefined).catch(() => undefined);
        this.#active = this.#active.filter((x) => x !== s);
        const next = this.#spare.shift();
        if (next !== undefined) {
          this.#active.push(next);
          retry.push(next);
        }
      });
      pending = retry;
    }
    if (this.#active.length < this.#k) throw new SvcError('ErasureReadQuorum', undefined, { good: this.#active.length, needed: this.#k });
    return got;
  }

  /** Closes every open stream. */
  async close(): Promise<void> {
    for (const r of this.#readers.values()) await r.return(undefined).catch(() => undefined);
    this.#readers.clear();
    this.#spare = [];
  }
}
