/**
 * A value a later start-up phase produces, handed to earlier phases as a
 * typed promise of it: created up front, settled exactly once by the phase
 * that produces it, read by whoever was constructed with it.
 *
 * The node's listener must answer (internode RPC for format quorum, probes,
 * the admin API) before the object layer exists: format quorum needs peers
 * answering on the same port. The dispatcher and the admin plane are
 * therefore built with an `Eventual` of what the object-layer phase
 * produces and answer 503 until it settles. No setter, no bag filled in
 * piece by piece: before it settles nothing of it exists, after it
 * everything does.
 */

/** The read side: what a consumer built before the value exists holds. */
export interface Eventual<T> {
  /** The value once settled, else undefined. */
  get(): T | undefined;
  /** Resolves with the value once settled (never rejects). */
  readonly settled: Promise<T>;
}

/** The write side, kept by the phase that produces the value. */
export interface Settler<T> {
  readonly eventual: Eventual<T>;
  /** Settles the value; a second call is a programming error and throws. */
  settle(value: T): void;
}

export function eventual<T>(what: string): Settler<T> {
  let value: { v: T } | undefined;
  const { promise: settled, resolve } = Promise.withResolvers<T>();
  return {
    eventual: { get: () => value?.v, settled },
    settle(v) {
      if (value !== undefined) throw new Error(`${what} was settled twice`);
      value = { v };
      resolve(v);
    },
  };
}

/** An `Eventual` that exists from the start (tests, compositions without a later phase). */
export function settledEventual<T>(v: T): Eventual<T> {
  return { get: () => v, settled: Promise.resolve(v) };
}

/** A view of part of an `Eventual` (`f` runs on every read: keep it a field access). */
export function mapEventual<T, U>(e: Eventual<T>, f: (v: T) => U): Eventual<U> {
  return {
    get: () => {
      const v = e.get();
      return v === undefined ? undefined : f(v);
    },
    settled: e.settled.then(f),
  };
}
