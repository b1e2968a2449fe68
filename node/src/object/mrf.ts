/**
 * MRF ("most recently failed") queue: objects whose last write or read found
 * missing or corrupt shards on some drives. Bounded and in memory; the heal
 * worker drains it. When full, the oldest entries are dropped (and counted):
 * the scanner finds them again on its next pass.
 */
export interface MrfEntry {
  bucket: string;
  object: string;
  versionId: string;
  /** Pool and set holding the object. */
  pool: number;
  set: number;
  /** Why it was queued: `write-partial`, `read-missing`, `read-bitrot`, `delete-partial`. */
  reason: string;
  /** Set slots of the drives that missed or failed. */
  slots: number[];
}

export class MrfQueue {
  readonly capacity: number;
  #items: MrfEntry[] = [];
  #dropped = 0;
  #listeners = new Set<(e: MrfEntry) => void>();

  constructor(capacity = 10_000) {
    this.capacity = capacity;
  }

  enqueue(e: MrfEntry): void {
    if (this.#items.length >= this.capacity) {
      this.#items.shift();
      this.#dropped++;
    }
    this.#items.push(e);
    for (const l of this.#listeners) l(e);
  }

  get size(): number {
    return this.#items.length;
  }

  /** Entries dropped because the queue was full. */
  get dropped(): number {
    return this.#dropped;
  }

  /** Removes and returns up to `max` entries, oldest first. */
  drain(max = Number.POSITIVE_INFINITY): MrfEntry[] {
    return this.#items.splice(0, Math.min(max, this.#items.length));
  }

  /** Entries without removing them (admin status, tests). */
  peek(): readonly MrfEntry[] {
    return this.#items;
  }

  /** Called after every enqueue with the entry (the heal worker wakes up); returns an unsubscribe. */
  onEnqueue(fn: (e: MrfEntry) => void): () => void {
    this.#listeners.add(fn);
    return () => this.#listeners.delete(fn);
  }
}
