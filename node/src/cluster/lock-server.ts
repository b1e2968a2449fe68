/**
 * One node's lock table, the "locker" that distributed namespace locks
 * (`dist-lock.ts`) take a quorum of. Each resource holds either one writer or
 * any number of readers, keyed by the lock's uid. A lock that its holder stops
 * refreshing expires after `validityMs` (default 1 min), so a killed holder
 * never blocks a resource for longer than that. Expiry is checked lazily on
 * every access (exact under an injected clock) and swept periodically to free
 * memory.
 *
 * A holder names itself `<node>#<incarnation>` (a fresh incarnation per
 * process start). When a request arrives from a node's new incarnation,
 * every grant its earlier incarnation still holds here is dropped at once:
 * that process is gone (one process serves an address), so a node killed
 * while holding locks (a decommission moving an object, a record update)
 * does not block its own restart for the validity period.
 */
import type { Clock } from '../util/clock.ts';
import { SvcError } from '../util/errors.ts';
import type { Logger } from '../util/logger.ts';
import { type PeriodicProgress, periodicWorker, type Worker } from '../util/worker.ts';
import type { RpcService } from './rpc-server.ts';

/** Server-side validity of an unrefreshed lock. */
export const LOCK_VALIDITY_MS = 60_000;
/**
 * A grant whose owner's node is offline (not answering this node) and that
 * was not refreshed for this long is dropped before its validity runs out:
 * a living holder refreshes every 10 s, so its node being away and the grant
 * this stale mean the holder is gone, or has lost its quorum anyway.
 */
export const DEAD_OWNER_AFTER_MS = 12_000;

export interface LockArgs {
  /** Unique id of this lock acquisition (all lockers see the same uid). */
  uid: string;
  /** Resources locked together, e.g. `bucket/object`. */
  resources: string[];
  /** Holder node id (diagnostics). */
  owner: string;
}

/** What every locker, local or remote, answers. */
export interface Locker {
  /** Diagnostics name (`local` or the peer origin). */
  readonly id: string;
  isOnline(): boolean;
  lock(args: LockArgs): Promise<boolean>;
  rlock(args: LockArgs): Promise<boolean>;
  unlock(args: LockArgs): Promise<boolean>;
  runlock(args: LockArgs): Promise<boolean>;
  /** True while the locker still holds `uid` (and renews it). */
  refresh(args: LockArgs): Promise<boolean>;
  forceUnlock(args: LockArgs): Promise<boolean>;
}

interface Grant {
  owner: string;
  refreshedAt: number;
}

interface Entry {
  writer?: { uid: string } & Grant;
  readers: Map<string, Grant>;
}

/** The node of a lock owner (`host:port#incarnation`, as DistLocker names it), or undefined for an owner without one. */
export function ownerNode(owner: string): string | undefined {
  const i = owner.lastIndexOf('#');
  return i <= 0 ? undefined : owner.slice(0, i);
}

export class LockServer implements Locker {
  readonly id = 'local';
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #validityMs: number;
  readonly #table = new Map<string, Entry>();
  /**
   * Uids released before they were granted here (time of the release): a
   * lock request that timed out at its sender, which then sent the release,
   * can still arrive after that release on another connection. Without this
   * it would be granted with nobody to refresh or release it, blocking the
   * resource for the whole validity period. Kept for the validity period.
   */
  readonly #releasedEarly = new Map<string, number>();
  /** Latest incarnation seen per node (owners `<node>#<incarnation>`). */
  readonly #incarnations = new Map<string, string>();
  /**
   * The periodic sweep of expired entries (and of grants whose owner is
   * gone): a Worker the node's supervisor runs (`lock-sweep`). A lock call
   * drops the expired grants of the entries it touches, so a table nobody
   * sweeps still answers correctly; the sweep keeps it small and logs expiries.
   */
  readonly sweeper: Worker<PeriodicProgress>;

  readonly #ownerAlive: ((owner: string) => boolean) | undefined;
  readonly #deadOwnerAfterMs: number;

