/**
 * The other nodes of the cluster, as seen from this one: one `PeerClient` per
 * distinct `host:port` among the URL endpoints of every pool, the remote
 * drives behind them, and the lockers of a set. A heartbeat pings online peers
 * so a node that died without traffic is noticed (and counted out of quorum)
 * within a few seconds (`heartbeat`, a Worker the node's supervisor runs:
 * `peer-heartbeat`); offline peers are probed by their own client, a loop
 * that lives and dies with that client's connection.
 */
import { type Endpoint, endpointHostPort, type PoolLayout, type UrlEndpoint } from 'svc-topology';
import type { ClientTrust } from '../tls/trust.ts';
import type { Clock } from '../util/clock.ts';
import { SvcError } from '../util/errors.ts';
import type { Logger } from '../util/logger.ts';
import type { RpcLimits } from '../util/net-config.ts';
import { type PeriodicProgress, periodicWorker, type Worker } from '../util/worker.ts';
import type { Locker, LockServer } from './lock-server.ts';
import { RemoteDrive } from './remote-drive.ts';
import { RemoteLocker } from './remote-locker.ts';
import type { RpcAuth } from './rpc-auth.ts';
import { PeerClient } from './rpc-client.ts';
import { peerPath } from './rpc-wire.ts';

export const HEARTBEAT_INTERVAL_MS = 2_000;
/** Longest a heartbeat may wait for an answer before the peer counts as unreachable. */
export const HEARTBEAT_TIMEOUT_MS = 10_000;

export interface ClusterPeersOptions {
  pools: readonly PoolLayout[];
  /** True for endpoints served by this process. */
  isLocal: (ep: Endpoint) => boolean;
  /** This node's `host:port` (its id in tokens and lock grants). */
  selfId: string;
  auth: RpcAuth;
  clock: Clock;
  logger: Logger;
  heartbeatMs?: number;
  /** Reconnect-probe delays of the peer clients (defaults 250 ms doubling to 2 s). */
  probeBaseMs?: number;
  probeMaxMs?: number;
  /** Trust for https:// peers (`tls/trust.ts`); without it, Node's default roots. */
  tls?: ClientTrust;
  /** Call deadlines and the responsiveness watch (`util/net-config.ts`); without it, the clients' defaults. */
  rpc?: RpcLimits;
}

/** Distinct `host:port` of the URL endpoints of `endpoints`, in first-seen order. */
export function distinctHosts(endpoints: readonly Endpoint[]): string[] {
  const out: string[] = [];
  for (const ep of endpoints) {
    const hp = endpointHostPort(ep);
    if (hp !== undefined && !out.includes(hp)) out.push(hp);
  }
  return out;
}

export class ClusterPeers {
  readonly selfId: string;
  /** Every node of the cluster (`host:port`), this one included, in endpoint order. */
  readonly nodes: readonly string[];
  readonly #isLocal: (ep: Endpoint) => boolean;
  readonly #peers = new Map<string, PeerClient>();
  readonly #drives = new Map<string, RemoteDrive>();
  readonly #lockers = new Map<string, RemoteLocker>();
  readonly #logger: Logger;
  /** Pings every online peer each `heartbeatMs` (not awaited: a hung peer does not delay the others). */
  readonly heartbeat: Worker<PeriodicProgress>;

  constructor(opts: ClusterPeersOptions) {
    this.selfId = opts.selfId;
    this.#isLocal = opts.isLocal;
    this.#logger = opts.logger;
    const inFlight = new Set<PeerClient>();
    this.heartbeat = periodicWorker({
      name: 'peer-heartbeat',
      everyMs: opts.heartbeatMs ?? HEARTBEAT_INTERVAL_MS,
      atStart: false,
      clock: opts.clock,
      logger: opts.logger,
      tick: () => {
        for (const p of this.#peers.values()) {
          if (!p.isOnline() || inFlight.has(p)) continue;
          inFlight.add(p);
          // A refused or reset connection marks the peer offline inside the client
          // at once; the generous timeout only catches a hung or unreachable peer,
          // so a busy event loop over there is not mistaken for a dead node.
          p.rpcCall(peerPath('health'), undefined, { control: true, timeoutMs: HEARTBEAT_TIMEOUT_MS })
            .catch((err: unknown) => {
              this.#logger.debug({ event: 'peer_heartbeat_failed', peer: p.origin, err: String(err) }, 'peer heartbeat failed');
            })
            .finally(() => inFlight.delete(p));
        }
      },
    });
    const all = opts.pools.flatMap((p) => p.endpoints);
    this.nodes = distinctHosts(all);
    for (const ep of all) {
      if (ep.kind !== 'url' || opts.isLocal(ep)) continue;
      const hp = endpointHostPort(ep)!;
      if (this.#peers.has(hp)) continue;
      this.#peers.set(
        hp,
        new PeerClient({
          origin: `${ep.scheme}://${hp}`,
          nodeId: opts.selfId,
          auth: opts.auth,
          clock: opts.clock,
          logger: opts.logger,
          ...(opts.probeBaseMs !== undefined ? { probeBaseMs: opts.probeBaseMs } : {}),
          ...(opts.probeMaxMs !== undefined ? { probeMaxMs: opts.probeMaxMs } : {}),
          ...(opts.tls !== undefined ? { tls: opts.tls } : {}),
          ...(opts.rpc !== undefined
            ? {
                headersTimeoutMs: opts.rpc.callTimeoutMs,
                bodyTimeoutMs: opts.rpc.streamTimeoutMs,
                uploadStallMs: opts.rpc.streamTimeoutMs,
                stallCheckMs: opts.rpc.stallCheckMs,
                pingTimeoutMs: opts.rpc.pingTimeoutMs,
              }
            : {}),
        }),
      );
    }
  }

