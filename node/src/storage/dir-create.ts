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
 * A hold narrows as soon as the publish knows which directories it made
 * (`keepOnly`): the ones it found existing are let go then, so a publish
 * into an existing prefix waits for overlapping publishes only until their
 * mkdir step (or native job) returned, and for their fsyncs only where they
 * made a directory on its path. A lone writer waits for nothing.
 */
import * as fsp from 'node:fs/promises';
import { dirname } from 'node:path';

export interface DirHold {
  /** The directories held (deepest first). */
  readonly dirs: readonly string[];
  /**
   * Keeps holding only the `levels` deepest directories (the ones this
   * publish made, now known) and lets the others go: whoever waits on a
   * directory this publish found existing waits no longer for it.
   */
  keepOnly(levels: number): void;
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
  /** Each directory some publish in flight holds, with one promise per hold on it. */
  readonly #held = new Map<string, Set<Promise<void>>>();
  /** Each hold's own promises (to tell them from others' in `settled`). */
  readonly #own = new WeakMap<DirHold, ReadonlySet<Promise<void>>>();

  /** Holds `dir` and its ancestors below `floor` until `release()` (or `keepOnly`). */
  hold(dir: string, floor: string): DirHold {
    const dirs = pathBelow(dir, floor);
    const entries = new Map<string, PromiseWithResolvers<void>>();
    for (const d of dirs) {
      const e = Promise.withResolvers<void>();
      entries.set(d, e);
      let s = this.#held.get(d);
      if (s === undefined) this.#held.set(d, (s = new Set()));
      s.add(e.promise);
    }
    const letGo = (d: string) => {
      const e = entries.get(d);
      if (e === undefined) return;
      entries.delete(d);
      const s = this.#held.get(d)!;
      s.delete(e.promise);
      if (s.size === 0) this.#held.delete(d);
      e.resolve();
    };
    const hold: DirHold = {
      dirs,
      keepOnly: (levels) => {
        for (const d of dirs.slice(Math.max(0, levels))) letGo(d);
      },
      release: () => {
        for (const d of dirs) letGo(d);
      },
    };
    this.#own.set(hold, new Set([...entries.values()].map((e) => e.promise)));
    return hold;
  }

  /**
   * Resolves once every other hold on `own`'s directories, taken before this
   * call, has let go of them: each directory on the path that another
   * publish made is then durable.
   */
  async settled(own: DirHold): Promise<void> {
    const mine = this.#own.get(own);
    const waits = new Set<Promise<void>>();
    for (const d of own.dirs) for (const p of this.#held.get(d) ?? []) if (mine?.has(p) !== true) waits.add(p);
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
