/**
 * The whole storage node, composed as a sequence of phases, each
 * constructing values and passing them forward (docs/architecture.md,
 * "Start-up phases"):
 *
 *   1. plumbing: key store, certificates, root credential, readiness, the
 *      supervisor and the jobs that run from the first moment;
 *   2. cluster: local drives opened and served over RPC, peers, the lock
 *      table (`createClusterNode`); its heartbeat and lock sweep start;
 *   3. identity and admin: the identity store (root credential alone until
 *      it loads), the audit log, the admin plane and the peer methods;
 *   4. `startServer`: layout, local disks, lock clients, format quorum,
 *      listeners; once format quorum is reached it runs
 *   5. the object phase (`buildObjectPhase`): the object layer and what
 *      runs over it, its jobs registered and started, and
 *   6. background: the cluster health watch and capacity sampling.
 *
 * The one fact that does not fit a straight line: the listener must answer
 * (internode RPC for peers' format quorum, probes, admin) before the object
 * layer exists. So the object phase's result is one value created up front
 * (`objects`, an `Eventual`), settled exactly once by phase 5; the
 * dispatcher, the admin plane, the peer methods and the cluster's bucket
 * metadata signal were built with it and answer "not ready" (503) until it
 * settles. Nothing is attached or set after construction.
 *
 * A single-node deployment goes through the same path: every endpoint is
 * local, the RPC routes still answer (authenticated) and the lock quorum is
 * this node alone.
 */
import { readFile } from 'node:fs/promises';
import { createS3Handler } from '../api/s3/index.ts';
import { createStsHandler } from '../api/sts/index.ts';
import { checkLdapServer, checkOpenIdProvider, lookupLdapUser, verifyLdapUser, verifyWebIdentity } from '../api/sts/providers.ts';
import { staticTrust, trustedFetch } from '../tls/trust.ts';
import { createClusterNode } from '../cluster/cluster-node.ts';
import { movementPeerService } from '../cluster/movement-peer.ts';
import { RPC_TOKEN_VALIDITY_MS } from '../cluster/rpc-auth.ts';
import { hashService } from '../erasure/hash-service.ts';
import { CertificateStore } from '../tls/cert-store.ts';
import { codecFallbackReason, codecKernel } from '../erasure/index.ts';
import { createObjectLayer } from '../object/index.ts';
import type { DataMovement } from '../background/movement/data-movement.ts';
import type { ClusterNode } from '../cluster/cluster-node.ts';
import type { AuditLog } from '../api/audit-log.ts';
import type { LocalKms } from '../crypto/kms.ts';
import type { RootCredentialSource } from '../util/root-credential.ts';
import { BucketQuotas } from '../object/quota.ts';
import type { ServerPools } from '../object/server-pools.ts';
import type { Clock } from '../util/clock.ts';
import type { Config } from '../util/config.ts';
import type { SvcError } from '../util/errors.ts';
import type { Logger } from '../util/logger.ts';
import { rootCredentialSource } from '../util/root-credential.ts';
import { eventual, mapEventual, type Settler } from '../util/eventual.ts';
import { type AdminLayer, createAdminPlane } from './admin-plane.ts';
import { Supervisor } from '../background/supervisor.ts';
import { capacitySampler } from './capacity.ts';
import { MetricsHistory } from '../telemetry/history.ts';
import { recordHistory } from '../telemetry/history-recorder.ts';
import { createNodeDataMovement } from './data-movement.ts';
import { registerNodeHealing } from './healing-plane.ts';
import { loadIamState } from './iam-bootstrap.ts';
import { IAM_NOTIFY_TIMEOUT_MS, IAM_RELOAD_METHOD, iamPeerService, IamService } from './iam-service.ts';
import { createKms, kmsWatchJob } from './kms.ts';
import { NOTIFY_RELOAD_METHOD, NotifyPlane, startAuditLog } from './notify-plane.ts';
import { bucketSyncJob, capacityJob, clusterHealthJob, clusterJobs, driveProbeJob, plumbingJobs, iamRefreshJob, ldapKeyRecheckJob, movementJob, notifyJob, replicationJob } from './node-jobs.ts';
import { ldapKeyRecheckWorker } from './ldap-key-recheck.ts';
import type { LdapConfig } from '../iam/state.ts';
import { Readiness } from './readiness.ts';
import { ReplicationPlane } from './replication-plane.ts';
import { type RunningServer, type ServiceBundle, type StorageContext, startServer } from './start-server.ts';

