/**
 * Cluster bootstrap in one process: four "nodes", each a real HTTP listener on
 * its own loopback address (127.0.0.1…4, one port) with its own RPC server,
 * lock server and two LocalDrives on temp dirs. Drives the format quorum and
 * the readiness state machine through node loss and recovery.
 */
import { once } from 'node:events';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { ClusterBootstrap, type ClusterPool } from '../src/cluster/bootstrap.ts';
import { configDigest, serverInfoService } from '../src/cluster/cluster-format.ts';
import { DistLocker } from '../src/cluster/dist-lock.ts';
import { driveRpcService } from '../src/cluster/drive-rpc-service.ts';
import { LockServer, lockRpcService } from '../src/cluster/lock-server.ts';
import { ClusterPeers } from '../src/cluster/peers.ts';
import { RpcAuth } from '../src/cluster/rpc-auth.ts';
import { RpcServer } from '../src/cluster/rpc-server.ts';
import { Readiness } from '../src/server/readiness.ts';
import { LocalDrive } from '../src/storage/local-drive.ts';
import { endpointHostPort } from '../src/topology/endpoint.ts';
import { buildPoolLayouts } from '../src/topology/pool-layout.ts';
import { AUTO_PARITY } from '../src/topology/storage-class.ts';
import { systemClock } from '../src/util/clock.ts';
import { createLogger, silentLogger } from '../src/util/logger.ts';

const base = await mkdtemp(join(tmpdir(), 'svc-cluster-boot-'));
afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

