/**
 * The admin plane, composed: the admin services over the cluster and (once
 * format quorum is reached) the object layer, the admin core, its HTTP
 * handler for `/svc/admin/` and `/compat/admin/`, and the peer RPC methods
 * for forwarded pool mutations and node info.
 *
 * The handler answers from the first request. It is built with an
 * `Eventual` of what the object-layer phase produces (`AdminLayer`: the
 * layer and every worker port over it, settled once); routes that read it
 * (pools, decommission, rebalance, heal, quotas, targets) answer 503
 * `ServiceUnavailable` with `Retry-After` until it settles; the snapshot,
 * server info and capabilities routes answer in degraded mode too.
 *
 * Pool leadership (SPEC: the pool leader is the first endpoint of a pool):
 * a pool's leader is the node serving the pool's first endpoint in
 * expansion order (for `http://node{1...4}:9000/d{1...2}`, node1). A
 * pool-scoped mutation received by any other node is forwarded to it.
 */
import { governanceReport, kmsReport } from '../object/admin/governance-admin.ts';
import { randomBytes } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { iamAuthorizer, principalMay, rootAuthorizer } from '../api/admin/authorize.ts';
import { decodeAcl } from '../api/s3/authz/acl.ts';
import { createAdminCore } from '../api/admin/core.ts';
import { createAdminHandler } from '../api/admin/index.ts';
import { ADMIN_PREFIXES, ADMIN_ROUTES } from '../api/admin/routes.ts';
import { adminPeerService, AdminPeers } from '../cluster/admin-peer.ts';
import type { ClusterNode } from '../cluster/cluster-node.ts';
import type { RpcService } from '../cluster/rpc-server.ts';
import { DataMovementAdmin, type PoolDescriptor, rebalanceAdminOf, usableUsed } from '../object/admin/data-movement-admin.ts';
import type { AdminServices, DecommissionWorker, HealingDrives, HealWorker, NotifyAdmin, RebalanceWorker, ReplicationAdmin } from '../object/admin/services.ts';
import {
  type BackgroundJobReport,
  type ClusterSnapshot,
  type RuntimeCapabilities,
  rfc3339,
  type ServerInfoMessage,
  type ServerProperties,
  type SnapshotDrive,
  type SnapshotNode,
  type SnapshotPool,
} from '../object/admin/types.ts';
import { readQuorum, writeQuorum } from '../object/quorum.ts';
import { PoolRecords } from '../object/records/store.ts';
import type { LocalHealInfo } from '../background/healing.ts';
import { tokenNode } from '../background/heal/sequences.ts';
import { type BucketQuotas, encodeQuota } from '../object/quota.ts';
import type { UsageReport } from '../object/usage.ts';
import type { ServerPools } from '../object/server-pools.ts';
import { SYS_VOL } from '../storage/drive.ts';
import { endpointHostPort, type PoolLayout } from 'svc-topology';
import type { Clock } from '../util/clock.ts';
import type { Eventual } from '../util/eventual.ts';
import type { Config } from '../util/config.ts';
import { SvcError } from '../util/errors.ts';
import type { Logger } from '../util/logger.ts';
import { type RootCredentialSource, staticRootCredential } from '../util/root-credential.ts';
import { adminDiskOf, issueText, type DriveReport, probeDrives } from './admin-drives.ts';
import { type AdminHealDeps, backgroundHealStatus, erasureSets, replacementStatus, usageFields } from './admin-heal.ts';
import { type MetricsHistory, mergeHistories, parseWindow } from '../telemetry/history.ts';
import type { IamService } from './iam-service.ts';
import type { LdapConfig } from '../iam/state.ts';
import type { LdapUser } from '../api/sts/providers.ts';
import type { ReadinessReport } from './readiness.ts';

