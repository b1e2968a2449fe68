/**
 * What a node of a multi-node deployment plugs into the composition root
 * (`server/start-server.ts`), built in one call before `startServer`
 * (`server/start-node.ts` is the composition `svc server` runs):
 *
 *   const layer = eventual<ObjectPhase>('the object layer');
 *   const cluster = await createClusterNode({ config, clock, logger, readiness, bucketMeta: ... });
 *   const server = await startServer(config, {
 *     ...,
 *     ...cluster.serverDeps,            // localHosts, handlers { rpc, peer }, formatIO, exemptAddress
 *     buildServices: async (ctx) => {   // after format quorum
 *       const built = await createObjectLayer({ pools: cluster.poolSpecs(ctx.formats), locker: cluster.namespaceLocker, ... });
 *       layer.settle(...);              // what was built before it waits on this one value
 *       return { handlers: { s3: createS3Handler({ objectLayer: built, ... }) }, close: () => built.close() };
 *     },
 *   });
 *   // cluster.workers (heartbeat, lock sweep, health watch) run under the node's supervisor
 *   ...
 *   await server.close(); await cluster.close();
 *
 * It provides:
 * - locality from the bind address (`SVC_ADDRESS=127.0.0.2:9000` makes only
 *   `127.0.0.2:9000` endpoints local, so several nodes can share a machine);
 * - the RPC server for `/svc/rpc/` and `/svc/peer/` serving this node's local
 *   drives, its lock table and its server info, from the first request (peers
 *   need it for their format quorum);
 * - a `FormatIO` that reads remote drives over RPC and guards fresh formats:
 *   only the deployment leader (owner of the first endpoint of the first pool)
 *   ever sees a fresh pool, and only once every peer reports the same config
 *   digest; everyone else waits until the leader's formats appear;
 * - remote drives and a distributed namespace locker for the object layer.
 */
import { randomUUID } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import { hostname, networkInterfaces } from 'node:os';
import { type Drive, SYS_VOL } from '../storage/drive.ts';
import { type DriveFormatState, FORMAT_FILE, type FormatFile, type FormatIO, readFormatFile, type SlotStatus, validateFormat, writeFormatFile } from '../storage/format.ts';
import { LocalDrive } from '../storage/local-drive.ts';
import { TracedDrive } from '../storage/traced-drive.ts';
import { buildPoolLayouts, type Endpoint, endpointHostPort, isLocalEndpoint, normaliseHost, parseParity, type PoolLayout } from 'svc-topology';
import type { Clock } from '../util/clock.ts';
import type { ClientTrust } from '../tls/trust.ts';
import type { Config } from '../util/config.ts';
import { SvcError } from '../util/errors.ts';
import type { Eventual } from '../util/eventual.ts';
import type { Logger } from '../util/logger.ts';
import { normaliseAddress } from '../util/net-config.ts';
import { type PeriodicProgress, periodicWorker, type Worker } from '../util/worker.ts';
import { ClockSkews, type PeerSkew } from './clock-skew.ts';
import { configDigest, peersDisagree, serverInfoService } from './cluster-format.ts';
import { DistLocker } from './dist-lock.ts';
import { DistNamespaceLocker } from './dist-ns-locker.ts';
import { driveRpcService } from './drive-rpc-service.ts';
import { LockServer, lockRpcService, ownerNode } from './lock-server.ts';
import { ClusterPeers, distinctHosts } from './peers.ts';
import { RpcAuth } from './rpc-auth.ts';
import { type RootCredential, type RootCredentialSource, staticRootCredential } from '../util/root-credential.ts';
import { RpcServer, type RpcService } from './rpc-server.ts';
import { placeDrives } from './set-drives.ts';

const WILDCARD_HOSTS = new Set(['', '0.0.0.0', '::', '[::]']);

/**
 * Host names and addresses that mean "this node" for a listener bound to
 * `bindHost`. A specific bind address is the node's identity (several nodes
 * may share one machine on different loopback addresses); a wildcard bind
 * means every interface address, the host name, and `localhost`.
 */
