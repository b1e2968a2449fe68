/**
 * A client connected on first use and dropped after a failure, so the
 * next delivery attempt connects afresh (the delivery loop's backoff paces
 * the reconnects). One connect at a time.
 */
export class LazyClient<C> {
  readonly #connect: () => Promise<C>;
  readonly #close: (c: C) => Promise<void>;
  #client: Promise<C> | undefined;

  constructor(connect: () => Promise<C>, close: (c: C) => Promise<void>) {
    this.#connect = connect;
    this.#close = close;
  }

  /** Runs `fn` on the client; a failure drops the client and rethrows. */
  async use<T>(fn: (c: C) => Promise<T>): Promise<T> {
    const p = (this.#client ??= this.#connect());
    let c: C;
    try {
      c = await p;
    } catch (err) {
      if (this.#client === p) this.#client = undefined;
      throw err;
    }
    try {
      return await fn(c);
    } catch (err) {
      if (this.#client === p) {
        this.#client = undefined;
        await this.#close(c).catch(() => undefined);
      }
      throw err;
    }
  }

  async close(): Promise<void> {
    const p = this.#client;
    this.#client = undefined;
    if (!p) return;
    const c = await p.catch(() => undefined);
    if (c !== undefined) await this.#close(c).catch(() => undefined);
  }
}

/** Rejects after `ms` unless `p` settles first. */
export async function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let t: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => {
        t = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(t);
  }
}

/** A step done once it succeeded (a table created); after a failure the next call tries again. */
export function onceSucceeded(step: () => Promise<unknown>): () => Promise<void> {
  let done: Promise<void> | undefined;
  return () => {
    const p = (done ??= step().then(() => undefined));
    p.catch(() => {
      if (done === p) done = undefined;
    });
    return p;
  };
}