/**
 * What the object-layer phase hands the admin plane, all at once: the
 * layer and the worker ports over it. Before it settles none of them
 * exists: the capabilities carry `implemented: false` for decommission,
 * rebalance and heal, and the routes that need the layer answer 503.
 */
export interface AdminLayer {
  readonly layer: ServerPools;
  readonly decommission: DecommissionWorker;
  readonly rebalance: RebalanceWorker;
  readonly heal: HealWorker;
  readonly healing: HealingDrives;
  /** This node's background heal, scanner and rebuilds (peers are asked for theirs). */
  readonly healInfo: () => LocalHealInfo;
  /** The data usage the scanners recorded. */
  readonly usage: () => Promise<UsageReport | undefined>;
  /** Bucket quotas, shared with the S3 handler (its writes in flight count). */
  readonly quotas: BucketQuotas;
  readonly notify: NotifyAdmin;
  readonly replication: ReplicationAdmin;
}

export interface AdminPlaneOptions {
  readonly config: Config;
  readonly cluster: ClusterNode;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly version: string;
  readonly readiness: () => ReadinessReport | undefined;
  readonly deploymentId: () => string | undefined;
  /** The object layer and its worker ports, once that phase settled them. */
  readonly layer: Eventual<AdminLayer>;
  /** This node's measurements of the last hours (`metrics/history`). */
  readonly history?: MetricsHistory;
  /** OTLP export is running for these signals. */
  readonly telemetry?: { metrics: boolean; traces: boolean; logs: boolean };
  /** This node's background jobs as its supervisor lists them (`background/jobs`); default: none. */
  readonly jobs?: () => BackgroundJobReport[];
  /** The root credential as it changes; default: the configured one, fixed. */
  readonly rootCredential?: RootCredentialSource;
  /**
   * The identity store: when given, requests resolve through it (users,
   * access keys, sessions) and the identity routes are served; default:
   * the root credential alone.
   */
  readonly iam?: IamService;
  /** Refuses an OpenID provider this node cannot reach or trust, when it is configured. */
  readonly checkOpenIdProvider?: (configUrl: string) => Promise<void>;
  /** Refuses an LDAP server this node cannot reach or trust, or whose lookup bind fails, when it is configured. */
  readonly checkLdapServer?: (cfg: LdapConfig, bindPassword: string) => Promise<void>;
  /** Finds an LDAP user (DN, groups) with the lookup bind, for the access keys of LDAP users. */
  readonly lookupLdapUser?: (cfg: LdapConfig, bindPassword: string, user: string) => Promise<LdapUser>;
}

export interface AdminPlane {
  readonly handler: ReturnType<typeof createAdminHandler>;
  /** Peer RPC methods to register on the node's RPC server. */
  readonly peerService: RpcService;
}

function leaderOf(p: PoolLayout, selfId: string): string {
  const first = p.endpoints[0];
  return (first && endpointHostPort(first)) ?? selfId;
}

