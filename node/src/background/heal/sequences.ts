/**
 * The admin heal route's engine (`HealWorker`): heal sequences by client
 * token, with MinIO's start / status / stop semantics (SPEC Admin API rule
 * 5; reference shapes §2.4):
 *
 * - start without a token: a sequence still running on the same path with
 *   results waiting answers that sequence's token; one running on the same
 *   path without results is `XSvcHealAlreadyRunning`; one running on an
 *   overlapping path (one path a prefix of the other, in intersecting sets)
 *   is `XSvcHealOverlappingPaths`; `forceStart` stops the sequence on the
 *   same path first and starts anew;
 * - status with the token pops the results since the previous call;
 * - `forceStop` with the token stops it (`HealStopSuccess`, the start shape);
 * - an unknown token, or one naming another path, is
 *   `XSvcHealInvalidClientToken`.
 *
 * Tokens are `<uuid>:<node index>`: any node receiving a status or stop
 * forwards it to the node that runs the sequence. Ended sequences stay
 * queryable for 10 minutes; after that their token answers `finished` (or
 * `stopped`) with the final progress for 24 hours.
 *
 * Root heals stopped by a graceful shutdown are persisted as
 * `root-heal-<id>.json` under `.svc.sys` and resumed at the next start.
 */
import { randomUUID } from 'node:crypto';
import type { HealStartSuccess, HealTaskStatus } from '../../object/admin/types.ts';
import { rfc3339 } from '../../object/admin/types.ts';
import type { HealCall, HealWorker } from '../../object/admin/services.ts';
import type { Clock } from '../../util/clock.ts';
import { SvcError } from '../../util/errors.ts';
import type { Logger } from '../../util/logger.ts';
import type { SysRecords } from '../../object/sys-records.ts';
import type { Healer } from './healer.ts';
import { HealSequence, scopePath, type SequenceState, type SetFormatHealer } from './sequence.ts';

const KEEP_ENDED_MS = 10 * 60_000;
const KEEP_TOMBSTONE_MS = 24 * 3600_000;
const MAX_TOMBSTONES = 1000;
const ROOT_HEAL_PREFIX = 'root-heal-';

export function rootHealRecordPath(id: string): string {
  return `${ROOT_HEAL_PREFIX}${id}.json`;
}

/** The node index a token names (`<uuid>:<index>`), or undefined for a malformed token. */
export function tokenNode(token: string): number | undefined {
  const m = /:(\d+)$/.exec(token);
  return m ? Number(m[1]) : undefined;
}

export interface HealSequencesOptions {
  healer: Healer;
  records: SysRecords;
  formats?: SetFormatHealer;
  clock: Clock;
  logger: Logger;
  /** This node's index in the cluster's node list (the token suffix). */
  nodeIndex: number;
  /** Throttle of admin heals (Worker tranquility; default 0.5). */
  tranquility?: number;
  /** Throttle of the automatic rebuild of a replaced drive (default 1: at most half the time). */
  rebuildTranquility?: number;
  /** Results a sequence holds for status calls before it pauses (default 1000). */
  maxUnconsumed?: number;
  /** Objects an admin heal heals at once (default 4). */
  concurrency?: number;
  /** Objects the rebuild of a replaced drive heals at once (default 1: background work). */
  rebuildConcurrency?: number;
}

interface Tombstone {
  path: string;
  summary: HealTaskStatus['Summary'];
  status: HealTaskStatus;
  endedAt: number;
}

export class HealSequences implements HealWorker {
  readonly #o: HealSequencesOptions;
  readonly #live = new Map<string, HealSequence>();
  readonly #ended = new Map<string, Tombstone>();
  /** Tokens of the set heals started by the drive healer (not persisted, no overlap checks). */
  readonly #internal = new Set<string>();
  #closing = false;

  constructor(o: HealSequencesOptions) {
    this.#o = o;
  }