  constructor(opts: { clock: Clock; logger: Logger; validityMs?: number; ownerAlive?: (owner: string) => boolean; deadOwnerAfterMs?: number }) {
    this.#clock = opts.clock;
    this.#logger = opts.logger;
    this.#validityMs = opts.validityMs ?? LOCK_VALIDITY_MS;
    this.#ownerAlive = opts.ownerAlive;
    this.#deadOwnerAfterMs = opts.deadOwnerAfterMs ?? DEAD_OWNER_AFTER_MS;
    this.sweeper = periodicWorker({
      name: 'lock-sweep',
      everyMs: this.#ownerAlive !== undefined ? Math.min(this.#validityMs / 2, 2_000) : this.#validityMs / 2,
      atStart: false,
      clock: opts.clock,
      logger: opts.logger,
      tick: () => this.sweep(),
    });
  }

  isOnline(): boolean {
    return true;
  }

  /** Drops the grants of `owner`'s earlier incarnations (see the module comment). */
  #noteIncarnation(owner: string): void {
    const node = ownerNode(owner);
    if (node === undefined) return;
    const incarnation = owner.slice(node.length + 1);
    const known = this.#incarnations.get(node);
    if (known === incarnation) return;
    this.#incarnations.set(node, incarnation);
    if (known === undefined) return;
    let dropped = 0;
    const stale = (o: string) => o.startsWith(`${node}#`) && o !== owner;
    for (const [r, e] of this.#table) {
      if (e.writer !== undefined && stale(e.writer.owner)) {
        e.writer = undefined;
        dropped++;
      }
      for (const [uid, g] of e.readers) {
        if (stale(g.owner)) {
          e.readers.delete(uid);
          dropped++;
        }
      }
      this.#gc(r, e);
    }
    if (dropped > 0) this.#logger.info({ event: 'lock_owner_restarted', node, dropped }, `${node} restarted: dropped ${dropped} lock grant(s) of its previous process`);
  }

  async lock(args: LockArgs): Promise<boolean> {
    const { uid, resources, owner } = checkArgs(args);
    this.#noteIncarnation(owner);
    if (this.#releasedEarly.has(uid)) return false;
    const entries = resources.map((r) => this.#entry(r));
    for (const e of entries) {
      if (e.writer !== undefined && e.writer.uid !== uid) return false;
      if (e.readers.size > 0) return false;
    }
    const now = this.#clock.now();
    for (const e of entries) e.writer = { uid, owner, refreshedAt: now };
    return true;
  }

  async rlock(args: LockArgs): Promise<boolean> {
    const { uid, resources, owner } = checkArgs(args);
    this.#noteIncarnation(owner);
    if (this.#releasedEarly.has(uid)) return false;
    const entries = resources.map((r) => this.#entry(r));
    if (entries.some((e) => e.writer !== undefined)) return false;
    const now = this.#clock.now();
    for (const e of entries) e.readers.set(uid, { owner, refreshedAt: now });
    return true;
  }

  async unlock(args: LockArgs): Promise<boolean> {
    const { uid, resources } = checkArgs(args);
    let released = false;
    for (const r of resources) {
      const e = this.#table.get(r);
      if (e?.writer?.uid === uid) {
        e.writer = undefined;
        released = true;
        this.#gc(r, e);
      }
    }
    if (!released) this.#releasedEarly.set(uid, this.#clock.now());
    return released;
  }

  async runlock(args: LockArgs): Promise<boolean> {
    const { uid, resources } = checkArgs(args);
    let released = false;
    for (const r of resources) {
      const e = this.#table.get(r);
      if (e?.readers.delete(uid) === true) {
        released = true;
        this.#gc(r, e);
      }
    }
    if (!released) this.#releasedEarly.set(uid, this.#clock.now());
    return released;
  }

  async refresh(args: LockArgs): Promise<boolean> {
    const { uid, resources } = checkArgs(args);
    const now = this.#clock.now();
    let held = false;
    for (const r of resources) {
      const e = this.#entry(r);
      if (e.writer?.uid === uid) {
        e.writer.refreshedAt = now;
        held = true;
      }
      const g = e.readers.get(uid);
      if (g !== undefined) {
        g.refreshedAt = now;
        held = true;
      }
      this.#gc(r, e);
    }
    return held;
  }

  async forceUnlock(args: LockArgs): Promise<boolean> {
    const { resources } = checkArgs(args);
    for (const r of resources) this.#table.delete(r);
    return true;
  }

  /** Number of resources currently locked (diagnostics and tests). */
  size(): number {
    this.sweep();
    return this.#table.size;
  }

  /** Drops every grant not refreshed within the validity period (and early releases as old). */
  sweep(): void {
    for (const r of [...this.#table.keys()]) this.#entry(r);
    const cutoff = this.#clock.now() - this.#validityMs;
    for (const [uid, at] of this.#releasedEarly) if (at < cutoff) this.#releasedEarly.delete(uid);
  }

  /** The entry of `r` with expired grants removed (created empty when absent). */
  #entry(r: string): Entry {
    let e = this.#table.get(r);
    if (e === undefined) {
      e = { readers: new Map() };
      this.#table.set(r, e);
      return e;
    }
    const now = this.#clock.now();
    const cutoff = now - this.#validityMs;
    const gone = (g: Grant) => this.#ownerAlive !== undefined && now - g.refreshedAt >= this.#deadOwnerAfterMs && !this.#ownerAlive(g.owner);
    if (e.writer !== undefined && (e.writer.refreshedAt < cutoff || gone(e.writer))) {
      this.#logExpiry(r, e.writer, 'write', e.writer.refreshedAt < cutoff);
      e.writer = undefined;
    }
    for (const [uid, g] of e.readers) {
      if (g.refreshedAt < cutoff || gone(g)) {
        this.#logExpiry(r, g, 'read', g.refreshedAt < cutoff);
        e.readers.delete(uid);
      }
    }
    this.#gc(r, e);
    return e;
  }

  #logExpiry(r: string, g: Grant, kind: 'read' | 'write', expired: boolean): void {
    if (expired) this.#logger.info({ event: 'lock_expired', resource: r, owner: g.owner, kind }, 'lock expired without refresh');
    else this.#logger.warn({ event: 'lock_owner_gone', resource: r, owner: g.owner, kind, staleMs: this.#clock.now() - g.refreshedAt }, 'lock dropped: its owner node is offline and stopped refreshing it');
  }

  #gc(r: string, e: Entry): void {
    if (e.writer === undefined && e.readers.size === 0) this.#table.delete(r);
  }
}

function checkArgs(args: unknown): LockArgs {
  const a = args as Partial<LockArgs> | null;
  if (
    a === null ||
    typeof a !== 'object' ||
    typeof a.uid !== 'string' ||
    a.uid.length === 0 ||
    typeof a.owner !== 'string' ||
    !Array.isArray(a.resources) ||
    a.resources.length === 0 ||
    !a.resources.every((r) => typeof r === 'string')
  ) {
    throw new SvcError('InvalidArgument', 'malformed lock request');
  }
  return a as LockArgs;
}

/** Lock methods of `server` as peer RPC methods (`/svc/peer/v1/lock`, …). */
export function lockRpcService(server: LockServer): RpcService {
  return {
    lock: { kind: 'unary', handle: (a) => server.lock(checkArgs(a)) },
    rlock: { kind: 'unary', handle: (a) => server.rlock(checkArgs(a)) },
    unlock: { kind: 'unary', handle: (a) => server.unlock(checkArgs(a)) },
    runlock: { kind: 'unary', handle: (a) => server.runlock(checkArgs(a)) },
    refresh: { kind: 'unary', handle: (a) => server.refresh(checkArgs(a)) },
    forceUnlock: { kind: 'unary', handle: (a) => server.forceUnlock(checkArgs(a)) },
  };
}
