/**
 * The whole storage node, composed: cluster plumbing (internode RPC, peers,
 * distributed locks, format IO over local and remote drives) →
 * `startServer` (start-up order, readiness, listeners) → once format quorum
 * is reached, the object layer over local + remote drives and the S3 handler.
 * The admin plane (`admin-plane.ts`) is installed from the first request.
 *
 * A single-node deployment goes through the same path: every endpoint is
 * local, the RPC routes still answer (authenticated) and the lock quorum is
 * this node alone.
 */
import { readFile } from 'node:fs/promises';
import { createS3Handler } from '../api/s3/index.ts';
import { createStsHandler } from '../api/sts/index.ts';
import { verifyLdapUser, verifyWebIdentity } from '../api/sts/providers.ts';
import { createClusterNode } from '../cluster/cluster-node.ts';
import { movementPeerService } from '../cluster/movement-peer.ts';
import { RPC_TOKEN_VALIDITY_MS } from '../cluster/rpc-auth.ts';
import { hashService } from '../erasure/hash-service.ts';
import { CertificateStore } from '../tls/cert-store.ts';
import { codecFallbackReason, codecKernel } from '../erasure/index.ts';
import { createObjectLayer } from '../object/index.ts';
import type { DataMovement } from '../background/movement/data-movement.ts';
import { BucketQuotas } from '../object/quota.ts';
import type { ServerPools } from '../object/server-pools.ts';
import type { Clock } from '../util/clock.ts';
import type { Config } from '../util/config.ts';
import type { SvcError } from '../util/errors.ts';
import type { Logger } from '../util/logger.ts';
import { rootCredentialSource } from '../util/root-credential.ts';
import { type AdminWorkers, createAdminPlane } from './admin-plane.ts';
import { Supervisor } from '../background/supervisor.ts';
import { capacitySampler } from './capacity.ts';
import { MetricsHistory } from '../telemetry/history.ts';
import { recordHistory } from '../telemetry/history-recorder.ts';
import { createNodeDataMovement } from './data-movement.ts';
import { startNodeHealing } from './healing-plane.ts';
import { loadIamState } from './iam-bootstrap.ts';
import { IAM_NOTIFY_TIMEOUT_MS, IAM_RELOAD_METHOD, iamPeerService, IamService } from './iam-service.ts';
import { createKms, kmsWatchJob } from './kms.ts';
import { NOTIFY_RELOAD_METHOD, NotifyPlane, startAuditLog } from './notify-plane.ts';
import { bucketSyncJob, capacityJob, driveProbeJob, plumbingJobs, iamRefreshJob, movementJob, notifyJob, replicationJob } from './node-jobs.ts';
import { ReplicationPlane } from './replication-plane.ts';
import { type RunningServer, startServer } from './start-server.ts';

export interface StartNodeDeps {
  readonly logger: Logger;
  readonly clock: Clock;
  readonly version?: string;
  /** A background retry hit a permanent error (the node should exit). */
  readonly onFatal?: (err: SvcError) => void;
}

export interface RunningNode {
  readonly server: RunningServer;
  /** The object layer once format quorum was reached. */
  objectLayer(): ServerPools | undefined;
  /** Graceful stop: listeners and services, then the cluster plumbing. */
  close(graceMs?: number): Promise<void>;
}

