/**
 * Namespace locks per (bucket, object), shared by PUT, delete, multipart
 * complete, metadata updates, heal and data movement. The local locker serves
 * one node; the cluster plugs a distributed (quorum) locker behind the same
 * interface.
 */
export interface NamespaceLocker {
  /** Exclusive lock; resolves to the release function. */
  lock(bucket: string, object: string): Promise<() => void>;
  /** Shared lock; resolves to the release function. */
  rlock(bucket: string, object: string): Promise<() => void>;
}

interface Entry {
  readers: number;
  writer: boolean;
  queue: { write: boolean; grant: () => void }[];
}

/** In-process readers-writer lock table, FIFO-fair. */
export class LocalNamespaceLocker implements NamespaceLocker {
  readonly #table = new Map<string, Entry>();

  lock(bucket: string, object: string): Promise<() => void> {
    return this.#acquire(`${bucket}/${object}`, true);
  }

  rlock(bucket: string, object: string): Promise<() => void> {
    return this.#acquire(`${bucket}/${object}`, false);
  }

  /** Number of keys with holders or waiters (tests: nothing leaks). */
  get size(): number {
    return this.#table.size;
  }

  #acquire(key: string, write: boolean): Promise<() => void> {
    let e = this.#table.get(key);
    if (!e) {
      e = { readers: 0, writer: false, queue: [] };
      this.#table.set(key, e);
    }
    const entry = e;
    return new Promise((resolve) => {
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        if (write) entry.writer = false;
        else entry.readers--;
        this.#pump(key, entry);
      };
      entry.queue.push({ write, grant: () => resolve(release) });
      this.#pump(key, entry);
    });
  }

  #pump(key: string, e: Entry): void {
    while (e.queue.length > 0) {
      const next = e.queue[0]!;
      if (next.write) {
        if (e.writer || e.readers > 0) break;
        e.writer = true;
      } else {
        if (e.writer) break;
        e.readers++;
      }
      e.queue.shift();
      next.grant();
    }
    if (!e.writer && e.readers === 0 && e.queue.length === 0) this.#table.delete(key);
  }
}
