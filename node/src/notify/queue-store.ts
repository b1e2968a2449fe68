/**
 * A target's persistent queue: one directory, one file per event
 * (`<16 hex digits of a sequence>.json`), written to a temporary name,
 * fsync'd, renamed into place and the directory fsync'd, so an event the
 * store accepted survives a crash of the process or the machine. Files are
 * read back in sequence order (the order they were put), and removed only
 * after the target took the event: at least once. A store holds at most
 * `limit` events; a put beyond it is refused (`XSvcNotifyQueueFull`), never
 * an event dropped silently.
 */
import { mkdir, open, readdir, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { SvcError } from '../util/errors.ts';

const NAME = /^([0-9a-f]{16})\.(json|prep)$/;

/**
 * `ready`: to deliver. `prepared`: put before a write committed, waiting
 * for its outcome in this process. `unsettled`: a prepared entry found at
 * open (the process ended before the write's outcome was recorded), to be
 * settled against the namespace before it is delivered or dropped.
 */
export type EntryState = 'ready' | 'prepared' | 'unsettled';

export interface QueuedEvent<T> {
  /** The entry's name in the store (16 hex digits: its order). */
  id: string;
  state: EntryState;
  value: T;
}

async function fsyncDir(dir: string): Promise<void> {
  const h = await open(dir, 'r');
  try {
    await h.sync();
  } finally {
    await h.close();
  }
}

export class QueueStore<T> {
  readonly dir: string;
  readonly limit: number;
  #next = 0n;
  /** Entries in the store, in order, with their state (the directory's content, kept in memory). */
  readonly #entries = new Map<string, EntryState>();
  /** Entries being written (room reserved, not visible yet). */
  #writing = 0;
  #opened = false;

  constructor(dir: string, limit: number) {
    this.dir = dir;
    this.limit = limit;
  }

  #file(id: string, state: EntryState): string {
    return join(this.dir, `${id}.${state === 'ready' ? 'json' : 'prep'}`);
  }

  /** Creates the directory, removes temporary files a crash left and reads what is queued. */
  async open(): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const names = await readdir(this.dir);
    for (const n of names) if (n.endsWith('.tmp')) await rm(join(this.dir, n), { force: true });
    const found = names.flatMap((n) => {
      const m = NAME.exec(n);
      return m ? [[m[1]!, m[2] === 'json' ? 'ready' : 'unsettled'] as const] : [];
    });
    found.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    this.#entries.clear();
    for (const [id, state] of found) this.#entries.set(id, state);
    const last = found.at(-1);
    this.#next = last === undefined ? 0n : BigInt(`0x${last[0]}`) + 1n;
    this.#opened = true;
  }

  get length(): number {
    return this.#entries.size;
  }

  /** Counts by state. */
  counts(): Record<EntryState, number> {
    const c: Record<EntryState, number> = { ready: 0, prepared: 0, unsettled: 0 };
    for (const s of this.#entries.values()) c[s]++;
    return c;
  }

  /**
   * Puts events durably (each file fsync'd, then one directory fsync),
   * `ready` or `prepared`; refuses the whole batch when it would pass the
   * limit.
   */
  async put(values: readonly T[], state: 'ready' | 'prepared' = 'ready'): Promise<string[]> {
    if (!this.#opened) throw new Error('queue store not opened');
    if (this.#entries.size + this.#writing + values.length > this.limit) {
      throw new SvcError('XSvcNotifyQueueFull', `the queue in ${this.dir} holds its limit of ${this.limit} events`, { limit: this.limit });
    }
    // Names and room are reserved first (concurrent puts never share a name or pass the limit
    // together); the entries become visible only once their files are in place.
    const ids: string[] = [];
    for (let i = 0; i < values.length; i++) ids.push((this.#next++).toString(16).padStart(16, '0'));
    this.#writing += ids.length;
    try {
      for (let i = 0; i < values.length; i++) {
        const tmp = join(this.dir, `${ids[i]}.tmp`);
        const h = await open(tmp, 'w', 0o600);
        try {
          await h.writeFile(JSON.stringify(values[i]));
          await h.sync();
        } finally {
          await h.close();
        }
        await rename(tmp, this.#file(ids[i]!, state));
      }
      await fsyncDir(this.dir);
    } catch (err) {
      await Promise.all(ids.map((id) => Promise.all([rm(this.#file(id, state), { force: true }), rm(join(this.dir, `${id}.tmp`), { force: true })]))).catch(() => undefined);
      throw err;
    } finally {
      this.#writing -= ids.length;
    }
    const last = [...this.#entries.keys()].at(-1);
    for (const id of ids) this.#entries.set(id, state);
    if (last !== undefined && ids[0]! < last) {
      // A put that started earlier finished later: keep the entries in name order.
      const sorted = [...this.#entries].sort((a, b) => (a[0] < b[0] ? -1 : 1));
      this.#entries.clear();
      for (const [id, st] of sorted) this.#entries.set(id, st);
    }
    return ids;
  }

  /**
   * Marks prepared or unsettled entries ready. The rename is not fsync'd:
   * after a machine crash the entry may come back unsettled and is settled
   * again, never lost.
   */
  async confirm(ids: readonly string[]): Promise<void> {
    for (const id of ids) {
      const st = this.#entries.get(id);
      if (st === undefined || st === 'ready') continue;
      await rename(this.#file(id, st), this.#file(id, 'ready'));
      this.#entries.set(id, 'ready');
    }
  }

  /** The oldest `max` entries in one of `states` (a file that no longer parses is removed and reported through `onCorrupt`). */
  async peek(max: number, states: readonly EntryState[] = ['ready'], onCorrupt?: (id: string, err: unknown) => void): Promise<QueuedEvent<T>[]> {
    const out: QueuedEvent<T>[] = [];
    // A snapshot: the map changes while the files are read.
    for (const [id, state] of [...this.#entries]) {
      if (out.length >= max) break;
      if (!states.includes(state) || this.#entries.get(id) !== state) continue;
      try {
        out.push({ id, state, value: JSON.parse(await readFile(this.#file(id, state), 'utf8')) as T });
      } catch (err) {
        onCorrupt?.(id, err);
        await this.remove([id]);
      }
    }
    return out;
  }

  /** Removes entries (delivered, or of a write that did not happen). */
  async remove(ids: readonly string[]): Promise<void> {
    for (const id of ids) {
      const st = this.#entries.get(id);
      if (st === undefined) continue;
      await rm(this.#file(id, st), { force: true });
      this.#entries.delete(id);
    }
  }
}
