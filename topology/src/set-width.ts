/**
 * Set width selection (reference on-disk-and-placement §4.1): a width in
 * 2..16 that divides the pool's drive count, symmetric with the first
 * (fastest-varying, i.e. host) range of the pattern; the largest such width
 * gives the fewest, largest sets. SVC_ERASURE_SET_DRIVE_COUNT overrides the
 * choice when it is one of the valid widths.
 */
import { TopologyError } from './errors.ts';

export const MIN_SET_DRIVES = 2;
export const MAX_SET_DRIVES = 16;

/**
 * Valid widths for a pool of `driveCount` drives whose pattern has the given
 * range sizes (in argument order). Empty when none exists.
 */
export function validSetWidths(driveCount: number, rangeSizes: readonly number[]): number[] {
  const out: number[] = [];
  const first = rangeSizes.find((n) => n > 1);
  for (let w = MIN_SET_DRIVES; w <= MAX_SET_DRIVES; w++) {
    if (driveCount % w !== 0) continue;
    // Symmetry: the fastest-varying range (hosts, when the host carries a
    // range) must tile the sets evenly, so every set spans the same hosts.
    if (first !== undefined && !(first % w === 0 || w % first === 0)) continue;
    out.push(w);
  }
  return out;
}

/**
 * Chooses the set width for one pool. `pinned` is SVC_ERASURE_SET_DRIVE_COUNT.
 * Throws `InvalidTopology` with the list of valid widths when none fits or
 * when the pinned value is not one of them.
 */
export function chooseSetWidth(cmdline: string, driveCount: number, rangeSizes: readonly number[], pinned?: number): number {
  const widths = validSetWidths(driveCount, rangeSizes);
  if (widths.length === 0) {
    throw new TopologyError(
      'InvalidTopology',
      `pool "${cmdline}" expands to ${driveCount} drives, which cannot be split evenly into symmetric erasure sets of 2 to 16 drives`,
      { pool: cmdline, driveCount },
    );
  }
  if (pinned !== undefined) {
    if (!widths.includes(pinned)) {
      throw new TopologyError(
        'InvalidTopology',
        `SVC_ERASURE_SET_DRIVE_COUNT=${pinned} is not a valid set width for pool "${cmdline}" (${driveCount} drives); valid widths: ${widths.join(', ')}`,
        { pool: cmdline, driveCount, pinned, valid: widths },
      );
    }
    return pinned;
  }
  return widths[widths.length - 1]!;
}
