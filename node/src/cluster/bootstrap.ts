/**
 * Cluster start-up and readiness (SPEC "Node readiness"): a node never exits
 * for lack of peers. It runs, in the background:
 *
 *   pending storage_quorum   format quorum over all drives of all nodes
 *                            (`cluster-format.ts`) and read quorum in every set
 *   pending iam              IAM load, retried (`iam_bootstrap_retry_failed`,
 *                            WARN rising to ERROR, with a `hint`)
 *   pending startup_finalization   the caller's finalize step (object layer)
 *   ready
 *
 * then keeps watching: a ready node that loses read quorum in a set goes back
 * to degraded (pending storage_quorum) and returns to ready by itself. Past
 * `SVC_STARTUP_READINESS_MAX_WAIT_SECS` it logs that it continues degraded and
 * keeps recovering in the background. All timing runs on the injected clock.
 *
 * The readiness target is structurally the foundation's `Readiness`
 * (`server/readiness.ts`), so this layer does not import the server layer.
 */
import type { Drive } from '../storage/drive.ts';
import type { PoolFormatResult } from '../storage/format.ts';
import type { Endpoint } from '../topology/endpoint.ts';
import type { PoolLayout } from '../topology/pool-layout.ts';
import { quorums, readinessParity } from '../topology/storage-class.ts';
import type { Clock } from '../util/clock.ts';
import { SvcError } from '../util/errors.ts';
import type { Logger } from '../util/logger.ts';
import { clusterFormatRound } from './cluster-format.ts';
import type { DistLocker } from './dist-lock.ts';
import type { ClusterPeers } from './peers.ts';
import { placeDrives } from './set-drives.ts';

/** The subset of the foundation's `Readiness` this module drives. */
export interface ReadinessTarget {
  update(
    patch: Partial<{ storageRead: boolean; storageWrite: boolean; iam: boolean; lock: boolean; finalized: boolean }>,
    notes?: Partial<Record<'storage' | 'iam' | 'lock', string>>,
  ): void;
}

/** A formatted pool: the drives of each set in slot order. */
export interface ClusterPool {
  readonly layout: PoolLayout;
  readonly deploymentId: string;
  /** `sets[s][slot]`: the drive at that slot (local or remote). */
  readonly sets: readonly (readonly Drive[])[];
}

export interface ClusterBootstrapOptions {
  pools: readonly PoolLayout[];
  peers: ClusterPeers;
  /** This node may format a fresh cluster (it owns the first endpoint of the first pool). */
  leader: boolean;
  /** `configDigest` of this node's settings. */
  digest: string;
  /** The (initialised) local drive of a local endpoint; undefined when it could not be opened. */
  localDrive: (ep: Endpoint) => Drive | undefined;
  readiness: ReadinessTarget;
  /** Loads the IAM cache; throws while it cannot (e.g. no storage quorum for `.svc.sys`). */
  loadIam: () => Promise<void>;
  /** Last start-up step (build the object layer, install the S3 handler). */
  finalize: (pools: readonly ClusterPool[]) => Promise<void>;
  /** Lockers whose quorum the cluster probes report (one per set, or one cluster-wide). */
  lockers?: readonly DistLocker[];
  clock: Clock;
  logger: Logger;
  /** SVC_STARTUP_READINESS_MAX_WAIT_SECS. */
  maxWaitSecs: number;
  /** Delay between format-quorum rounds (default 500 ms). */
  retryMs?: number;
  /** Interval of the quorum watch once ready (default 1 s). */
  watchMs?: number;
  /** Consecutive IAM failures after which the retry log rises to ERROR (default 5). */
  iamErrorAfter?: number;
  /** First IAM retry delay, doubled per failure up to 5 s (default 250 ms). */
  iamRetryBaseMs?: number;
}

export type BootstrapStage = 'storage_quorum' | 'iam' | 'startup_finalization' | 'ready' | 'stopped';

export class ClusterBootstrap {
  readonly #o: ClusterBootstrapOptions;
  #stage: BootstrapStage = 'storage_quorum';
  #pools: ClusterPool[] | undefined;
  #stopWatch: (() => void) | undefined;
  readonly #stop = new AbortController();
  #degradedLogged = false;