export async function startNode(config: Config, deps: StartNodeDeps): Promise<RunningNode> {
  const { logger: log, clock } = deps;
  const fallback = codecFallbackReason();
  log.info({ event: 'startup_codec', kernel: codecKernel(), fallback }, `erasure codec kernel: ${codecKernel()}`);
  hashService.configure(config.hashMode);
  const hashing = hashService.describe();
  log.info(
    { event: 'startup_upload_hashing', ...hashing },
    `upload hashing: multi-buffer ${hashing.mode} (${hashing.kernel}); large uploads ${
      hashing.largeUploadsInService
        ? `hashed on pool threads, MD5 of concurrent ones in the SIMD lanes, SHA-256 ${hashing.sha256InLanes ? 'too' : `alone (${hashing.single.sha256})`}`
        : 'hashed by node:crypto on the event loop'
    }`,
  );
  if (fallback !== null) log.warn({ event: 'codec_native_unavailable', reason: fallback }, 'native erasure codec unavailable; the TypeScript kernel is much slower');

  // Every long-running job of this node, registered as its part comes up; the admin API lists them.
  const jobs = new Supervisor({ logger: log });
  // The key store first: a malformed SVC_KMS_SECRET_KEY stops start-up before any disk is touched.
  const kms = createKms(config.kms, clock);
  // The certificate directory next: an unusable certificate stops start-up before any disk is touched.
  const tls = config.certsDir === undefined ? undefined : await CertificateStore.open({ dir: config.certsDir.path, explicit: config.certsDir.explicit, clock, logger: log });
  // The root credential follows its key files while the node runs (rotation without a restart).
  const rootCredential = rootCredentialSource(config.credentials, { clock, logger: log, readFile: (p) => readFile(p, 'utf8') });
  const cluster = await createClusterNode({ config, clock, logger: log, rootCredential, ...(tls?.serving === true ? { tls: tls.trust } : {}) }).catch((err: unknown) => {
    rootCredential.close();
    tls?.close();
    throw err;
  });
  // The identity store: the root credential alone until it loads (readiness stage `iam`).
  const iam = new IamService({
    root: () => rootCredential.current(),
    clock,
    logger: log,
    ...(kms ? { kms } : {}),
    notifyPeers: async (generation) =>
      (await cluster.peers.broadcast(IAM_RELOAD_METHOD, { generation }, IAM_NOTIFY_TIMEOUT_MS)).map((r) => (r.error === undefined ? { peer: r.peer } : { peer: r.peer, error: r.error.message })),
  });
  let layer: ServerPools | undefined;
  let server: RunningServer | undefined;
  let deploymentId: string | undefined;
  let movement: DataMovement | undefined;
  let notifyPlane: NotifyPlane | undefined;
  // Filled in once the object layer is up (the admin plane reads them on every request).
  const workers: AdminWorkers = {};
  // The audit log wraps the S3 and admin handlers (every request is recorded when its response is done).
  const audit = await startAuditLog({ config, drives: [...cluster.localDrives.keys()], trust: tls?.trust, deploymentId: () => deploymentId ?? '', clock, logger: log });
  // What runs from the start (their loops began with them): stopped after every later job.
  for (const job of plumbingJobs({ rootCredential, tls, audit })) jobs.register(job);
  await jobs.start();
  const admin = createAdminPlane({
    config,
    cluster,
    clock,
    logger: log,
    version: deps.version ?? 'dev',
    readiness: () => server?.readiness.report('ready'),
    deploymentId: () => deploymentId ?? server?.deploymentId(),
    workers,
    jobs: () => jobs.list(),
    rootCredential,
    iam,
  });
  cluster.registerPeerService(admin.peerService);
  cluster.registerPeerService(iamPeerService(iam));
  cluster.registerPeerService({
    [NOTIFY_RELOAD_METHOD]: {
      kind: 'unary',
      handle: async () => {
        await notifyPlane?.reload();
        return {};
      },
    },
  });
  cluster.registerPeerService(movementPeerService(() => (movement === undefined ? undefined : (n) => movement!.notice(n))));
  try {
    server = await startServer(config, {
      logger: log,
      clock,
      ...(deps.version !== undefined ? { version: deps.version } : {}),
      ...(deps.onFatal !== undefined ? { onFatal: deps.onFatal } : {}),
      ...cluster.serverDeps,
      tls,
      handlers: { ...cluster.serverDeps.handlers, admin: audit.wrap(admin.handler) },
      buildServices: async (ctx) => {
        deploymentId = ctx.deploymentId;
        await cluster.initLocalDrives();
        if (kms) {
          // The key store loads before the layer is built (readiness `kms`), then is watched.
          jobs.register(kmsWatchJob(kms, ctx.readiness, clock, log));
          await jobs.start();
        }
        const built = await createObjectLayer({
          deploymentId: ctx.deploymentId,
          pools: cluster.poolSpecs(ctx.formats),
          listQuorum: config.listObjectsQuorum,
          ...(config.storageClass.inlineBlock !== undefined ? { inlineBlock: config.storageClass.inlineBlock } : {}),
          locker: cluster.namespaceLocker,
          onBucketMetaChanged: (bucket) => void cluster.notifyBucketMetaChanged(bucket),
          ...(kms ? { kms } : {}),
          // Nodes' clocks may differ by up to the internode token window: a
          // retention holds that much longer in a cluster (object-lock.ts).
          lockGraceMs: ctx.local.flat().every(Boolean) ? 0 : RPC_TOKEN_VALIDITY_MS,
          logger: log,
          clock,
        });
        cluster.onBucketMetaChanged((bucket) => built.forgetBucket(bucket));
        layer = built;
        jobs.register(driveProbeJob(built));
        admin.attach(built);
        // Decommission and rebalance state applies before the node serves (admission fences).
        const dm = createNodeDataMovement({ config, cluster, layer: built, clock, logger: log });
        jobs.register(movementJob(dm));
        movement = dm;
        workers.decommission = dm.decommission;
        workers.rebalance = dm.rebalance;
        startNodeHealing({ cluster, layer: built, config, clock, logger: log, workers, jobs });
        // Bucket notifications: targets and their queues, then the layer's post-commit hook.
        const plane = await NotifyPlane.start({
          config,
          layer: built,
          drives: [...cluster.localDrives.keys()],
          trust: tls?.trust,
          ownerId: () => rootCredential.current().accessKey,
          notifyPeers: async () => {
            for (const r of await cluster.peers.broadcast(NOTIFY_RELOAD_METHOD, {}, IAM_NOTIFY_TIMEOUT_MS)) {
              if (r.error) log.warn({ event: 'notify_peer_reload_failed', peer: r.peer, err: r.error.message }, 'a peer was not told of a notification target change (it re-reads within 30 s)');
            }
          },
          clock,
          logger: log,
        });
        notifyPlane = plane;
        workers.notify = plane;
        jobs.register(notifyJob(plane));
        // Bucket replication: targets and their queues, then the layer's post-commit hook (asked before the events').
        const replication = await ReplicationPlane.start({ layer: built, drives: [...cluster.localDrives.keys()], trust: tls?.trust, selfId: cluster.selfId, clock, logger: log });
        workers.replication = replication;
        jobs.register(replicationJob(replication));
        const notify = plane.system;
        // Bucket quotas: one counter per node, shared by the S3 handler (admission) and the admin API (get-bucket-quota).
        const quotas = new BucketQuotas({ config: (b) => built.getBucketConfig(b, 'quota'), usage: () => workers.usage?.() ?? Promise.resolve(undefined), clock });
        workers.quotas = quotas;
        const s3 = createS3Handler({
          objectLayer: built,
          credentials: (accessKey, token) => iam.lookup(accessKey, token),
          ownerId: () => rootCredential.current().accessKey,
          knownUser: (id) => (iam.loaded && iam.doc().users[id] !== undefined ? id : undefined),
          region: config.region,
          anyRegion: config.acceptAnyRegion,
          quotas,
          domains: [...config.domains],
          ...(config.consoleEnable ? { consolePort: config.consoleAddress.port } : {}),
          notify,
          logger: log,
          clock,
        });
        // Every bucket on every pool: the first pass is start-up's last step
        // (a joining pool gets every bucket before the node reports ready);
        // the worker repeats it and repairs changes that missed a pool.
        jobs.register(bucketSyncJob(built));
        // Started in dependency order; stopped in reverse by close() below, before the layer closes.
        await jobs.start();
        // IAM lives in `.svc.sys` records (read and written on every pool).
        const iamStore = {
          readConfig: (path: string) => built.sysRecords.read(path),
          writeConfig: async (path: string, data: Uint8Array) => void (await built.sysRecords.write(path, data)),
        };
        return {
          handlers: {
            s3: audit.wrap(s3),
            sts: createStsHandler({
              credentials: (accessKey, token) => iam.lookup(accessKey, token),
              sessionKey: () => (iam.loaded ? iam.index().stsKey : undefined),
              region: config.region,
              clock,
              logger: log,
              webIdentity: () => {
                const cfg = iam.loaded ? iam.doc().idp.openid : undefined;
                return cfg && ((token: string) => verifyWebIdentity(cfg, token, clock.now()));
              },
              ldap: () => {
                const doc = iam.loaded ? iam.doc() : undefined;
                const cfg = doc?.idp.ldap;
                return cfg && ((user: string, password: string) => verifyLdapUser(cfg, iam.open(cfg.lookupBindPassword), doc!.ldapPolicies, user, password));
              },
            }),
          },
          loadIam: async () => {
            await loadIamState(iamStore);
            const loaded = await iam.load({ read: (p) => built.sysRecords.read(p), update: (p, fn) => built.sysRecords.update(p, fn) });
            // The periodic re-read runs once the store loaded (a retried load registers it once).
            if (!jobs.list().some((j) => j.name === 'iam-refresh')) jobs.register(iamRefreshJob(iam));
            await jobs.start();
            return loaded;
          },
          close: async () => {
            // Every job in the reverse order it started (a running root heal is persisted), then the layer.
            await jobs.stop();
            await built.close();
          },
          finalize: () => built.bucketSync.attempt(),
          writeBlocked: () => built.writeBlockedSets().length > 0,
          storageNote: () => {
            // Drives that are online but damaged, full or read-only show in the readiness detail too.
            const drives = built.driveIssues().map((d) => `${d.endpoint}: ${d.issues.map((i) => `${i.kind} (${i.detail})`).join(', ')}`);
            const blocked = built.writeBlockedSets().map((b) => `pool ${b.pool} set ${b.set}: ${b.why}`);
            const parts = [built.bucketSync.note(), ...blocked, ...drives].filter((x): x is string => x !== undefined && x !== '');
            return parts.length > 0 ? parts.join('; ') : undefined;
          },
        };
      },
    });
  } catch (err) {
    await jobs.stop();
    await cluster.close();
    throw err;
  }
  cluster.attachReadiness(server.readiness);
  const running = server;
  // A peer going away or coming back changes which drives answer: storage readiness follows at once.
  for (const p of cluster.peers.peers.values()) p.onStateChange(() => running.recheckStorage());
  // the history subscribes first: the capacity sampler samples only while someone listens
  workers.history = new MetricsHistory(clock);
  const stopHistory = recordHistory(workers.history);
  jobs.register(capacityJob(capacitySampler(() => cluster.localDrives.values(), { clock, logger: log })));
  await jobs.start();
  return {
    server: running,
    objectLayer: () => layer,
    close: async (graceMs) => {
      stopHistory();
      await running.close(graceMs);
      // Every job not stopped with the services (all of them when no object layer came up):
      // the root credential and certificate reloads and the audit log last.
      await jobs.stop();
      await cluster.close();
    },
  };
}