export function localHostsFor(bindHost: string): Set<string> {
  if (!WILDCARD_HOSTS.has(bindHost)) return new Set([normaliseHost(bindHost)]);
  const hosts = new Set<string>(['localhost', normaliseHost(hostname())]);
  for (const list of Object.values(networkInterfaces())) for (const a of list ?? []) hosts.add(normaliseHost(a.address));
  return hosts;
}

/**
 * Completes `localHostsFor`: endpoint host names that resolve to a local
 * address are local (for a specific bind, only names resolving to the bind
 * address itself: a pod's DNS name pointing at its pod IP), and for a
 * wildcard bind so is a name whose first label is this machine's host name
 * (StatefulSet pods before their DNS record exists). A name that does not
 * resolve is not fatal: it counts as remote and its peer client keeps retrying.
 */
export async function resolveLocalHosts(pools: readonly PoolLayout[], bindHost: string, port: number, logger: Logger): Promise<Set<string>> {
  const hosts = localHostsFor(bindHost);
  const wildcard = WILDCARD_HOSTS.has(bindHost);
  const short = wildcard ? normaliseHost(hostname()).split('.')[0] : undefined;
  const names = new Set(
    pools.flatMap((p) => p.endpoints).flatMap((ep) => (ep.kind === 'url' && ep.port === port && !hosts.has(ep.host) && isIP(ep.host) === 0 ? [ep.host] : [])),
  );
  for (const name of names) {
    if (short !== undefined && name.split('.')[0] === short) {
      hosts.add(name);
      continue;
    }
    try {
      const addrs = await lookup(name, { all: true });
      if (addrs.some((a) => hosts.has(normaliseHost(a.address)))) hosts.add(name);
    } catch (err) {
      logger.warn({ event: 'peer_host_unresolved', host: name, err: String(err) }, 'peer host name does not resolve yet; treating it as remote and retrying');
    }
  }
  return hosts;
}

export interface ClusterNodeOptions {
  readonly config: Config;
  readonly clock: Clock;
  readonly logger: Logger;
  /** The root credential as it changes (internode tokens follow it); default: the configured one, fixed. */
  readonly rootCredential?: RootCredentialSource;
  /** What https:// peers are verified against (the node's CA set, `tls/trust.ts`). */
  readonly tls?: ClientTrust;
  /**
   * The readiness whose `lock`, `peers` and `clusterTimeout` flags the
   * health watch keeps current (`workers.healthWatch`); without it there is
   * no health watch.
   */
  readonly readiness?: LockReadinessTarget;
  /**
   * The bucket metadata cache a peer's `reloadBucketMeta` clears: the
   * object layer's, once that phase produced it (until then there is
   * nothing cached to drop).
   */
  readonly bucketMeta?: Eventual<{ forgetBucket(bucket: string): void }>;
}

/** The cluster plumbing's long-running loops, under the Worker contract (the node's supervisor runs them). */
export interface ClusterWorkers {
  /** Pings online peers (absent when the deployment has no other node). */
  readonly heartbeat: Worker<PeriodicProgress> | undefined;
  /** Sweeps this node's lock table. */
  readonly lockSweep: Worker<PeriodicProgress>;
  /**
   * Keeps `lock` (cluster probes: `lock_quorum_unavailable`), `peers` (a
   * majority of nodes reachable: `peer_health_unavailable`) and
   * `clusterTimeout` (a peer stopped answering: `cluster_health_timeout`)
   * of the readiness current, every second. Its first round creates the
   * lock clients: start it after start-up's lock-client step.
   */
  readonly healthWatch: Worker<PeriodicProgress> | undefined;
}

/** The readiness flags this module keeps current (structurally `server/readiness.ts`'s `Readiness`). */
export interface LockReadinessTarget {
  update(patch: { lock?: boolean; peers?: boolean; clusterTimeout?: boolean }, notes?: { lock?: string; peers?: string }): void;
}