  constructor(opts: ClusterBootstrapOptions) {
    this.#o = opts;
  }

  get stage(): BootstrapStage {
    return this.#stage;
  }

  /** The formatted pools, once storage quorum was reached. */
  get pools(): readonly ClusterPool[] | undefined {
    return this.#pools;
  }

  /**
   * Runs start-up to ready. Resolves when ready; rejects only on a permanent
   * failure (PoolTopologyMismatch, UnsupportedSnsdExpansion, CorruptedFormat)
   * or when stopped. Never rejects because peers are missing.
   */
  async run(): Promise<void> {
    const o = this.#o;
    const started = o.clock.now();
    o.readiness.update({ storageRead: false, storageWrite: false, iam: false, finalized: false }, { storage: 'waiting for format and read quorum' });
    o.peers.start();

    // ---- storage_quorum
    let lastReason = '';
    for (;;) {
      this.#checkStopped();
      const formats = await clusterFormatRound({ pools: o.pools, peers: o.peers, driveOf: (ep) => this.#driveOrUndefined(ep), leader: o.leader, digest: o.digest });
      const waiting = formats.filter((f): f is { action: 'wait'; reason: string } => f.action === 'wait');
      if (waiting.length === 0) {
        const pools = this.#buildPools(formats as Extract<PoolFormatResult, { action: 'use' }>[]);
        const q = this.#quorumState(pools);
        if (q.read) {
          this.#pools = pools;
          o.readiness.update({ storageRead: true, storageWrite: q.write }, { storage: q.detail });
          o.logger.info({ event: 'startup_storage_quorum', formatted: formats.some((f) => f.action === 'use' && f.formatted) }, 'storage quorum reached');
          break;
        }
        lastReason = this.#log(lastReason, q.detail);
      } else {
        lastReason = this.#log(lastReason, waiting.map((w) => w.reason).join('; '));
      }
      this.#checkDeadline(started);
      await this.#sleep(o.retryMs ?? 500);
    }

    // ---- iam
    this.#stage = 'iam';
    let failures = 0;
    for (;;) {
      this.#checkStopped();
      try {
        await o.loadIam();
        o.readiness.update({ iam: true }, { iam: 'loaded' });
        break;
      } catch (err) {
        failures++;
        const level = failures >= (o.iamErrorAfter ?? 5) ? 'error' : 'warn';
        o.logger[level](
          {
            event: 'iam_bootstrap_retry_failed',
            attempt: failures,
            err: err instanceof Error ? err.message : String(err),
            hint: 'IAM data lives on the cluster drives: check that enough nodes are online and reachable on the S3 port and share the same root credentials',
          },
          'IAM bootstrap failed; retrying',
        );
        this.#checkDeadline(started);
        await this.#sleep(Math.min(5_000, (o.iamRetryBaseMs ?? 250) * 2 ** Math.min(failures - 1, 5)));
      }
    }

    // ---- startup_finalization
    this.#stage = 'startup_finalization';
    await o.finalize(this.#pools!);
    this.#stage = 'ready';
    o.readiness.update({ finalized: true });
    this.#updateLock();
    o.logger.info({ event: 'startup_ready', waitedMs: o.clock.now() - started }, 'node is ready');
    this.#watch();
  }

  /** Stops the background loops (shutdown). */
  stop(): void {
    this.#stage = 'stopped';
    this.#stop.abort(new SvcError('ServiceUnavailable', 'start-up stopped'));
    this.#stopWatch?.();
    this.#stopWatch = undefined;
  }

  /** Re-evaluates storage and lock quorum (also run periodically once ready). */
  evaluate(): void {
    if (this.#pools === undefined) return;
    const q = this.#quorumState(this.#pools);
    this.#o.readiness.update({ storageRead: q.read, storageWrite: q.write }, { storage: q.detail });
    this.#updateLock();
  }

  #watch(): void {
    let wasRead = true;
    this.#stopWatch = this.#o.clock.every(this.#o.watchMs ?? 1_000, () => {
      if (this.#pools === undefined) return;
      const q = this.#quorumState(this.#pools);
      if (q.read !== wasRead) {
        this.#o.logger[q.read ? 'info' : 'warn'](
          { event: q.read ? 'storage_quorum_restored' : 'storage_quorum_lost', detail: q.detail },
          q.read ? 'storage quorum restored' : 'storage quorum lost; node is degraded',
        );
        wasRead = q.read;
      }
      this.#o.readiness.update({ storageRead: q.read, storageWrite: q.write }, { storage: q.detail });
      this.#updateLock();
    });
  }

  #updateLock(): void {
    const lockers = this.#o.lockers ?? [];
    const ok = lockers.every((l) => l.quorumAvailable(true));
    this.#o.readiness.update({ lock: ok }, { lock: ok ? 'lock quorum available' : 'lock RPC majority unreachable' });
  }