  /** Sequences running now. */
  running(): HealSequence[] {
    return [...this.#live.values()].filter((s) => !s.ended);
  }

  async heal(call: HealCall): Promise<unknown> {
    this.#sweep();
    if (call.kind === 'start') return this.#start(call);
    const seq = this.#live.get(call.clientToken);
    if (seq === undefined) {
      const t = this.#ended.get(call.clientToken);
      if (t !== undefined) return { ...t.status, Items: null };
      throw new SvcError('XSvcHealInvalidClientToken', `no heal sequence has client token "${call.clientToken}" on this node (tokens of ended heals are kept 24 hours)`);
    }
    const asked = scopePath(call);
    if (asked !== '' && asked !== seq.path) {
      throw new SvcError('XSvcHealInvalidClientToken', `client token "${call.clientToken}" belongs to the heal of "${seq.path || '/'}", not "${asked}"`);
    }
    if (call.kind === 'stop') {
      await seq.stop(true);
      return this.#startSuccess(seq);
    }
    return seq.status();
  }

  #startSuccess(seq: HealSequence): HealStartSuccess {
    return { clientToken: seq.token, clientAddress: seq.clientAddress, startTime: rfc3339(seq.startTime) };
  }

  async #start(call: Extract<HealCall, { kind: 'start' }>): Promise<HealStartSuccess> {
    if (this.#closing) throw new SvcError('ServiceUnavailable', 'the node is shutting down; start the heal on another node or after the restart');
    const path = scopePath(call);
    const scopeKey = (s: { opts: { pool?: number; set?: number } }) => [s.opts.pool, s.opts.set] as const;
    const intersects = (a: readonly [number | undefined, number | undefined], b: readonly [number | undefined, number | undefined]) =>
      (a[0] === undefined || b[0] === undefined || a[0] === b[0]) && (a[1] === undefined || b[1] === undefined || a[1] === b[1]);
    const mine = scopeKey(call);
    const admin = this.running().filter((q) => !this.#internal.has(q.token));
    for (const seq of admin) {
      if (seq.path !== path || !intersects(scopeKey(seq.scope), mine)) continue;
      if (call.forceStart) {
        await seq.stop(true);
        continue;
      }
      if (seq.hasItems) return this.#startSuccess(seq);
      throw new SvcError('XSvcHealAlreadyRunning', `a heal of "${path || '/'}" is already running (client token ${seq.token}); follow it with its token, or start with forceStart to restart it`);
    }
    for (const seq of admin) {
      if (seq.ended) continue; // stopped by forceStart just above
      const other = seq.path;
      const overlap = other === '' || path === '' || other.startsWith(path) || path.startsWith(other);
      if (overlap && intersects(scopeKey(seq.scope), mine)) {
        throw new SvcError('XSvcHealOverlappingPaths', `a heal of "${other || '/'}" is running (client token ${seq.token}) and overlaps "${path || '/'}"; wait for it or stop it first`);
      }
    }
    const id = randomUUID();
    const seq = this.#make({
      id,
      token: `${id}:${this.#o.nodeIndex}`,
      scope: { bucket: call.bucket, prefix: call.prefix, opts: call.opts },
      clientAddress: call.clientAddress,
      startTime: this.#o.clock.now(),
    });
    seq.start();
    this.#o.logger.info({ event: 'heal_sequence_started', token: seq.token, path, opts: call.opts }, 'heal sequence started');
    return this.#startSuccess(seq);
  }

  /**
   * Starts the heal of one erasure set that rebuilds a replaced drive (the
   * drive healer's): format stage, the set's records, every object of the
   * set, throttled as background work.
   */
  startSetHeal(pool: number, set: number): HealSequence {
    const id = randomUUID();
    const token = `${id}:${this.#o.nodeIndex}`;
    this.#internal.add(token);
    const seq = this.#make(
      {
        id,
        token,
        scope: {
          bucket: '',
          prefix: '',
          opts: { recursive: true, dryRun: false, remove: false, recreate: false, scanMode: 1, updateParity: false, nolock: false, pool, set },
        },
        clientAddress: 'drive-healer',
        startTime: this.#o.clock.now(),
      },
      this.#o.rebuildTranquility ?? 1,
      this.#o.rebuildConcurrency ?? 1,
    );
    seq.start();
    this.#o.logger.info({ event: 'heal_set_started', token, pool, set }, 'set heal started to rebuild a replaced drive');
    return seq;
  }

  #make(
    state: Omit<SequenceState, 'cursor' | 'progress'> & Partial<SequenceState>,
    tranquility = this.#o.tranquility ?? 0.5,
    concurrency = this.#o.concurrency ?? 4,
  ): HealSequence {
    const internal = this.#internal.has(state.token);
    const seq = new HealSequence(
      {
        healer: this.#o.healer,
        formats: this.#o.formats,
        clock: this.#o.clock,
        logger: this.#o.logger,
        tranquility,
        concurrency,
        objectTaskType: internal ? 'drive' : 'object',
        ...(this.#o.maxUnconsumed !== undefined ? { maxUnconsumed: this.#o.maxUnconsumed } : {}),
        ...(internal ? {} : { persist: (s: HealSequence, keep: boolean) => this.#persist(s, keep) }),
      },
      state,
    );
    this.#live.set(seq.token, seq);
    return seq;
  }

  async #persist(seq: HealSequence, keep: boolean): Promise<void> {
    const path = rootHealRecordPath(seq.id);
    if (keep) {
      await this.#o.records.write(path, Buffer.from(JSON.stringify({ v: 1, ...seq.state() })));
      this.#o.logger.info({ event: 'heal_sequence_persisted', token: seq.token, record: path }, 'root heal progress persisted for the next start');
      return;
    }
    // Ended for good: a record left by an earlier shutdown goes.
    const view = await this.#o.records.inspect(path).catch(() => undefined);
    if (view?.winner?.data !== undefined) await this.#o.records.delete(path);
  }

  /** Resumes the root heals this node persisted at its last graceful shutdown. */
  async resume(): Promise<number> {
    const { names } = await this.#o.records.list('').catch(() => ({ names: [] as string[] }));
    let n = 0;
    for (const name of names) {
      const m = /^root-heal-([0-9a-f-]{36})\.json\/$/.exec(name);
      if (!m) continue;
      const raw = await this.#o.records.read(rootHealRecordPath(m[1]!)).catch(() => undefined);
      if (raw === undefined) continue;
      let st: SequenceState;
      try {
        st = JSON.parse(Buffer.from(raw).toString('utf8')) as SequenceState;
      } catch {
        this.#o.logger.warn({ event: 'heal_sequence_record_bad', record: name }, 'unreadable root heal record; not resumed');
        continue;
      }
      if (tokenNode(st.token) !== this.#o.nodeIndex || this.#live.has(st.token)) continue;
      const seq = this.#make(st);
      seq.start();
      n++;
      this.#o.logger.info({ event: 'heal_sequence_resumed', token: st.token, cursor: st.cursor }, 'root heal resumed from its persisted progress');
    }
    return n;
  }

  /** Graceful shutdown: running heals stop; root heals are persisted to resume. */
  async close(): Promise<void> {
    this.#closing = true;
    await Promise.all(this.running().map((s) => s.stop(false)));
  }

  #sweep(): void {
    const now = this.#o.clock.now();
    for (const [token, seq] of this.#live) {
      if (seq.endedAt === undefined || now - seq.endedAt < KEEP_ENDED_MS) continue;
      this.#live.delete(token);
      this.#internal.delete(token);
      const status = seq.status();
      this.#ended.set(token, { path: seq.path, summary: status.Summary, status, endedAt: seq.endedAt });
    }
    for (const [token, t] of this.#ended) if (now - t.endedAt > KEEP_TOMBSTONE_MS) this.#ended.delete(token);
    while (this.#ended.size > MAX_TOMBSTONES) this.#ended.delete(this.#ended.keys().next().value!);
  }
}
