/**
 * New directories of one drive and when their entries are durable.
 *
 * A publish into `vol/a/b/c/key/` that has to make `a`, `b`, `c` and `key`
 * is durable only once each new directory's entry is: the parent of every
 * directory it made is fsync'd, up to the first directory that already
 * existed. That first existing directory must itself be durable, and it may
 * not be: another publish in flight may have made it a moment ago and not
 * fsync'd its parent yet (its mkdir won; ours found the directory there, by
 * EEXIST or by a mkdir below it that succeeded). Acknowledging then could
 * lose the object with that directory at a crash, after the client was told
 * it was stored.
 *
 * So every publish *holds* the directories of its destination's path (from
 * its own directory up to, not including, the volume) from before it makes
 * any of them until its own directory fsyncs have returned, and after those
 * it waits for every other hold on those directories that was taken before
 * it looked (`settled`). A hold is released on the holder's own fsyncs
 * alone, never on another hold, so waits cannot form a circle. Whoever made
 * a directory on our path held it before making it, so when our publish has
 * seen the directory exist and then waits for the holds on it, the maker's
 * hold is among them; a directory made by a publish that completed is
 * durable already. Together: every directory on the path was made by this
 * publish (and synced by it), by a publish whose syncs we waited for, or
 * long ago (durable).
 *
 * The cost: concurrent publishes that share a directory (keys in one
 * prefix) wait for each other's own syncs (not for each other's waits), so a
 * commit takes as long as the slowest overlapping one; a lone writer waits
 * for nothing.
 */
import * as fsp from 'node:fs/promises';
import { dirname } from 'node:path';

export interface DirHold {
  /** The directories held (deepest first). */
  readonly dirs: readonly string[];
  /** Settles when released. */
  readonly done: Promise<void>;
  /** Ends the hold (idempotent): this publish's own directory fsyncs have returned or it failed. */
  release(): void;
}

function errno(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | undefined)?.code;
}

/** `dir` and its ancestors strictly below `floor`, deepest first (empty when `dir` is not below `floor`). */
export function pathBelow(dir: string, floor: string): string[] {
  const out: string[] = [];
  let d = dir;
  while (d.length > floor.length && d.startsWith(floor) && d[floor.length] === '/') {
    out.push(d);
    d = dirname(d);
  }
  return out;
}

export class NewDirs {
  /** Each directory some publish in flight holds, with the holds' promises. */
  readonly #held = new Map<string, Set<Promise<void>>>();

  /** Holds `dir` and its ancestors below `floor` until `release()`. */
  hold(dir: string, floor: string): DirHold {
    const dirs = pathBelow(dir, floor);
    const { promise, resolve } = Promise.withResolvers<void>();
    for (const d of dirs) {
      let s = this.#held.get(d);
      if (s === undefined) this.#held.set(d, (s = new Set()));
      s.add(promise);
    }
    let released = false;
    return {
      dirs,
      done: promise,
      release: () => {
        if (released) return;
        released = true;
        for (const d of dirs) {
          const s = this.#held.get(d)!;
          s.delete(promise);
          if (s.size === 0) this.#held.delete(d);
        }
        resolve();
      },
    };
  }

  /**
   * Resolves once every other hold on `own`'s directories, taken before this
   * call, is released: each directory on the path that another publish made
   * is then durable.
   */
  async settled(own: DirHold): Promise<void> {
    const waits = new Set<Promise<void>>();
    for (const d of own.dirs) for (const p of this.#held.get(d) ?? []) if (p !== own.done) waits.add(p);
    if (waits.size > 0) await Promise.all(waits);
  }

  /** Directories held now (0 when idle). */
  get pending(): number {
    return this.#held.size;
  }
}

/**
 * `mkdir -p dir`, never creating `floor` or anything above it (a missing
 * volume stays missing: ENOENT). Walks up from `dir` to the first directory
 * that exists, then makes the missing ones downwards. Returns how many
 * levels up from `dir` reach the highest directory this call made (0: it
 * made none; 1: `dir` alone; ...): each of them needs its parent fsync'd. A
 * level another publish made meanwhile (EEXIST) is that maker's to sync
 * (see `NewDirs`).
 */
export async function makeDirsBelow(dir: string, floor: string): Promise<number> {
  const path = pathBelow(dir, floor);
  if (dir === floor) return 0;
  if (path.length === 0) {
    const err: NodeJS.ErrnoException = new Error(`ENOENT: ${dir} is not below ${floor}`);
    err.code = 'ENOENT';
    throw err;
  }
  let made = 0;
  let i = 0;
  const mk = async (k: number) => {
    await fsp.mkdir(path[k]!);
    made = Math.max(made, k + 1);
  };
  // Upwards until a mkdir succeeds or finds the directory there.
  for (; i < path.length; i++) {
    try {
      await mk(i);
      break;
    } catch (err) {
      if (errno(err) === 'EEXIST') break;
      if (errno(err) !== 'ENOENT' || i === path.length - 1) throw err;
    }
  }
  // Then downwards: every level below the one made or found.
  for (let j = i - 1; j >= 0; j--) {
    try {
      await mk(j);
    } catch (err) {
      if (errno(err) !== 'EEXIST') throw err;
    }
  }
  return made;
}
