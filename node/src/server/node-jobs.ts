/**
 * The node's long-running jobs as the supervisor knows them
 * (`background/supervisor.ts`): one constructor per job with its name, its
 * description for the admin API and the console, what it needs, how it
 * starts and stops, and the workers it runs now. `start-node.ts` registers
 * them in start-up order (healing's four come from
 * `background/healing.ts`); the supervisor starts each batch in dependency
 * order and stops everything in the reverse order it started, before the
 * object layer closes (nothing writes after its drives and locks are gone).
 */
import { type Job, type JobWorker, workerJob } from '../background/supervisor.ts';
import type { DataMovement } from '../object/movement/data-movement.ts';
import type { ServerPools } from '../object/server-pools.ts';
import type { PeriodicProgress, Worker } from '../util/worker.ts';
import type { IamService } from './iam-service.ts';
import type { NotifyPlane } from './notify-plane.ts';
import type { ReplicationPlane } from './replication-plane.ts';

/** A part of the node whose loops start with `start` and end with its `close()`, reporting its workers. */
function serviceJob(name: string, description: string, start: () => void | Promise<void>, part: { close(): Promise<void>; workers(): readonly JobWorker[] }): Job {
  return { name, description, start, stop: () => part.close(), workers: () => part.workers() };
}

/** Decommission and rebalance: state applied before the node serves (admission fences), then polled. */
export function movementJob(dm: DataMovement): Job {
  return serviceJob('data-movement', 'decommission and rebalance: applies pool.bin and rebalance.bin (then polls them) and runs the drain and rebalance workers this node leads', () => dm.start(), dm);
}

/** Bucket event delivery: one worker per target, and the periodic re-read of admin-set targets. */
export function notifyJob(plane: NotifyPlane): Job {
  return serviceJob('notify', "bucket notifications: delivers each target's queue and re-reads the targets set through the admin API", () => plane.reloader.start(), plane);
}

/** Bucket replication: one worker per remote target, resyncs, the targets' re-read and metrics. */
export function replicationJob(replication: ReplicationPlane): Job {
  return serviceJob('replication', "bucket replication: sends each remote target's queue, runs resyncs, re-reads the targets and publishes their metrics", () => replication.system.start(), replication);
}

/** Every drive's online state and reported problems, every few seconds (started with the layer). */
export function driveProbeJob(layer: ServerPools): Job {
  return workerJob('drive-probe', 'probes every drive: online or not, full or read-only, and the sets that leaves without write quorum', layer.driveProbe);
}

/** Every bucket on every pool; the first pass is start-up's last step, the worker repeats it. */
export function bucketSyncJob(layer: ServerPools): Job {
  return workerJob('bucket-sync', 'every bucket on every pool: repeats the sync pass and repairs changes that missed a pool', layer.bucketSync.worker);
}

/** The identity store's periodic re-read, from the moment it loaded. */
export function iamRefreshJob(iam: IamService): Job {
  return workerJob('iam-refresh', 'identity store: re-reads users, groups, policies and keys another node changed', iam.refresher);
}

/** Used raw capacity of this node's drives, sampled while the metrics listen. */
export function capacityJob(sampler: Worker<PeriodicProgress>): Job {
  return workerJob('capacity-sampling', 'samples the used raw capacity of this node\'s drives for the metrics', sampler);
}