export interface ClusterNode {
  readonly pools: readonly PoolLayout[];
  /** `host:port` of this node. */
  readonly selfId: string;
  /** True when another node serves some endpoint. */
  readonly multiNode: boolean;
  readonly leader: boolean;
  readonly localHosts: ReadonlySet<string>;
  isLocal(ep: Endpoint): boolean;
  /** Handler for `/svc/rpc/` and `/svc/peer/`. */
  readonly handle: (req: IncomingMessage, res: ServerResponse) => void;
  /** `FormatIO` for `startServer`'s format quorum. */
  formatIO(pool: PoolLayout, local: readonly boolean[]): FormatIO;
  /** This node's opened drives, by endpoint path. */
  readonly localDrives: ReadonlyMap<string, LocalDrive>;
  /** The drive of any endpoint: local, or remote over RPC. */
  driveOf(ep: Endpoint): Drive;
  /** The object layer's `NamespaceLocker` (quorum across every node's locker; its clients are created on first use at the latest). */
  readonly namespaceLocker: DistNamespaceLocker;
  readonly locker: DistLocker;
  readonly peers: ClusterPeers;
  /**
   * The object layer's pool specs (`createObjectLayer({ pools })`) from the
   * format quorum's result (`StorageContext.formats`): drives in slot order.
   */
  poolSpecs(
    formats: readonly { readonly reference?: FormatFile; readonly slots: readonly SlotStatus[] }[],
  ): { cmdline: string; sets: Drive[][]; standardParity: number; rrsParity: number; ids?: readonly (readonly string[])[] }[];
  /** The `startServer` dependencies this module provides, to spread into `ServerDeps`. */
  readonly serverDeps: {
    readonly localHosts: ReadonlySet<string>;
    readonly handlers: { readonly rpc: (req: IncomingMessage, res: ServerResponse) => void; readonly peer: (req: IncomingMessage, res: ServerResponse) => void };
    readonly formatIO: (pool: PoolLayout, local: readonly boolean[]) => FormatIO;
    /** Peers refused for their TLS certificate, for the readiness detail. */
    readonly storageNote: () => string | undefined;
    /** Peers' addresses (those that made an authenticated call) are exempt from the S3 listener's connection caps. */
    readonly exemptAddress: (address: string) => boolean;
    /** Creates the distributed lock clients (start-up calls it after the local-disk check). */
    readonly initLockClients: () => void;
  };
  /**
   * Tells every peer that a bucket's metadata changed (versioning, tags,
   * deletion) so it drops its cached copy now instead of at cache expiry.
   * Failures are logged, never thrown: the peers' cache TTL bounds staleness.
   */
  /** Prepares this node's drives for the object layer (after format quorum; idempotent). */
  initLocalDrives(): Promise<void>;
  notifyBucketMetaChanged(bucket: string): Promise<void>;
  /** Each peer's clock against this node's, as its calls show it. */
  clockSkews(): PeerSkew[];
  /** Adds peer RPC methods (`/svc/peer/v1/<method>`) served by this node, e.g. the admin API's. */
  registerPeerService(service: RpcService): void;
  /** The long-running loops of the plumbing, for the node's supervisor. */
  readonly workers: ClusterWorkers;
  /** Stops the loops (if the supervisor did not), releases held locks, closes the peer clients, flushes the drives. */
  close(): Promise<void>;
}