async function freePort(): Promise<number> {
  const s = createServer();
  s.listen(0, '127.0.0.1');
  await once(s, 'listening');
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

async function until(cond: () => boolean, ms: number, state?: () => unknown): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`condition not reached within ${ms} ms${state ? `: ${JSON.stringify(state())}` : ''}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

interface TestNode {
  host: string;
  readiness: Readiness;
  bootstrap: ClusterBootstrap;
  pools?: readonly ClusterPool[];
  start(): Promise<void>;
  stop(): Promise<void>;
  running: Promise<void> | undefined;
  /** Why `running` rejected (a permanent start-up failure), if it did. */
  failure?: string;
}

/** Folder of node k for drive path `p`. */
function rootOf(k: number, p: string): string {
  return join(base, `n${k}`, p);
}

/** Folder of endpoint `raw` (`http://127.0.0.K:port/path`). */
function folderOf(raw: string): string {
  const u = new URL(raw);
  return rootOf(Number(u.hostname.split('.')[3]), u.pathname);
}

async function makeCluster(n: number, drivesPerNode: number) {
  const port = await freePort();
  // Same drive paths on every node, as in production; each in-process node
  // maps them onto its own folder (base/n<k>/...), as a mount would.
  const volume = `http://127.0.0.{1...${n}}:${port}/data/d{1...${drivesPerNode}}`;
  const pools = buildPoolLayouts([volume], { storageClass: { standard: AUTO_PARITY, rrs: AUTO_PARITY }, cwd: base });
  const digest = configDigest(pools, {});
  const auth = new RpcAuth('root:secret', systemClock);
  const nodes: TestNode[] = [];
  for (let k = 1; k <= n; k++) {
    const host = `127.0.0.${k}`;
    const self = `${host}:${port}`;
    // Endpoints on this host whose path belongs to this node's folder are local.
    const isLocal = (ep: (typeof pools)[0]['endpoints'][0]) => endpointHostPort(ep) === self;
    const readiness = new Readiness();
    const lockServer = new LockServer({ clock: systemClock, logger: silentLogger });
    let server: Server | undefined;
    let peers: ClusterPeers | undefined;
    const node: TestNode = {
      host,
      readiness,
      bootstrap: undefined as unknown as ClusterBootstrap,
      running: undefined,
      async start() {
        const rpc = new RpcServer({ auth, logger: silentLogger });
        const local = new Map<string, LocalDrive>();
        for (const ep of pools[0]!.endpoints) {
          if (!isLocal(ep)) continue;
          const root = rootOf(k, ep.path);
          await mkdir(root, { recursive: true });
          const d = new LocalDrive(root, { endpoint: ep.raw });
          await d.init();
          local.set(ep.path, d);
          rpc.registerDrive(ep.path, driveRpcService(d));
        }
        rpc.registerPeer(lockRpcService(lockServer));
        rpc.registerPeer(serverInfoService({ nodeId: self, configDigest: digest }));
        server = createServer(rpc.handle);
        server.listen(port, host);
        await once(server, 'listening');
        peers = new ClusterPeers({ pools, isLocal, selfId: self, auth, clock: systemClock, logger: silentLogger, heartbeatMs: 200, probeBaseMs: 50, probeMaxMs: 200 });
        const locker = new DistLocker({ lockers: peers.lockersFor(pools[0]!.endpoints, lockServer), owner: self, clock: systemClock, logger: silentLogger });
        node.bootstrap = new ClusterBootstrap({
          pools,
          peers,
          leader: k === 1,
          digest,
          localDrive: (ep) => local.get(ep.path),
          readiness,
          loadIam: async () => undefined,
          finalize: async (p) => {
            node.pools = p;
          },
          lockers: [locker],
          clock: systemClock,
          logger: silentLogger,
          maxWaitSecs: 120,
          retryMs: 50,
          watchMs: 50,
        });
        node.running = node.bootstrap.run();
        node.running.catch((err: unknown) => {
          node.failure = err instanceof Error ? err.message : String(err);
        });
      },
      async stop() {
        node.bootstrap.stop();
        await peers?.close();
        server?.closeAllConnections();
        await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
      },
    };
    nodes.push(node);
  }
  return { nodes, pools, port };
}

describe('cluster bootstrap over real RPC (4 nodes × 2 drives, in-process)', () => {
  it('waits degraded for storage quorum, formats once, becomes ready, and follows node loss', async () => {
    const { nodes, pools } = await makeCluster(4, 2);
    const [n1, n2, n3, n4] = nodes as [TestNode, TestNode, TestNode, TestNode];
    try {
      await n1.start();
      await new Promise((r) => setTimeout(r, 400));
      let r = n1.readiness.report();
      expect(r.ready).toBe(false);
      expect(r.pending).toBe('storage_quorum');
      expect(r.degradedReasons).toContain('storage_quorum_unavailable');
      expect(n1.bootstrap.stage).toBe('storage_quorum');
      // Nothing formatted while peers are missing.
      await expect(readFile(join(folderOf(pools[0]!.endpoints[0]!.raw), '.svc.sys', 'format.json'))).rejects.toThrow();

      await Promise.all([n2.start(), n3.start(), n4.start()]);
      await until(
        () => nodes.every((n) => n.readiness.ready),
        30_000,
        () => nodes.map((n) => ({ stage: n.bootstrap.stage, failure: n.failure, ...n.readiness.report('cluster') })),
      );
      expect(nodes.map((n) => n.failure)).toEqual([undefined, undefined, undefined, undefined]);
      r = n1.readiness.report();
      expect(r).toMatchObject({ ready: true, status: 'ok', degradedReasons: [] });

      const ids = new Set<string>();
      for (const ep of pools[0]!.endpoints) {
        const f = JSON.parse(await readFile(join(folderOf(ep.raw), '.svc.sys', 'format.json'), 'utf8'));
        ids.add(f.id);
      }
      expect(ids.size).toBe(1);
      expect(nodes.every((n) => n.pools?.[0]?.deploymentId === [...ids][0])).toBe(true);
      expect(n3.pools![0]!.sets[0]!.map((d) => d.endpoint)).toEqual(pools[0]!.endpoints.map((e) => e.raw));

      // One node down: 6 of 8 drives, still ready (EC:4 on 8 drives: read 4, write 5).
      await n4.stop();
      await until(() => !n1.pools![0]!.sets[0]![7]!.isOnline(), 5_000);
      await new Promise((r) => setTimeout(r, 150));
      expect(n1.readiness.ready).toBe(true);
      expect(n1.readiness.report('cluster').ready).toBe(true);

      // Two down: reads have quorum, writes and the write-lock majority do not.
      await n3.stop();
      await until(() => n1.readiness.report('cluster').degradedReasons.length > 0, 5_000);
      expect(n1.readiness.ready).toBe(true);
      const cluster = n1.readiness.report('cluster');
      expect(cluster.details.storage.ready).toBe(false);
      expect(cluster.degradedReasons).toContain('storage_and_lock_unavailable');

      // Three down: below read quorum → degraded, pending storage_quorum.
      await n2.stop();
      await until(() => !n1.readiness.ready, 5_000);
      r = n1.readiness.report();
      expect(r.pending).toBe('storage_quorum');
      expect(r.degradedReasons).toEqual(['storage_quorum_unavailable']);

      // They come back: ready again without restarting node 1.
      await Promise.all([n2.start(), n3.start(), n4.start()]);
      await until(
        () => nodes.every((n) => n.readiness.ready),
        30_000,
        () => nodes.map((n) => ({ stage: n.bootstrap.stage, failure: n.failure, ...n.readiness.report('cluster') })),
      );
      expect(nodes.map((n) => n.failure)).toEqual([undefined, undefined, undefined, undefined]);
      await until(() => n1.readiness.report('cluster').ready, 5_000);
      expect(n1.readiness.report('cluster').degradedReasons).toEqual([]);
    } finally {
      for (const n of nodes) await n.stop().catch(() => undefined);
    }
  }, 60_000);

  it('retries IAM with iam_bootstrap_retry_failed (WARN rising to ERROR, with a hint) and still gets ready', async () => {
    const port = await freePort();
    const pools = buildPoolLayouts([`http://127.0.0.1:${port}${base}/iam/d{1...4}`], { storageClass: { standard: AUTO_PARITY, rrs: AUTO_PARITY }, cwd: base });
    const drives = new Map<string, LocalDrive>();
    for (const ep of pools[0]!.endpoints) {
      await mkdir(ep.path, { recursive: true });
      const d = new LocalDrive(ep.path, { endpoint: ep.raw });
      await d.init();
      drives.set(ep.path, d);
    }
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk, _enc, cb) {
        for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l) as Record<string, unknown>);
        cb();
      },
    });
    const logger = createLogger('info', sink);
    const auth = new RpcAuth('root:secret', systemClock);
    const peers = new ClusterPeers({ pools, isLocal: () => true, selfId: `127.0.0.1:${port}`, auth, clock: systemClock, logger });
    const readiness = new Readiness();
    let attempts = 0;
    const boot = new ClusterBootstrap({
      pools,
      peers,
      leader: true,
      digest: configDigest(pools, {}),
      localDrive: (ep) => drives.get(ep.path),
      readiness,
      loadIam: async () => {
        attempts++;
        if (attempts <= 6) throw new Error('IAM store not readable yet');
      },
      finalize: async () => undefined,
      clock: systemClock,
      logger,
      maxWaitSecs: 120,
      retryMs: 10,
      iamErrorAfter: 5,
      iamRetryBaseMs: 1,
    });
    const running = boot.run();
    await until(() => attempts >= 2, 5_000);
    expect(readiness.report().pending).toBe('iam');
    expect(readiness.report().degradedReasons).toEqual(['iam_not_ready']);
    await running;
    expect(readiness.ready).toBe(true);
    const retries = lines.filter((l) => l['event'] === 'iam_bootstrap_retry_failed');
    expect(retries.length).toBe(6);
    expect(retries.map((l) => l['level'])).toEqual(['warn', 'warn', 'warn', 'warn', 'error', 'error']);
    expect(retries.every((l) => typeof l['hint'] === 'string' && (l['hint'] as string).length > 0)).toBe(true);
    boot.stop();
    await peers.close();
  });
});