export interface StartNodeDeps {
  readonly logger: Logger;
  readonly clock: Clock;
  readonly version?: string;
  /** A background retry hit a permanent error (the node should exit). */
  readonly onFatal?: (err: SvcError) => void;
  /** The signals this process exports over OTLP (the admin API's capabilities report them). */
  readonly telemetry?: { metrics: boolean; traces: boolean; logs: boolean };
}

/**
 * What the object phase produces, all at once: the admin plane's view of it
 * (`AdminLayer`) plus what the node's peer methods reach.
 */
interface ObjectPhase extends AdminLayer {
  readonly movement: DataMovement;
  readonly notifyPlane: NotifyPlane;
}

export interface RunningNode {
  readonly server: RunningServer;
  /** The object layer once format quorum was reached. */
  objectLayer(): ServerPools | undefined;
  /** Graceful stop: drain (`graceMs`, default `SVC_SHUTDOWN_TIMEOUT`), the object phase's jobs and layer, then the cluster plumbing and the audit log. */
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

  // ---- 1. plumbing
  // Every long-running job of this node, registered as its phase comes up; the admin API lists them.
  const jobs = new Supervisor({ logger: log });
  // The key store first: a malformed SVC_KMS_SECRET_KEY stops start-up before any disk is touched.
  const kms = createKms(config.kms, clock);
  // The certificate directory next: an unusable certificate stops start-up before any disk is touched.
  const tls = config.certsDir === undefined ? undefined : await CertificateStore.open({ dir: config.certsDir.path, explicit: config.certsDir.explicit, clock, logger: log });
  // The root credential follows its key files while the node runs (rotation without a restart).
  const rootCredential = rootCredentialSource(config.credentials, { clock, logger: log, readFile: (p) => readFile(p, 'utf8') });
  // The node's readiness: start-up's stages, the cluster's health watch and the admin API read the one instance.
  const readiness = new Readiness({ lock: true, peers: true });
  // Later phases' results, created here and settled exactly once by the phase that produces them.
  const formatted = eventual<StorageContext>('format quorum');
  const objects = eventual<ObjectPhase>('the object layer');

  // ---- 2. cluster: drives served over RPC, peers, the lock table
  const cluster = await createClusterNode({
    config,
    clock,
    logger: log,
    rootCredential,
    readiness,
    bucketMeta: mapEventual(objects.eventual, (o) => o.layer),
    ...(tls?.serving === true ? { tls: tls.trust } : {}),
  }).catch((err: unknown) => {
    rootCredential.close();
    tls?.close();
    throw err;
  });

  // ---- 3. identity and admin (answering from the first request; object routes 503 until phase 5)
  // The identity store: the root credential alone until it loads (readiness stage `iam`).
  const iam = new IamService({
    root: () => rootCredential.current(),
    clock,
    logger: log,
    ...(kms ? { kms } : {}),
    notifyPeers: async (generation) =>
      (await cluster.peers.broadcast(IAM_RELOAD_METHOD, { generation }, IAM_NOTIFY_TIMEOUT_MS)).map((r) => (r.error === undefined ? { peer: r.peer } : { peer: r.peer, error: r.error.message })),
  });
  const deploymentId = (): string | undefined => formatted.eventual.get()?.deploymentId;
  // The audit log wraps the S3 and admin handlers (every request is recorded when its response is done).
  const audit = await startAuditLog({ config, drives: [...cluster.localDrives.keys()], trust: tls?.trust, deploymentId: () => deploymentId() ?? '', clock, logger: log });
  // What runs from the start (their loops began with them, or begin now): stopped after every later job.
  for (const job of [...plumbingJobs({ rootCredential, tls, audit }), ...clusterJobs(cluster.workers)]) jobs.register(job);
  await jobs.start();
  const history = new MetricsHistory(clock);
  const admin = createAdminPlane({
    config,
    cluster,
    clock,
    logger: log,
    version: deps.version ?? 'dev',
    readiness: () => readiness.report('ready'),
    deploymentId,
    layer: objects.eventual,
    history,
    jobs: () => jobs.list(),
    rootCredential,
    iam,
    checkOpenIdProvider: (configUrl) => checkOpenIdProvider(configUrl, tls?.trust ?? staticTrust([])),
    checkLdapServer: (cfg, bindPassword) => checkLdapServer(cfg, bindPassword, tls?.trust ?? staticTrust([])),
    lookupLdapUser: (cfg, bindPassword, user) => lookupLdapUser(cfg, bindPassword, user, tls?.trust ?? staticTrust([])),
    ...(deps.telemetry !== undefined ? { telemetry: deps.telemetry } : {}),
  });
  // The node's own peer methods, on its RPC server before any listener exists.
  cluster.registerPeerService(admin.peerService);
  cluster.registerPeerService(iamPeerService(iam));
  cluster.registerPeerService({
    [NOTIFY_RELOAD_METHOD]: {
      kind: 'unary',
      handle: async () => {
        await objects.eventual.get()?.notifyPlane.reload();
        return {};
      },
    },
  });
  cluster.registerPeerService(
    movementPeerService(() => {
      const m = objects.eventual.get()?.movement;
      return m === undefined ? undefined : (n) => m.notice(n);
    }),
  );

