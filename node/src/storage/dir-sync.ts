/**
 * Group commit of directory fsyncs: concurrent publishes that each need the
 * same directory fsync'd (new objects' directories made in one bucket prefix)
 * share one fsync instead of each paying for its own.
 *
 * Why one fsync can stand for many: an fsync of a directory makes durable
 * every entry the directory holds when the fsync starts. So a caller whose
 * rename or mkdir has completed is covered by any fsync of that directory
 * that *starts* after it asked, and by no fsync already running then (that
 * one may have written the directory's blocks before the new entry existed).
 * `sync(dir)` therefore joins the directory's next fsync, the one not yet
 * handed to the file system, and never the one in flight: while one runs,
 * callers gather into the next batch, which starts as soon as the running one
 * ends. A batch is closed before its fsync is started, so nobody joins a
 * sync after it may have begun. Each caller's promise settles with its own
 * batch's fsync: resolved once that fsync returned, rejected with its error
 * (every caller of a failed batch sees the failure; the next batch tries
 * again).
 */

type Batch = PromiseWithResolvers<void>;

interface DirState {
  /** Whether an fsync of the directory is in flight. */
  running: boolean;
  /** Callers waiting for the next fsync (not started yet). */
  next: Batch | undefined;
}

export class DirSyncGroups {
  readonly #fsync: (dir: string) => Promise<void>;
  readonly #dirs = new Map<string, DirState>();

  /** `fsync(dir)`: opens, fsyncs and closes the directory. */
  constructor(fsync: (dir: string) => Promise<void>) {
    this.#fsync = fsync;
  }

  /**
   * Resolves once an fsync of `dir` that started after this call has
   * returned: everything the caller had already renamed or made in `dir` is
   * then on stable storage.
   */
  sync(dir: string): Promise<void> {
    let st = this.#dirs.get(dir);
    if (st === undefined) {
      st = { running: false, next: undefined };
      this.#dirs.set(dir, st);
    }
    st.next ??= Promise.withResolvers<void>();
    const mine = st.next.promise;
    if (!st.running) this.#start(dir, st);
    return mine;
  }

  /** Directories with an fsync running or waiting (0 when idle). */
  get pending(): number {
    return this.#dirs.size;
  }

  #start(dir: string, st: DirState): void {
    const b = st.next!;
    // Closed before the fsync starts: later callers wait for the next one.
    st.next = undefined;
    st.running = true;
    let p: Promise<void>;
    try {
      p = this.#fsync(dir);
    } catch (err) {
      p = Promise.reject(err);
    }
    p.then(b.resolve, b.reject).finally(() => {
      st.running = false;
      if (st.next !== undefined) this.#start(dir, st);
      else this.#dirs.delete(dir);
    });
  }
}
