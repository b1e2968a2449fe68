/**
 * What the data-movement workers (decommission, rebalance) share: the part
 * of the object layer they use, the records, time, logs, and the way to
 * reach the other nodes. Types and small helpers only.
 */
import type { Clock } from '../../util/clock.ts';
import { SvcError } from '../../util/errors.ts';
import type { Logger } from '../../util/logger.ts';
import type { PoolRecords } from '../../object/records/store.ts';
import type { MovementSupport } from '../../object/server-pools.ts';
import type { BucketInfo, PoolCapacity } from '../../object/types.ts';
import type { AdmissionTarget } from './admission.ts';

/** The object layer as the workers see it (`ServerPools` implements it). */
export interface MovementLayer extends AdmissionTarget {
  readonly movement: MovementSupport;
  listBuckets(): Promise<BucketInfo[]>;
  capacity(): Promise<PoolCapacity[]>;
}

/**
 * A notice to the other nodes (peer RPC `movementNotice`): the records
 * changed, apply them now (admission, which decommission runs where), or
 * start / stop this node's part of a rebalance. A node acknowledges once it
 * applied the notice.
 */
export type MovementNotice = { kind: 'state' } | { kind: 'rebalance-start'; id: string } | { kind: 'rebalance-stop'; id: string };

/** The other nodes of the cluster (none on a single node). */
export interface MovementPeers {
  /** Sends `notice` to every other node at once; one result per node (never throws). */
  broadcast(notice: MovementNotice, timeoutMs: number): Promise<{ peer: string; error?: string }[]>;
}

export const NO_PEERS: MovementPeers = { broadcast: async () => [] };

export interface MovementContext {
  readonly layer: MovementLayer;
  readonly records: PoolRecords;
  readonly clock: Clock;
  readonly logger: Logger;
  /** This node's `host:port` (or `local`), for messages. */
  readonly selfId: string;
}

export function errorMessage(err: unknown): string {
  if (err instanceof SvcError) return `${err.code}: ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}

/** True for a move refused because the source holds versions no quorum decides. */
export function isUnresolved(err: unknown): boolean {
  return err instanceof SvcError && err.details?.['unresolved'] === true;
}

/** Follow-up work started when a worker ends (supervision, notices): tracked so a shutdown waits for it. */
export class BackgroundTasks {
  readonly #pending = new Set<Promise<void>>();

  /** Runs `fn` in the background; a failure is handed to `onError`. */
  run(fn: () => Promise<void>, onError: (err: unknown) => void): void {
    const p: Promise<void> = fn()
      .catch(onError)
      .finally(() => this.#pending.delete(p));
    this.#pending.add(p);
  }

  /** Resolves once nothing runs (including what started meanwhile). */
  async idle(): Promise<void> {
    while (this.#pending.size > 0) await Promise.all([...this.#pending]);
  }
}