  #buildPools(formats: readonly Extract<PoolFormatResult, { action: 'use' }>[]): ClusterPool[] {
    return this.#o.pools.map((layout, p) => {
      const f = formats[p]!;
      return { layout, deploymentId: f.reference.id, sets: placeDrives(layout, f.slots, (ep) => this.#drive(ep)) };
    });
  }

  #driveOrUndefined(ep: Endpoint): Drive | undefined {
    if (ep.kind === 'path' || this.#o.peers.isLocal(ep)) return this.#o.localDrive(ep);
    return this.#o.peers.remoteDrive(ep);
  }

  #drive(ep: Endpoint): Drive {
    if (ep.kind === 'path' || this.#o.peers.isLocal(ep)) {
      const d = this.#o.localDrive(ep);
      return d ?? offlineDrive(ep.raw);
    }
    return this.#o.peers.remoteDrive(ep);
  }

  #quorumState(pools: readonly ClusterPool[]): { read: boolean; write: boolean; detail: string } {
    let read = true;
    let write = true;
    const short: string[] = [];
    for (const pool of pools) {
      const parity = pool.layout.parity.standard;
      pool.sets.forEach((set, s) => {
        const online = set.filter((d) => d.isOnline()).length;
        const q = quorums(set.length, readinessParity(set.length, parity));
        if (online < q.read) {
          read = false;
          short.push(`pool ${pool.layout.index} set ${s}: ${online}/${set.length} drives online, read quorum ${q.read}`);
        }
        if (online < q.write) write = false;
      });
    }
    return { read, write, detail: short.length === 0 ? 'read quorum in every set' : short.join('; ') };
  }

  #log(last: string, reason: string): string {
    if (reason !== last) {
      this.#o.logger.warn({ event: 'startup_waiting_for_quorum', reason }, 'waiting for storage quorum');
      // The readiness report says what start-up waits for, not only that it waits.
      this.#o.readiness.update({}, { storage: reason });
    }
    return reason;
  }

  #checkDeadline(started: number): void {
    if (this.#degradedLogged) return;
    if (this.#o.clock.now() - started >= this.#o.maxWaitSecs * 1_000) {
      this.#degradedLogged = true;
      this.#o.logger.warn(
        { event: 'startup_readiness_wait_exceeded', waitedSecs: this.#o.maxWaitSecs, stage: this.#stage },
        'start-up readiness wait exceeded; continuing in degraded mode with background recovery',
      );
    }
  }

  #checkStopped(): void {
    this.#stop.signal.throwIfAborted();
  }

  async #sleep(ms: number): Promise<void> {
    await this.#o.clock.sleep(ms, this.#stop.signal);
  }
}

/** Stand-in for a local drive that could not be opened: offline, every call `DiskNotFound`. */
function offlineDrive(endpoint: string): Drive {
  const fail = async (): Promise<never> => {
    throw new SvcError('DiskNotFound', `drive ${endpoint} is offline`);
  };
  return {
    endpoint,
    isOnline: () => false,
    diskInfo: fail,
    makeVol: fail,
    listVols: fail,
    statVol: fail,
    deleteVol: fail,
    writeAll: fail,
    readAll: fail,
    createFile: fail,
    readFileStream: fail,
    verifyFile: fail,
    checkParts: fail,
    renameFile: fail,
    delete: fail,
    listDir: fail,
    readXlMeta: fail,
    renameData: fail,
    undoRenameData: fail,
    commitRenameData: fail,
    writeMetadata: fail,
    deleteVersion: fail,
    walkDir: (): AsyncIterable<never> => ({
      [Symbol.asyncIterator]: () => ({ next: fail }),
    }),
  };
}