  // ---- 4. startServer: layout, local disks, lock clients, format quorum, listeners (then 5, then IAM and finalization)
  const server: RunningServer = await startServer(config, {
    logger: log,
    clock,
    readiness,
    ...(deps.version !== undefined ? { version: deps.version } : {}),
    ...(deps.onFatal !== undefined ? { onFatal: deps.onFatal } : {}),
    ...cluster.serverDeps,
    tls,
    handlers: { ...cluster.serverDeps.handlers, admin: audit.wrap(admin.handler) },
    consoleOpenId: () => {
      const cfg = iam.loaded ? iam.doc().idp.openid : undefined;
      return cfg === undefined || cfg.disabled ? undefined : { fetch: trustedFetch(tls?.trust ?? staticTrust([])), configUrl: cfg.issuer, clientId: cfg.clientIds[0]!, ...(cfg.clientSecret ? { clientSecret: iam.open(cfg.clientSecret) } : {}), scopes: cfg.scopes ?? [], ...(cfg.redirectUri ? { redirectUri: cfg.redirectUri } : {}), ...(cfg.displayName ? { displayName: cfg.displayName } : {}) };
    },
    consoleLdap: () => {
      const cfg = iam.loaded ? iam.doc().idp.ldap : undefined;
      return cfg !== undefined && !cfg.disabled;
    },
    buildServices: async (ctx) => {
      formatted.settle(ctx);
      return buildObjectPhase(ctx, { config, cluster, kms, tls, rootCredential, iam, audit, jobs, objects, clock, logger: log });
    },
  }).catch(async (err: unknown) => {
    await jobs.stop();
    await cluster.close();
    throw err;
  });

  // ---- 6. background: what watches the running node
  // A peer going away or coming back changes which drives answer: storage readiness follows at once.
  for (const p of cluster.peers.peers.values()) p.onStateChange(() => server.recheckStorage());
  // Lock quorum and peer health for readiness: after start-up's lock-client step (its first round uses them).
  const health = clusterHealthJob(cluster.workers);
  if (health !== undefined) jobs.register(health);
  // the history subscribes first: the capacity sampler samples only while someone listens
  const stopHistory = recordHistory(history);
  jobs.register(capacityJob(capacitySampler(() => cluster.localDrives.values(), { clock, logger: log })));
  await jobs.start();
  return {
    server,
    objectLayer: () => objects.eventual.get()?.layer,
    close: async (graceMs) => {
      // Not ready, listeners closed, requests in flight drained (SVC_SHUTDOWN_TIMEOUT), then the
      // object phase's jobs and the layer (the services' close): docs/architecture.md "Shutdown".
      await server.close(graceMs, true);
      stopHistory();
      // Every job not stopped with the services (all of them when no object layer came up):
      // the cluster's loops, the root credential and certificate reloads, and the audit log
      // last (it flushes the records of the drained requests to its queues).
      await jobs.stop();
      await cluster.close();
      log.info({ event: 'shutdown_complete' }, 'shut down');
    },
  };
}

/** What the object phase is built from: every earlier phase's result. */
interface ObjectPhaseDeps {
  readonly config: Config;
  readonly cluster: ClusterNode;
  readonly kms: LocalKms | undefined;
  readonly tls: CertificateStore | undefined;
  readonly rootCredential: RootCredentialSource;
  readonly iam: IamService;
  readonly audit: AuditLog;
  readonly jobs: Supervisor;
  /** Settled here, once everything over the layer exists and before its jobs start. */
  readonly objects: Settler<ObjectPhase>;
  readonly clock: Clock;
  readonly logger: Logger;
}

/**
 * ---- 5. the object phase, once format quorum is reached: the object layer
 * over local + remote drives and everything that runs over it, its jobs
 * registered with the node's supervisor and started in dependency order
 * (stopped in reverse by the bundle's `close`, before the layer closes).
 */
