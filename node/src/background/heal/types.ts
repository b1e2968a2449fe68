/**
 * The heal engine's results: one per object, bucket or metadata record,
 * with the state of every drive before and after (madmin's
 * `HealResultItem` is built from it by the admin sequence).
 */
import type { DriveState } from './plan.ts';

export type HealItemType = 'object' | 'bucket' | 'metadata' | 'bucket-metadata';

/**
 * - `ok`: nothing to do; `healed`: something was rebuilt or rewritten;
 * - `would-heal`: a dry run found work (nothing changed);
 * - `refused`: cannot be healed now (too few shards, zero parity, geometry,
 *   drives offline that could decide the vote) and nothing was changed;
 * - `dangling`: below read quorum on every version, reported (removed only
 *   with `remove`); `removed`: dangling and removed;
 * - `absent`: no drive holds it; `failed`: the heal itself hit an error.
 */
export type HealOutcome = 'ok' | 'healed' | 'would-heal' | 'refused' | 'dangling' | 'removed' | 'absent' | 'failed';

export interface HealDrive {
  /** The slot's drive id (format.json), '' when unknown. */
  uuid: string;
  endpoint: string;
  state: DriveState;
}

export interface HealResult {
  type: HealItemType;
  bucket: string;
  object: string;
  /** The newest authoritative version ('' for buckets and dangling objects). */
  versionId: string;
  pool: number;
  set: number;
  dataBlocks: number;
  parityBlocks: number;
  /** Drives of the set (of every set for a bucket). */
  diskCount: number;
  setCount: number;
  objectSize: number;
  before: HealDrive[];
  after: HealDrive[];
  outcome: HealOutcome;
  /** What happened, for people (the refusal or error message when refused or failed). */
  detail: string;
  /** Shards (or metadata copies) written. */
  shardsHealed: number;
  /** Shard bytes written (framed). */
  bytesHealed: number;
}

export interface HealObjectOptions {
  /** Report only; change nothing. */
  dryRun: boolean;
  /** Remove dangling versions (below quorum for good: writes that never reached quorum, deletes a drive missed). */
  remove: boolean;
  /**
   * Also remove versions whose metadata holds quorum but whose data is lost
   * (fewer than K good shards anywhere): only an operator's explicit
   * `remove=true` heal does; background heal never removes a version that
   * was once complete.
   */
  removeLost?: boolean;
  /** Verify every bitrot frame of every shard (scan mode deep) instead of sizes. */
  deep: boolean;
}
