/**
 * The object layer's entry point for the composition root.
 */
import type { Drive } from '../storage/drive.ts';
import type { Clock } from '../util/clock.ts';
import type { Logger } from '../util/logger.ts';
import type { CommitHooks } from './erasure-set.ts';
import type { ListQuorum } from './list-merge.ts';
import type { MrfQueue } from './mrf.ts';
import type { NamespaceLocker } from './ns-lock.ts';
import { ServerPools } from './server-pools.ts';

export type { CommitHooks, CommitStep } from './erasure-set.ts';
export { type ListQuorum, parseListQuorum } from './list-merge.ts';
export { type MrfEntry, MrfQueue } from './mrf.ts';
export { LocalNamespaceLocker, type NamespaceLocker } from './ns-lock.ts';
export { putDataFromBuffer, putDataFromStream } from './put-data.ts';
export { resolveRange } from './range.ts';
export { ServerPools } from './server-pools.ts';
export type * from './types.ts';

export interface CreateObjectLayerOptions {
  deploymentId: string;
  pools: { cmdline: string; sets: Drive[][]; standardParity: number; rrsParity: number }[];
  inlineBlock?: number;
  listQuorum?: ListQuorum;
  logger: Logger;
  clock: Clock;
  locker?: NamespaceLocker;
  /** Read-repair queue shared with the heal worker (created when absent; see `ServerPools.mrf`). */
  mrf?: MrfQueue;
  /** Test-only crash points of the commit. */
  commitHooks?: CommitHooks;
  /** Called after this node changed or removed a bucket's metadata (cluster cache invalidation). */
  onBucketMetaChanged?: (bucket: string) => void;
}

/**
 * Builds the object layer over formatted drives (called after format quorum).
 * The drives' `.svc.sys` areas must exist (`LocalDrive.init()` on local drives).
 */
export async function createObjectLayer(opts: CreateObjectLayerOptions): Promise<ServerPools> {
  return new ServerPools(opts);
}