export function createAdminPlane(o: AdminPlaneOptions): AdminPlane {
  const { cluster, clock, config } = o;
  const startedAt = clock.now();
  const hostId = randomBytes(24).toString('base64');
  const now = (): AdminLayer | undefined => o.layer.get();
  const localJobs = (): BackgroundJobReport[] => o.jobs?.() ?? [];
  const root = o.rootCredential ?? staticRootCredential(config.credentials);
  const pools = cluster.pools;
  const selfId = cluster.selfId;
  const descriptors: PoolDescriptor[] = pools.map((p) => ({
    id: p.index,
    cmdline: p.cmdline,
    ellipsis: p.ellipsis,
    setCount: p.setCount,
    setDriveCount: p.setDriveCount,
    standardParity: p.parity.standard,
    rrsParity: p.parity.rrs,
    leader: leaderOf(p, selfId),
  }));
  const peers = new AdminPeers(cluster.peers);
  const nodes = cluster.peers.nodes.length > 0 ? [...cluster.peers.nodes] : [selfId];
  const isOnline = (node: string) => node === selfId || peers.isOnline(node);
  const firstSeen = new Map<string, number>();

  /** The object layer's phase, or 503 while it has not settled. */
  const up = (): AdminLayer => {
    const l = now();
    if (l === undefined) throw new SvcError('ServiceUnavailable', 'the object layer is not up yet (format quorum pending); retry in a few seconds');
    return l;
  };
  // Decommission and rebalance administration over the layer's records, made on first use once it is up.
  let dm: DataMovementAdmin | undefined;
  const movement = (): DataMovementAdmin => (dm ??= dataMovementAdmin(up()));
  const healing = () => now()?.healing.healing() ?? new Set<string>();
  const quotaService = (): BucketQuotas => up().quotas;
  const replicationOf = (): ReplicationAdmin => up().replication;
  const notifyOf = (): NotifyAdmin => up().notify;

  const drives = (only?: (d: PoolLayout['endpoints'][number]) => boolean) =>
    probeDrives(
      {
        pools,
        selfId,
        isLocal: (ep) => cluster.isLocal(ep),
        diskInfo: (ep) => cluster.driveOf(ep).diskInfo(),
        formatIO: (p) => cluster.formatIO(p, p.endpoints.map((ep) => cluster.isLocal(ep))),
        deploymentId: o.deploymentId,
      },
      only,
    );

  const localProperties = async (): Promise<ServerProperties> => {
    const mine = await drives((ep) => cluster.isLocal(ep));
    const mem = process.memoryUsage();
    const h = healing();
    return {
      state: 'online',
      endpoint: selfId,
      scheme: pools[0]?.endpoints[0]?.kind === 'url' ? pools[0].endpoints[0].scheme : 'http',
      uptime: Math.floor((clock.now() - startedAt) / 1000),
      version: o.version,
      commitID: '',
      network: Object.fromEntries(nodes.map((n) => [n, isOnline(n) ? 'online' : 'offline'] as const)),
      drives: mine.map((d) => adminDiskOf(d, h)),
      // 1-based, as MinIO reports pool numbers in server info.
      poolNumber: (pools.find((p) => p.endpoints.some((ep) => cluster.isLocal(ep)))?.index ?? 0) + 1,
      poolNumbers: pools.filter((p) => p.endpoints.some((ep) => cluster.isLocal(ep))).map((p) => p.index + 1),
      mem_stats: { alloc: mem.heapUsed, total_alloc: mem.heapTotal, heap_alloc: mem.heapUsed, rss: mem.rss },
      num_cpu: availableParallelism(),
      runtime_version: process.version,
    };
  };

  const offlineProperties = (node: string, all: readonly DriveReport[]): ServerProperties => ({
    state: 'offline',
    endpoint: node,
    scheme: 'http',
    uptime: 0,
    version: '',
    commitID: '',
    network: {},
    drives: all.filter((d) => d.node === node).map((d) => adminDiskOf({ ...d, online: false }, new Set())),
    poolNumber: 0,
    poolNumbers: [],
    mem_stats: { alloc: 0, total_alloc: 0, heap_alloc: 0, rss: 0 },
    num_cpu: 0,
    runtime_version: '',
  });

  const capabilities = (): RuntimeCapabilities => {
    const multi = pools.length > 1;
    const ellipsis = pools.every((p) => p.ellipsis);
    const decomPossible = multi && ellipsis;
    return {
      version: o.version,
      adminApi: { versions: ['v3', 'v4'], prefixes: ADMIN_PREFIXES.map((p) => p.slice(0, -1)) },
      layout: { pools: pools.length, nodes: nodes.length, ellipsis, singleDrive: pools.length === 1 && pools[0]!.endpoints.length === 1 },
      decommission: {
        possible: decomPossible,
        implemented: now() !== undefined,
        reason: decomPossible ? null : multi ? 'every pool must be an ellipsis expression' : 'decommission needs more than one pool',
      },
      rebalance: { possible: multi, implemented: now() !== undefined, reason: multi ? null : 'rebalance needs more than one pool' },
      heal: {
        adminHeal: now() !== undefined,
        backgroundHeal: now() !== undefined,
        scanner: now() !== undefined,
        replacementDetection: true,
        replacementRecovery: now() !== undefined,
      },
      telemetry: {
        otlpExport: o.telemetry !== undefined && Object.values(o.telemetry).some(Boolean),
        signals: o.telemetry ?? { metrics: false, traces: false, logs: false },
      },
      forwarding: { poolLeader: 'first-endpoint', internodeRpc: true },
    };
  };

  const snapshot = async (): Promise<ClusterSnapshot> => {
    const [all, statuses] = await Promise.all([drives(), now() === undefined ? undefined : movement().list().catch(() => undefined)]);
    const h = healing();
    const snapDrive = (d: DriveReport): SnapshotDrive => ({
      endpoint: d.endpoint,
      node: d.node,
      local: d.local,
      state: h.has(d.endpoint) ? 'healing' : d.online && d.format === 'ok' ? 'online' : 'offline',
      detail: d.detail ?? issueText(d.issues) ?? null,
      ...(d.issues.length > 0 ? { issues: d.issues.map((i) => ({ ...i })) } : {}),
      uuid: d.uuid,
      ...(d.filesystem !== undefined ? { filesystem: d.filesystem } : {}),
      slot: { pool: d.pool, set: d.set, index: d.slot },
      total: d.total,
      used: d.used,
      free: d.free,
    });
    const snapPools: SnapshotPool[] = pools.map((p) => {
      const mine = all.filter((d) => d.pool === p.index).map(snapDrive);
      const k = p.setDriveCount - p.parity.standard;
      const up = mine.filter((d) => d.state === 'online');
      const st = statuses?.[p.index];
      const rawTotal = up.reduce((a, d) => a + d.total, 0);
      const rawFree = up.reduce((a, d) => a + d.free, 0);
      const ratio = k / p.setDriveCount;
      return {
        id: p.index,
        cmdline: p.cmdline,
        leader: leaderOf(p, selfId),
        setCount: p.setCount,
        setDriveCount: p.setDriveCount,
        standardParity: p.parity.standard,
        rrsParity: p.parity.rrs,
        status: st?.status ?? 'unknown',
        decommissionStatus: st?.decommissionStatus ?? 'unknown',
        rebalanceStatus: st?.rebalanceStatus ?? 'unknown',
        rawTotal,
        rawUsed: up.reduce((a, d) => a + d.used, 0),
        rawFree,
        usableTotal: Math.floor(rawTotal * ratio),
        usableFree: Math.floor(rawFree * ratio),
        sets: Array.from({ length: p.setCount }, (_, s) => {
          const ds = mine.filter((d) => d.slot.set === s).sort((a, b) => a.slot.index - b.slot.index);
          const online = ds.filter((d) => d.state === 'online').length;
          return {
            id: s,
            drives: ds,
            drivesOnline: online,
            readQuorum: readQuorum(k),
            writeQuorum: writeQuorum(k, p.parity.standard),
            readable: online >= readQuorum(k),
            writable: online >= writeQuorum(k, p.parity.standard),
          };
        }),
      };
    });
    const flat = snapPools.flatMap((p) => p.sets.flatMap((s) => s.drives));
    const skews = new Map(cluster.clockSkews().map((x) => [x.peer, x.skewMs]));
    const snapNodes: SnapshotNode[] = nodes.map((n) => ({
      id: n,
      state: isOnline(n) ? 'online' : 'offline',
      self: n === selfId,
      leaderOfPools: pools.filter((p) => leaderOf(p, selfId) === n).map((p) => p.index),
      drives: flat.filter((d) => d.node === n).length,
      clockSkewMs: skews.get(n) ?? null,
    }));
    const r = o.readiness();
    return {
      generatedAt: rfc3339(clock.now()),
      deploymentId: o.deploymentId() ?? '',
      node: selfId,
      readiness: { ready: r?.ready ?? false, status: r?.status ?? 'degraded', degradedReasons: [...(r?.degradedReasons ?? [])] },
      summary: {
        nodes: nodes.length,
        nodesOnline: snapNodes.filter((n) => n.state === 'online').length,
        pools: pools.length,
        sets: pools.reduce((a, p) => a + p.setCount, 0),
        drives: flat.length,
        drivesOnline: flat.filter((d) => d.state === 'online').length,
        drivesOffline: flat.filter((d) => d.state === 'offline').length,
        drivesHealing: flat.filter((d) => d.state === 'healing').length,
        rawTotal: snapPools.reduce((a, p) => a + p.rawTotal, 0),
        rawUsed: snapPools.reduce((a, p) => a + p.rawUsed, 0),
        rawFree: snapPools.reduce((a, p) => a + p.rawFree, 0),
        usableTotal: snapPools.reduce((a, p) => a + p.usableTotal, 0),
        usableFree: snapPools.reduce((a, p) => a + p.usableFree, 0),
      },
      nodes: snapNodes,
      pools: snapPools,
      runtimeCapabilitiesPath: '/svc/admin/v4/runtime/capabilities',
    };
  };

  const info = async (): Promise<ServerInfoMessage> => {
    const all = await drives();
    const servers = await Promise.all(
      nodes.map(async (n): Promise<ServerProperties> => {
        if (n === selfId) return localProperties();
        const remote = (await peers.nodeInfo(n)) as ServerProperties | undefined;
        return remote ?? offlineProperties(n, all);
      }),
    );
    const disks = servers.flatMap((s) => s.drives);
    const layer = now()?.layer;
    let buckets: ServerInfoMessage['buckets'];
    try {
      buckets = layer === undefined ? { count: 0, error: 'the object layer is not up yet' } : { count: (await layer.listBuckets()).length };
    } catch (err) {
      buckets = { count: 0, error: err instanceof Error ? err.message : String(err) };
    }
    const caps = await layer?.capacity().catch(() => undefined);
    let usage: UsageReport | undefined;
    let usageError: string | undefined;
    const usageOf = now()?.usage;
    if (usageOf === undefined) usageError = 'not measured: the object layer and its scanner are not up yet';
    else {
      usage = await usageOf().catch((err: unknown) => {
        usageError = `usage records unreadable now: ${err instanceof Error ? err.message : String(err)}`;
        return undefined;
      });
    }
    return {
      mode: layer === undefined ? 'initializing' : 'online',
      deploymentID: o.deploymentId() ?? '',
      region: config.region,
      buckets,
      ...usageFields(usage, usageError),
      backend: {
        backendType: 'Erasure',
        onlineDisks: disks.filter((d) => d.state === 'ok').length,
        offlineDisks: disks.filter((d) => d.state !== 'ok').length,
        standardSCParity: pools[0]?.parity.standard ?? 0,
        rrSCParity: pools[0]?.parity.rrs ?? 0,
        totalSets: pools.map((p) => p.setCount),
        totalDrivesPerSet: pools.map((p) => p.setDriveCount),
      },
      servers,
      pools: erasureSets(pools, all, usage, healing()),
      poolCapacity: pools.map((p) => {
        const c = caps?.[p.index];
        return { id: p.index, cmdline: p.cmdline, rawTotal: c?.rawTotal ?? 0, rawFree: c?.rawFree ?? 0, usableTotal: c?.usableTotal ?? 0, usableFree: c?.usableFree ?? 0, usableUsed: usableUsed(c) };
      }),
    };
  };

  const healDeps: AdminHealDeps = {
    pools,
    nodes,
    selfId,
    isOnline,
    drives: () => drives(),
    healing,
    local: () => now()?.healInfo(),
    peer: (node) => peers.healInfo(node) as Promise<LocalHealInfo | undefined>,
    readSys: (endpoint, path) => {
      const ep = pools.flatMap((p) => p.endpoints).find((e) => e.raw === endpoint);
      if (ep === undefined) return Promise.reject(new SvcError('InternalError', `unknown drive ${endpoint}`));
      return cluster.driveOf(ep).readAll(SYS_VOL, path);
    },
    usage: () => now()?.usage() ?? Promise.resolve(undefined),
  };

  const services: AdminServices = {
    pools: {
      list: () => movement().list(),
      status: (p) => movement().status(p),
      decommissionStatus: (p) => movement().decommissionStatus(p),
      startDecommission: (p) => movement().startDecommission(p),
      cancelDecommission: (p) => movement().cancelDecommission(p),
      clearDecommission: (p) => movement().clearDecommission(p),
    },
    rebalance: {
      status: () => rebalanceAdminOf(movement()).status(),
      start: () => rebalanceAdminOf(movement()).start(),
      stop: () => rebalanceAdminOf(movement()).stop(),
    },
    heal: { heal: (call) => up().heal.heal(call) },
    backgroundHeal: { status: () => backgroundHealStatus(healDeps) },
    replacement: { status: () => replacementStatus(healDeps, clock.now(), firstSeen) },
    cluster: {
      snapshot,
      info,
      capabilities,
      history: async (minutes) => {
        // every node's own points (a node down or not answering in time counts nothing and is named)
        const windows = await Promise.all(nodes.map(async (n) => (n === selfId ? o.history?.window() : parseWindow(await peers.metricsHistory(n)))));
        const merged = mergeHistories(windows.filter((w) => w !== undefined), clock.now(), minutes);
        return { ...merged, nodes: nodes.map((node, i) => ({ node, answered: windows[i] !== undefined })) };
      },
      jobs: async () => ({
        // every node's own supervisor (a node down or not answering in time is named with none)
        nodes: await Promise.all(
          nodes.map(async (node) => {
            const jobs = node === selfId ? localJobs() : ((await peers.backgroundJobs(node)) as BackgroundJobReport[] | undefined);
            return { node, answered: jobs !== undefined, jobs: jobs ?? [] };
          }),
        ),
      }),
    },
    governance: {
      buckets: (bucket) => {
        movement();
        return governanceReport(up().layer, bucket);
      },
      kms: () => kmsReport(now()?.layer.governance.kms?.status()),
    },
    quota: {
      get: async (bucket) => {
        const q = quotaService();
        await up().layer.getBucketInfo(bucket);
        const quota = await q.quotaOf(bucket);
        if (quota === undefined) throw new SvcError('XSvcAdminNoSuchQuotaConfiguration', `bucket ${bucket} has no quota; set one with svc admin bucket quota set`);
        const counted = await q.count(bucket);
        return { quota: quota.size, size: quota.size, rate: 0, requests: 0, quotatype: quota.type, bucket, usage: counted.total };
      },
      set: async (bucket, quota) => {
        const { layer } = up();
        await layer.getBucketInfo(bucket);
        await layer.setBucketConfig(bucket, 'quota', quota === undefined ? undefined : encodeQuota({ size: quota.size, type: 'hard' }));
        o.logger.info({ event: 'bucket_quota_changed', bucket, size: quota?.size ?? null }, quota === undefined ? 'bucket quota cleared' : 'bucket quota set');
      },
    },
    notify: {
      targets: () => notifyOf().targets(),
      set: (type, id, settings) => notifyOf().set(type, id, settings),
      remove: (type, id) => notifyOf().remove(type, id),
    },
    replication: {
      setTarget: (bucket, body, secretKey, update) => replicationOf().setTarget(bucket, body, secretKey, update),
      listTargets: (bucket) => replicationOf().listTargets(bucket),
      removeTarget: (bucket, arn) => replicationOf().removeTarget(bucket, arn),
      status: (bucket) => replicationOf().status(bucket),
      resyncStart: (bucket, arn) => replicationOf().resyncStart(bucket, arn),
      resyncStatus: (bucket) => replicationOf().resyncStatus(bucket),
      resyncCancel: (bucket, arn) => replicationOf().resyncCancel(bucket, arn),
    },
  };

  function dataMovementAdmin(l: AdminLayer): DataMovementAdmin {
    return new DataMovementAdmin({
      pools: descriptors,
      records: new PoolRecords(l.layer.sysRecords),
      capacity: () => l.layer.capacity(),
      storedBytes: async () => {
        // a pool's object bytes once the scanner has counted every set of it
        const u = await l.usage().catch(() => undefined);
        if (u === undefined) return [];
        return pools.map((p) => (u.perSet.filter((s) => s.pool === p.index).length >= p.setCount ? u.pools.find((x) => x.pool === p.index)?.size : undefined));
      },
      clock,
      decommissionWorker: l.decommission,
      rebalanceWorker: l.rebalance,
    });
  }

  const core = createAdminCore({
    services,
    layout: { cmdlines: pools.map((p) => p.cmdline), pools: pools.length, setsOf: (i) => pools[i]?.setCount ?? 0 },
    authorizer: o.iam ? iamAuthorizer((ak, token) => o.iam!.lookup(ak, token), () => clock.now()) : rootAuthorizer(() => root.current().accessKey),
    ...(o.iam
      ? {
          iam: {
            store: o.iam,
            allowed: (p, action, address) => principalMay(p, action, address ?? '', clock.now()),
            allowedOn: (p, action, resource, owner) => principalMay(p, action, '', clock.now(), resource || 'arn:aws:s3:::*', owner),
            bucketOwner: async (bucket) => {
              const raw = await now()?.layer.getBucketConfig(bucket, 'acl');
              return raw ? decodeAcl(raw).owner.id : root.current().accessKey;
            },
            now: () => clock.now(),
            ...(o.checkOpenIdProvider ? { checkOpenIdProvider: o.checkOpenIdProvider } : {}),
            ...(o.checkLdapServer ? { checkLdapServer: o.checkLdapServer } : {}),
            ...(o.lookupLdapUser ? { lookupLdapUser: o.lookupLdapUser } : {}),
          },
        }
      : {}),
    forwarder: {
      leaderOf: (i) => {
        const first = pools[i]?.endpoints[0];
        return first === undefined || cluster.isLocal(first) ? undefined : endpointHostPort(first);
      },
      forward: (node, call, describe) => peers.forward(node, call, describe),
      healOwner: (token) => {
        const i = tokenNode(token);
        const node = i === undefined ? undefined : cluster.peers.nodes[i];
        return node === undefined || node === selfId ? undefined : node;
      },
    },
    selfId,
    hostId,
    logger: o.logger,
  });

  const handler = createAdminHandler({
    core,
    credentials: o.iam ? (accessKey, token) => o.iam!.lookup(accessKey, token) : (accessKey) => root.lookup(accessKey),
    region: config.region,
    anyRegion: config.acceptAnyRegion,
    clock,
    logger: o.logger,
    hostId,
  });

  o.logger.info(
    { event: 'admin_api_ready', routes: ADMIN_ROUTES.length, leaders: descriptors.map((d) => ({ pool: d.id, leader: d.leader })) },
    'admin API installed',
  );

  return {
    handler,
    peerService: adminPeerService({
      execute: (call, caller) => core.execute(call, caller),
      nodeInfo: localProperties,
      healInfo: () => now()?.healInfo() ?? null,
      metricsHistory: () => o.history?.window() ?? null,
      backgroundJobs: localJobs,
    }),
  };
}