export async function createClusterNode(o: ClusterNodeOptions): Promise<ClusterNode> {
  const { config, clock, logger } = o;
  // Same layout as the composition root computes; storage-class errors throw
  // here before any disk is touched.
  const pools = buildPoolLayouts(config.volumes, {
    setDriveCount: config.erasureSetDriveCount,
    storageClass: {
      standard: parseParity('SVC_STORAGE_CLASS_STANDARD', config.storageClass.standard),
      rrs: parseParity('SVC_STORAGE_CLASS_RRS', config.storageClass.rrs),
    },
    cwd: config.cwd,
  });
  const port = config.address.port;
  const localHosts = await resolveLocalHosts(pools, config.address.host, port, logger);
  const isLocal = (ep: Endpoint) => isLocalEndpoint(ep, localHosts, port);
  const allEndpoints = pools.flatMap((p) => p.endpoints);
  const selfEp = allEndpoints.find((ep) => ep.kind === 'url' && isLocal(ep));
  const selfId = (selfEp && endpointHostPort(selfEp)) ?? `${config.address.host || hostname()}:${port}`;

  const root = o.rootCredential ?? staticRootCredential(config.credentials);
  const secretOf = (c: RootCredential) => `${c.accessKey}:${c.secretKey}`;
  const auth = new RpcAuth(() => {
    const prev = root.previous();
    return prev === undefined ? [secretOf(root.current())] : [secretOf(root.current()), secretOf(prev)];
  }, clock);
  // The other nodes: their clients, remote drives and lockers (the heartbeat is a worker, started by the supervisor).
  const peers = new ClusterPeers({ pools, isLocal, selfId, auth, clock, logger, rpc: config.rpc, ...(o.tls ? { tls: o.tls } : {}) });
  // Addresses of peers that made an authenticated call: exempt from the S3 listener's connection caps.
  const peerAddresses = new Set<string>();
  // The nodes of this layout: only they may call (a node started with other volume arguments may not).
  const members = new Set([...distinctHosts(allEndpoints), selfId]);
  const skews = new ClockSkews({ clock, logger });
  const rpc = new RpcServer({
    auth,
    logger,
    isMember: (nodeId) => members.has(nodeId),
    onClockSkew: (nodeId, skewMs) => {
      if (members.has(nodeId)) skews.record(nodeId, skewMs);
    },
    onCaller: (nodeId, address, skewMs) => {
      // A peer that calls us is up: its client here stops backing off.
      peers.peers.get(nodeId)?.probeNow();
      const a = normaliseAddress(address);
      if (a !== '') peerAddresses.add(a);
      if (nodeId !== selfId) skews.record(nodeId, skewMs);
    },
  });
  const localDrives = new Map<string, LocalDrive>();
  const initialised = new Set<LocalDrive>();
  const initDrive = async (endpoint: string, drive: LocalDrive): Promise<void> => {
    if (initialised.has(drive)) return;
    try {
      await drive.init();
      initialised.add(drive);
    } catch (err) {
      logger.warn({ event: 'local_drive_init_failed', endpoint, err: String(err) }, 'local drive could not be initialised');
    }
  };
  for (const ep of allEndpoints) {
    if (!isLocal(ep) || localDrives.has(ep.path)) continue;
    const drive = new LocalDrive(ep.path, { endpoint: ep.raw, logger });
    // Only an already formatted drive is prepared now: start-up must report a
    // missing root (VolumeNotFound) or a layout mismatch without having
    // written anything. Fresh drives are prepared after format quorum
    // (`initLocalDrives`). A missing root is served anyway so peers get
    // DiskNotFound rather than a routing error.
    if ((await readFormatFile(ep.path).catch(() => undefined))?.state === 'formatted') await initDrive(ep.raw, drive);
    localDrives.set(ep.path, drive);
    rpc.registerDrive(ep.path, driveRpcService(new TracedDrive(drive)));
  }
  // A grant whose holder's node is offline and stopped refreshing is dropped well before its minute of validity.
  const lockServer = new LockServer({
    clock,
    logger,
    ownerAlive: (owner) => {
      const node = ownerNode(owner) ?? owner;
      return node === selfId || peers.peers.get(node)?.isOnline() !== false;
    },
  });
  rpc.registerPeer(lockRpcService(lockServer));
  rpc.registerPeer({
    reloadBucketMeta: {
      kind: 'unary',
      handle: async (args) => {
        const bucket = (args as { bucket?: unknown } | null)?.bucket;
        if (typeof bucket !== 'string' || bucket.length === 0) throw new SvcError('InvalidArgument', 'reloadBucketMeta needs a bucket');
        const cache = o.bucketMeta?.get();
        cache?.forgetBucket(bucket);
        return cache !== undefined;
      },
    },
  });
  const digest = configDigest(pools, config.storageClass);
  rpc.registerPeer(serverInfoService({ nodeId: selfId, configDigest: digest }));

  // One quorum locker over every node: (bucket, object) locks are then
  // independent of placement, which the object layer decides afterwards.
  // A fresh incarnation per process: lockers drop what a killed predecessor still held (lock-server.ts).
  // Its clients are created by start-up between the local-disk check and format quorum (SPEC's order:
  // `initLockClients`); anything asking for the locker before that creates them then.
  let lockClients: DistLocker | undefined;
  const initLockClients = (): DistLocker =>
    (lockClients ??= new DistLocker({ lockers: peers.lockersFor(allEndpoints, lockServer), owner: `${selfId}#${randomUUID().slice(0, 8)}`, clock, logger }));
  const namespaceLocker = new DistNamespaceLocker({ lockerFor: initLockClients, logger });
  const first = allEndpoints[0];
  const leader = first !== undefined && isLocal(first);
  const multiNode = allEndpoints.some((ep) => !isLocal(ep));

  // Peer agreement is checked at most once per second across format reads.
  let agreement: { at: number; problem: string | undefined } | undefined;
  const disagreement = async (): Promise<string | undefined> => {
    if (agreement === undefined || clock.now() - agreement.at > 1_000) {
      agreement = { at: clock.now(), problem: await peersDisagree(peers, digest) };
      if (agreement.problem !== undefined) logger.info({ event: 'format_waiting_for_peers', reason: agreement.problem }, 'fresh format waits for every peer to agree');
    }
    return agreement.problem;
  };

  const readRemoteFormat = async (ep: Endpoint): Promise<DriveFormatState> => {
    if (ep.kind !== 'url') throw new SvcError('InternalError', 'remote endpoint without URL');
    let bytes: Uint8Array;
    try {
      bytes = await peers.remoteDrive(ep).readAll(SYS_VOL, FORMAT_FILE);
    } catch (err) {
      if (err instanceof SvcError && (err.code === 'FileNotFound' || err.code === 'VolumeNotFound')) {
        // An unformatted remote drive: only the leader may treat it as fresh,
        // and only while every peer agrees on the layout.
        if (!leader) return { state: 'offline', reason: `${ep.raw}: unformatted; waiting for ${first?.raw ?? 'the first node'} to format the cluster` };
        const problem = await disagreement();
        if (problem !== undefined) return { state: 'offline', reason: `${ep.raw}: unformatted; ${problem}` };
        return { state: 'unformatted' };
      }
      return { state: 'offline', reason: `${ep.raw}: ${err instanceof Error ? err.message : String(err)}` };
    }
    try {
      return { state: 'formatted', format: validateFormat(JSON.parse(Buffer.from(bytes).toString('utf8')), `${ep.raw} format.json`) };
    } catch (err) {
      return { state: 'corrupt', reason: err instanceof Error ? err.message : String(err) };
    }
  };

  const readLocalFormat = async (ep: Endpoint): Promise<DriveFormatState> => {
    const st = await readFormatFile(ep.path);
    // A non-leader never reports a fresh local drive while the cluster has
    // peers: the leader formats every drive at once.
    if (st.state === 'unformatted' && multiNode && !leader) {
      return { state: 'offline', reason: `${ep.raw}: unformatted; waiting for ${first?.raw ?? 'the first node'} to format the cluster` };
    }
    return st;
  };

  const readiness = o.readiness;
  const healthWatch =
    readiness === undefined
      ? undefined
      : periodicWorker({
          name: 'cluster-health',
          everyMs: 1_000,
          clock,
          logger,
          tick: () => {
            const ok = initLockClients().quorumAvailable(true);
            readiness.update({ lock: ok }, { lock: ok ? 'lock quorum available' : 'lock RPC majority unreachable' });
            // Peer health: a majority of the nodes reachable; a peer that stopped answering is the cluster probes' timeout.
            if (multiNode) {
              const h = peers.health();
              readiness.update({ peers: h.healthy, clusterTimeout: h.timedOut.length > 0 }, { peers: h.detail });
            }
          },
        });
  const workers: ClusterWorkers = { heartbeat: peers.peers.size > 0 ? peers.heartbeat : undefined, lockSweep: lockServer.sweeper, healthWatch };
  logger.info(
    { event: 'cluster_node_created', self: selfId, nodes: distinctHosts(allEndpoints), leader, multiNode, localDrives: [...localDrives.keys()] },
    'internode RPC and peers ready',
  );

  const formatIO = (pool: PoolLayout): FormatIO => ({
    readFormat: (i) => {
      const ep = pool.endpoints[i]!;
      return isLocal(ep) ? readLocalFormat(ep) : readRemoteFormat(ep);
    },
    writeFormat: async (i, f) => {
      const ep = pool.endpoints[i]!;
      if (isLocal(ep)) {
        await writeFormatFile(ep.path, f);
        return;
      }
      if (ep.kind !== 'url') throw new SvcError('InternalError', 'remote endpoint without URL');
      validateFormat(f, 'format to write');
      // writeAll publishes atomically on the peer (tmp, fsync, rename, dir fsync).
      await peers.remoteDrive(ep).writeAll(SYS_VOL, FORMAT_FILE, Buffer.from(`${JSON.stringify(f, null, 2)}\n`));
    },
  });
  // Every drive the object layer uses reports its I/O (`svc:drive:io`); one wrapper per endpoint.
  const traced = new Map<string, TracedDrive>();
  const driveOf = (ep: Endpoint): Drive => {
    let drive: Drive;
    if (isLocal(ep)) {
      const d = localDrives.get(ep.path);
      if (d === undefined) throw new SvcError('InternalError', `local drive ${ep.raw} was not opened`);
      drive = d;
    } else {
      if (ep.kind !== 'url') throw new SvcError('InternalError', 'remote endpoint without URL');
      drive = peers.remoteDrive(ep);
    }
    let t = traced.get(ep.raw);
    if (t === undefined || t.inner !== drive) {
      t = new TracedDrive(drive);
      traced.set(ep.raw, t);
    }
    return t;
  };

  return {
    pools,
    selfId,
    multiNode,
    leader,
    localHosts,
    isLocal,
    handle: rpc.handle,
    formatIO,
    localDrives,
    driveOf,
    initLocalDrives: async () => {
      await Promise.all([...localDrives.values()].map((d) => initDrive(d.endpoint, d)));
    },
    poolSpecs: (formats) =>
      pools.map((p, i) => ({
        cmdline: p.cmdline,
        sets: placeDrives(p, formats[i]?.slots ?? [], driveOf),
        standardParity: p.parity.standard,
        rrsParity: p.parity.rrs,
        // Slot identity: a drive is used only while its format names its slot's id.
        ...(formats[i]?.reference ? { ids: formats[i].reference.erasure.sets } : {}),
      })),
    serverDeps: {
      localHosts,
      handlers: { rpc: rpc.handle, peer: rpc.handle },
      formatIO,
      storageNote: () => peers.tlsNote(),
      exemptAddress: (address) => peerAddresses.has(address),
      initLockClients: () => {
        initLockClients();
      },
    },
    namespaceLocker,
    get locker() {
      return initLockClients();
    },
    peers,
    notifyBucketMetaChanged: async (bucket) => {
      for (const r of await peers.broadcast('reloadBucketMeta', { bucket })) {
        if (r.error) logger.warn({ event: 'bucket_meta_signal_failed', bucket, peer: r.peer, err: r.error.message }, 'peer not told about a bucket metadata change');
      }
    },
    registerPeerService: (service) => rpc.registerPeer(service),
    clockSkews: () => skews.list(),
    workers,
    close: async () => {
      // Normally stopped already, in reverse start order, by the node's supervisor.
      await healthWatch?.stop();
      await lockServer.sweeper.stop();
      // Releases reach the other lockers before the clients to them close.
      await lockClients?.close();
      await peers.close();
      await Promise.all([...localDrives.values()].map((d) => d.flush().catch(() => undefined)));
    },
  };
}