  /** Remote peers (`host:port` → client). */
  get peers(): ReadonlyMap<string, PeerClient> {
    return this.#peers;
  }

  /**
   * Peers whose certificate this node refused (or whose TLS handshake
   * failed), named with the reason; undefined when there are none.
   */
  tlsNote(): string | undefined {
    const refused = [...this.#peers.values()].flatMap((p) => {
      const r = p.tlsRefusal();
      return r === undefined ? [] : [`${p.origin} refused: ${r}`];
    });
    return refused.length === 0 ? undefined : `TLS: ${refused.join('; ')}`;
  }

  /**
   * Peer health (readiness, SPEC "peer_health_unavailable"): this node
   * reaches a majority of the cluster's nodes, itself included, so it is
   * not cut off in a minority. `timedOut`: peers that stopped answering
   * (their health ping timed out) rather than refusing the connection
   * (`cluster_health_timeout` on the cluster probes).
   */
  health(): { healthy: boolean; online: number; nodes: number; timedOut: string[]; unreachable: string[]; detail: string } {
    const nodes = this.nodes.length;
    const timedOut: string[] = [];
    const unreachable: string[] = [];
    for (const [hp, p] of this.#peers) {
      const why = p.offlineReason();
      if (why === 'unresponsive') timedOut.push(hp);
      else if (why === 'unreachable') unreachable.push(hp);
    }
    const online = nodes - timedOut.length - unreachable.length;
    const healthy = online >= Math.floor(nodes / 2) + 1;
    const away = [...unreachable.map((h) => `${h} unreachable`), ...timedOut.map((h) => `${h} not answering`)];
    const detail = `${online} of ${nodes} nodes reachable${away.length > 0 ? ` (${away.join(', ')})` : ''}${healthy ? '' : `; a majority (${Math.floor(nodes / 2) + 1}) is needed`}`;
    return { healthy, online, nodes, timedOut, unreachable, detail };
  }

  /** Number of nodes currently reachable, this one included. */
  onlineNodes(): number {
    return this.nodes.length - [...this.#peers.values()].filter((p) => !p.isOnline()).length;
  }

  peer(hostPort: string): PeerClient {
    const p = this.#peers.get(hostPort);
    if (p === undefined) throw new SvcError('InternalError', `${hostPort} is not a peer of this node`);
    return p;
  }

  /** The `RemoteDrive` of a remote URL endpoint (one instance per endpoint). */
  remoteDrive(ep: UrlEndpoint): RemoteDrive {
    const hp = endpointHostPort(ep)!;
    const key = `${hp}${ep.path}`;
    let d = this.#drives.get(key);
    if (d === undefined) {
      d = new RemoteDrive(this.peer(hp), ep.path, ep.raw);
      this.#drives.set(key, d);
    }
    return d;
  }

  /** One locker per distinct host of `endpoints`: `local` for this node, RPC for the others. */
  lockersFor(endpoints: readonly Endpoint[], local: LockServer): Locker[] {
    const hosts = distinctHosts(endpoints);
    if (hosts.length === 0) return [local];
    return hosts.map((hp) => {
      if (!this.#peers.has(hp)) return local;
      let l = this.#lockers.get(hp);
      if (l === undefined) {
        l = new RemoteLocker(this.peer(hp));
        this.#lockers.set(hp, l);
      }
      return l;
    });
  }

  /**
   * Calls peer method `method` on every peer at once (control pool). Never
   * throws: each peer's failure is returned (offline peers fail fast).
   */
  async broadcast(method: string, args: unknown, timeoutMs = 2_000): Promise<{ peer: string; error?: SvcError }[]> {
    return Promise.all(
      [...this.#peers.entries()].map(async ([hp, p]) => {
        try {
          await p.rpcCall(peerPath(method), args, { control: true, timeoutMs });
          return { peer: hp };
        } catch (err) {
          return { peer: hp, error: err instanceof SvcError ? err : new SvcError('InternalError', String(err)) };
        }
      }),
    );
  }

  /** Closes every peer client (the heartbeat is stopped first, by the supervisor or here). */
  async close(): Promise<void> {
    await this.heartbeat.stop();
    await Promise.all([...this.#peers.values()].map((p) => p.close()));
  }

  /** True when `ep` is served by this node. */
  isLocal(ep: Endpoint): boolean {
    return this.#isLocal(ep);
  }
}
