/**
 * Where a moved object goes. A key that already has versions on an
 * eligible pool joins them there (its versions stay together); otherwise a
 * pool is drawn at random weighted by free space among the eligible pools
 * with room for it (MinIO's placement rule), from a capacity snapshot
 * refreshed every few seconds and debited as objects are placed, so a
 * drain spreads over the remaining pools instead of filling the emptiest
 * one first.
 */
import type { Clock } from '../../util/clock.ts';
import { SvcError } from '../../util/errors.ts';
import type { MoveTargetChooser } from '../../object/object-move.ts';
import type { Pool } from '../../object/pools.ts';
import type { PoolCapacity } from '../../object/types.ts';

export interface TargetChooserOptions {
  capacity(): Promise<PoolCapacity[]>;
  clock: Clock;
  /** Pools that may receive moved objects (the source is never one). */
  eligible(pool: Pool): boolean;
  /** Uniform [0, 1) (tests may fix it). */
  random?: () => number;
  /** Age after which the capacity snapshot is measured again (default 3 s). */
  refreshMs?: number;
}

export class TargetChooser {
  readonly #o: TargetChooserOptions;
  #free: number[] | undefined;
  #at = 0;

  constructor(o: TargetChooserOptions) {
    this.#o = o;
  }

  async #snapshot(): Promise<number[]> {
    const now = this.#o.clock.now();
    if (this.#free === undefined || now - this.#at >= (this.#o.refreshMs ?? 3_000)) {
      this.#free = (await this.#o.capacity()).map((c) => c.usableFree);
      this.#at = now;
    }
    return this.#free;
  }

  readonly choose: MoveTargetChooser = async ({ size, found, source }) => {
    const candidates = found.filter((f) => f.pool !== source && this.#o.eligible(f.pool));
    if (candidates.length === 0) throw new SvcError('XSvcStorageFull', `no pool can receive objects moved off pool ${source.index}: every other pool is closed to new objects`);
    const holder = candidates.find((f) => f.res.kind === 'found' || f.metas.some((m) => m.ok && m.versions.length > 0));
    if (holder) return holder.pool;
    const free = await this.#snapshot();
    const fits = candidates.map((f) => f.pool).filter((p) => (free[p.index] ?? 0) >= size);
    if (fits.length === 0) {
      throw new SvcError('XSvcStorageFull', `no pool has ${size} bytes free for an object moved off pool ${source.index}`, { size, pool: source.index });
    }
    const total = fits.reduce((a, p) => a + (free[p.index] ?? 0), 0);
    let r = (this.#o.random ?? Math.random)() * total;
    let pick = fits[fits.length - 1]!;
    for (const p of fits) {
      r -= free[p.index] ?? 0;
      if (r < 0) {
        pick = p;
        break;
      }
    }
    free[pick.index] = Math.max(0, (free[pick.index] ?? 0) - size);
    return pick;
  };
}