async function buildObjectPhase(ctx: StorageContext, d: ObjectPhaseDeps): Promise<ServiceBundle> {
  const { config, cluster, kms, tls, rootCredential, iam, audit, jobs, clock, logger: log } = d;
  // The jobs that ran before this phase outlive the layer at shutdown (the audit log among them).
  const earlier = new Set(jobs.list().map((j) => j.name));
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
  jobs.register(driveProbeJob(built));
  // Decommission and rebalance state applies before the node serves (admission fences).
  const movement = createNodeDataMovement({ config, cluster, layer: built, clock, logger: log });
  jobs.register(movementJob(movement));
  const healing = registerNodeHealing({ cluster, layer: built, config, clock, logger: log, jobs });
  // Bucket notifications: targets and their queues, then the layer's post-commit hook.
  const notifyPlane = await NotifyPlane.start({
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
  jobs.register(notifyJob(notifyPlane));
  // Bucket replication: targets and their queues, then the layer's post-commit hook (asked before the events').
  const replication = await ReplicationPlane.start({ layer: built, drives: [...cluster.localDrives.keys()], trust: tls?.trust, selfId: cluster.selfId, clock, logger: log });
  jobs.register(replicationJob(replication));
  // Bucket quotas: one counter per node, shared by the S3 handler (admission) and the admin API (get-bucket-quota).
  const quotas = new BucketQuotas({ config: (b) => built.getBucketConfig(b, 'quota'), usage: () => healing.usage(), clock });
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
    notify: notifyPlane.system,
    logger: log,
    clock,
  });
  // Every bucket on every pool: the first pass is start-up's last step
  // (a joining pool gets every bucket before the node reports ready);
  // the worker repeats it and repairs changes that missed a pool.
  jobs.register(bucketSyncJob(built));
  // Everything over the layer exists: the admin plane, the peer methods and the bucket metadata signal see it from now on.
  d.objects.settle({
    layer: built,
    decommission: movement.decommission,
    rebalance: movement.rebalance,
    heal: healing.healWorker,
    healing: healing.healingDrives,
    healInfo: () => healing.local(),
    usage: () => healing.usage(),
    quotas,
    notify: notifyPlane,
    replication,
    movement,
    notifyPlane,
  });
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
          return cfg && !cfg.disabled ? (token: string) => verifyWebIdentity(cfg, token, clock.now(), tls?.trust ?? staticTrust([])) : undefined;
        },
        ldap: () => {
          const doc = iam.loaded ? iam.doc() : undefined;
          const cfg = doc?.idp.ldap;
          return cfg && !cfg.disabled ? (user: string, password: string) => verifyLdapUser(cfg, iam.open(cfg.lookupBindPassword), doc!.ldapPolicies, user, password, tls?.trust ?? staticTrust([])) : undefined;
        },
      }),
    },
    loadIam: async () => {
      await loadIamState(iamStore);
      const loaded = await iam.load({ read: (p) => built.sysRecords.read(p), update: (p, fn) => built.sysRecords.update(p, fn) });
      // The periodic re-read runs once the store loaded (a retried load registers it once).
      if (!jobs.list().some((j) => j.name === 'iam-refresh')) jobs.register(iamRefreshJob(iam));
      if (!jobs.list().some((j) => j.name === 'ldap-key-recheck')) {
        const lookup = (cfg: LdapConfig, bindPassword: string, user: string) => lookupLdapUser(cfg, bindPassword, user, tls?.trust ?? staticTrust([]));
        jobs.register(ldapKeyRecheckJob(ldapKeyRecheckWorker({ iam, lookup, everyMs: config.ldapKeyRecheckMs, clock, logger: log })));
      }
      await jobs.start();
      return loaded;
    },
    beginShutdown: () => notifyPlane.system.endListeners(),
    close: async () => {
      // This phase's jobs and the ones started after it, in the reverse order they started (a
      // running root heal is persisted), then the layer; the earlier jobs stop after it.
      await jobs.stop((name) => earlier.has(name));
      await built.close();
    },
    finalize: () => built.bucketSync.attempt(),
    writeBlocked: () => built.writeBlockedSets().length > 0,
    storageNote: () => {
      // Drives that are online but damaged, full or read-only show in the readiness detail too.
      const drives = built.driveIssues().map((x) => `${x.endpoint}: ${x.issues.map((i) => `${i.kind} (${i.detail})`).join(', ')}`);
      const blocked = built.writeBlockedSets().map((b) => `pool ${b.pool} set ${b.set}: ${b.why}`);
      const parts = [built.bucketSync.note(), ...blocked, ...drives].filter((x): x is string => x !== undefined && x !== '');
      return parts.length > 0 ? parts.join('; ') : undefined;
    },
  };
}
