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
import type { AuditLog } from '../api/audit-log.ts';
import type { ClusterWorkers } from '../cluster/cluster-node.ts';
import type { DataMovement } from '../background/movement/data-movement.ts';
import type { ServerPools } from '../object/server-pools.ts';
import type { CertificateStore } from '../tls/cert-store.ts';
import type { RootCredentialSource } from '../util/root-credential.ts';
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

/** LDAP users' access keys re-checked against the directory (a user gone: its keys disabled), from the moment the store loaded. */
export function ldapKeyRecheckJob(worker: Worker<PeriodicProgress>): Job {
  return workerJob('ldap-key-recheck', "LDAP users' access keys: looks their users up again; a user gone has its keys disabled (never removed), groups are refreshed", worker);
}

/** Used raw capacity of this node's drives, sampled while the metrics listen. */
export function capacityJob(sampler: Worker<PeriodicProgress>): Job {
  return workerJob('capacity-sampling', 'samples the used raw capacity of this node\'s drives for the metrics', sampler);
}

/**
 * What runs from the node's first moment, its loops begun with it (the
 * root credential's key files, the certificate directory, the audit log):
 * registered first, so they stop after every other job.
 */
export function plumbingJobs(o: { rootCredential: RootCredentialSource; tls: CertificateStore | undefined; audit: AuditLog }): Job[] {
  const out: Job[] = [];
  const reloader = o.rootCredential.reloader;
  if (reloader !== undefined) out.push(workerJob('root-credential-reload', 'root credential: re-reads its key files (rotation without a restart)', reloader));
  const tls = o.tls;
  if (tls !== undefined) {
    out.push({ name: 'tls-reload', description: 'certificates: re-reads the certificate directory (besides its file watch) and warns of expiry', start: () => undefined, stop: async () => tls.close(), workers: () => tls.workers() });
  }
  out.push({ name: 'audit-log', description: "audit log: queues each request's record for its webhooks and delivers them", start: () => undefined, stop: () => o.audit.close(), workers: () => o.audit.workers() });
  return out;
}

/**
 * The cluster plumbing's loops that run from the node's first moment: the
 * lock table's sweep and, with other nodes, the peers' heartbeat. Their
 * connections and locks close with `cluster.close()`, after every job.
 */
export function clusterJobs(w: ClusterWorkers): Job[] {
  const out: Job[] = [workerJob('lock-sweep', "locks: drops this node's lock grants that expired or whose holder's node is gone", w.lockSweep)];
  if (w.heartbeat !== undefined) out.push(workerJob('peer-heartbeat', 'peers: pings every online peer so a node that died without traffic is counted out within seconds', w.heartbeat));
  return out;
}

/** Lock quorum and peer health for readiness, every second; started once start-up created the lock clients. */
export function clusterHealthJob(w: ClusterWorkers): Job | undefined {
  return w.healthWatch === undefined ? undefined : workerJob('cluster-health', 'readiness: keeps lock quorum and peer health (a majority of nodes reachable) current', w.healthWatch);
}
