/**
 * A bounded single-producer single-consumer queue of shard frames feeding one
 * drive's `createFile`. `push` resolves once the queue has room, so the
 * slowest needed drive throttles the producer (and so the client socket);
 * memory stays at `capacity` frames per drive.
 *
 * Each frame may carry a `release` callback, called once the consumer is
 * done with it (it pulled the next frame, or stopped): the producer recycles
 * frame buffers instead of leaving garbage per block (Drive.createFile
 * contract: a drive finishes with a chunk before pulling the next).
 */
export class ShardPipe implements AsyncIterable<Uint8Array> {
  readonly #capacity: number;
  readonly #queue: Uint8Array[] = [];
  readonly #releases: ((() => void) | undefined)[] = [];
  #closed = false;
  #error: unknown;
  /** Set when the consumer stopped (drive failed): pushes are dropped. */
  #dead = false;
  #wakeConsumer: (() => void) | undefined;
  #wakeProducer: (() => void) | undefined;

  constructor(capacity = 2) {
    this.#capacity = capacity;
  }

  get dead(): boolean {
    return this.#dead;
  }

  /** Queues a frame; resolves when there is room again (or the consumer is gone). */
  async push(frame: Uint8Array, release?: () => void): Promise<void> {
    if (this.#dead) {
      release?.();
      return;
    }
    this.#queue.push(frame);
    this.#releases.push(release);
    this.#wakeConsumer?.();
    while (this.#queue.length >= this.#capacity && !this.#dead) {
      await new Promise<void>((r) => {
        this.#wakeProducer = r;
      });
    }
  }

  /** End of data. */
  close(): void {
    this.#closed = true;
    this.#wakeConsumer?.();
  }

  /** Aborts the consumer: its iteration throws `err` (the drive discards the file). */
  fail(err: unknown): void {
    this.#error = err;
    this.#closed = true;
    this.#wakeConsumer?.();
  }

  /** The consumer gave up (its write failed): release a waiting producer. */
  markDead(): void {
    this.#dead = true;
    this.#queue.length = 0;
    for (const r of this.#releases.splice(0)) r?.();
    this.#wakeProducer?.();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Uint8Array> {
    let held: (() => void) | undefined;
    try {
      for (;;) {
        if (this.#error !== undefined) throw this.#error;
        const next = this.#queue.shift();
        if (next !== undefined) {
          const release = this.#releases.shift();
          this.#wakeProducer?.();
          held = release;
          yield next;
          // The consumer asked for more: it is done with `next`.
          held = undefined;
          release?.();
          continue;
        }
        if (this.#closed) return;
        await new Promise<void>((r) => {
          this.#wakeConsumer = r;
        });
        this.#wakeConsumer = undefined;
      }
    } finally {
      held?.();
      if (!this.#closed || this.#error !== undefined) this.markDead();
    }
  }
}
