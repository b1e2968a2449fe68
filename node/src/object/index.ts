/**
 * The object layer's entry point for the composition root.
 */
import { type ObjectLayerOptions, ServerPools } from './server-pools.ts';

export { type ListQuorum, parseListQuorum } from './list-merge.ts';
export { type MrfEntry, MrfQueue } from './mrf.ts';
export { LocalNamespaceLocker, type NamespaceLocker } from './ns-lock.ts';
export { putDataFromBuffer, putDataFromStream } from './put-data.ts';
export { resolveRange } from './range.ts';
export { ServerPools } from './server-pools.ts';
export type * from './types.ts';
export { BUCKET_CONFIG_KINDS } from './types.ts';

/** Options of `createObjectLayer` (see `ObjectLayerOptions` for each field). */
export type CreateObjectLayerOptions = ObjectLayerOptions;

/**
 * Builds the object layer over formatted drives (called after format quorum).
 * The drives' `.svc.sys` areas must exist (`LocalDrive.init()` on local drives).
 */
export async function createObjectLayer(opts: CreateObjectLayerOptions): Promise<ServerPools> {
  const layer = new ServerPools(opts);
  // Every drive reports its format identity once before the layer serves:
  // a replaced (empty) drive is out of its set from the first request.
  await layer.probeDrives();
  // Then every few seconds (a node registers the loop with its supervisor as `drive-probe`).
  layer.driveProbe.start();
  return layer;
}
