/**
 * The background scanner, one per node. A cycle visits every object of the
 * erasure sets this node scans (each set is scanned by the first of its
 * nodes that is online, so every set is scanned once while any of its nodes
 * runs), one object per Worker step:
 *
 * - metadata quorum: the drives' journals from the namespace walk are voted
 *   (`voteObject`); a drive that answered but lacks an authoritative
 *   version, holds a copy that lost the vote, or has an unreadable journal
 *   queues the object for background heal;
 * - sampled bitrot: one object in `deepSample` per cycle (rotating, so each
 *   object is verified about every `deepSample` cycles) gets a deep check,
 *   every bitrot frame on every drive, under its lock; damage queues a deep
 *   heal;
 * - usage: objects, versions, delete markers and bytes per bucket, written
 *   for every scanned set at the end of the cycle (`usage.ts`); the admin
 *   API's server info reads it.
 *
 * Each cycle ends `success` (every set scanned), `partial` (some sets could
 * not be walked: below list quorum, walk errors) or `error` (none could),
 * with its duration; both are published (`svc:scanner:cycle`), and every
 * object visited on `svc:scanner:object`. Pace: cycles start at most every
 * `intervalMs`; within a cycle the Worker sleeps `tranquility` × the time
 * each object took. Every cycle also looks at this node's drives for
 * replacements (the drive healer's check).
 *
 * Hooks (`hooks`, the lifecycle executor on a node) ride the same walk:
 * `beginCycle` at the cycle's start time, `visitObject` for every object of
 * a user bucket with the versions the drives voted (newest first), `endSet`
 * after each set that was walked. A hook's failure is logged and never
 * stops the cycle.
 */
import { createHash } from 'node:crypto';
import { type FileVersion, SYS_VOL } from '../storage/drive.ts';
import type { Clock } from '../util/clock.ts';
import { scannerCycle, scannerObject } from '../util/diagnostics.ts';
import { toSvcError } from '../util/errors.ts';
import type { Logger } from '../util/logger.ts';
import type { BackgroundHeal } from './heal/background.ts';
import type { Healer } from './heal/healer.ts';
import { classifySlot, voteObject } from './heal/plan.ts';
import { type NamespaceEntry, SYS_SKIP, walkSet } from '../object/namespace-walk.ts';
import { sleepUnlessAborted, Worker, type WorkResult } from '../util/worker.ts';
import { type BucketUsage, emptyBucketUsage, type SetUsage, type UsageRecord, usageRecordPath } from '../object/usage.ts';

export interface ScannerProgress {
  cycles: number;
  cyclesByResult: { success: number; partial: number; error: number };
  objectsScanned: number;
  healsQueued: number;
  deepChecks: number;
  /** Orphaned data folders collected. */
  orphansCollected: number;
  lastCycle?: { result: 'success' | 'partial' | 'error'; startedAt: number; durationMs: number; objects: number; setsSkipped: number; lastError?: string };
  current?: { pool: number; set: number; bucket: string; object: string };
}

export interface ScannerOptions {
  healer: Healer;
  background: BackgroundHeal;
  clock: Clock;
  logger: Logger;
  /** This node's id and index (its usage record). */
  node: string;
  nodeIndex: number;
  /** True when this node scans `pool`/`set`. */
  scans: (pool: number, set: number) => boolean;
  /** Minimum time between cycle starts (default 60 s). */
  intervalMs?: number;
  /** Worker tranquility (default 1). */
  tranquility?: number;
  /** One object in this many is deep-verified per cycle (default 64; 0 never). */
  deepSample?: number;
  /** Called once per cycle (the drive healer's replacement check). */
  onCycle?: () => Promise<void>;
  /** Work done on the scanner's walk (lifecycle). */
  hooks?: readonly ScannerHook[];
  /** Data folders no xl.meta names are collected once untouched this long (default 1 h). */
  orphanAgeMs?: number;
}

/** What the scanner calls on its hooks, in walk order. */
export interface ScannerHook {
  /** A cycle starts, at the scanner's clock. */
  beginCycle(now: number): void;
  /** An object of a user bucket the scanner visited: its versions as the drives voted them, newest first. */
  visitObject(bucket: string, key: string, versions: readonly FileVersion[]): Promise<void>;
  /** Every object of `pool`/`set` was visited this cycle. */
  endSet(pool: number, set: number): Promise<void>;
}

type Result = 'success' | 'partial' | 'error';

export class Scanner {
  readonly worker: Worker<ScannerProgress>;
  readonly #o: ScannerOptions;
  readonly #p: ScannerProgress = { cycles: 0, cyclesByResult: { success: 0, partial: 0, error: 0 }, objectsScanned: 0, healsQueued: 0, deepChecks: 0, orphansCollected: 0 };
  #gen: AsyncGenerator<void, Result> | undefined;
  #cycleStart = 0;
  #nextCycleAt = 0;
  #cycleObjects = 0;
  #skipped = 0;
  #lastError: string | undefined;
  #usage: SetUsage[] = [];

  constructor(o: ScannerOptions) {
    this.#o = o;
    this.worker = new Worker(
      {
        name: 'scanner',
        work: (signal) => this.#work(signal),
        waitForWork: (signal) => sleepUnlessAborted(o.clock, Math.max(0, this.#nextCycleAt - o.clock.now()), signal),
        progress: () => structuredClone(this.#p),
      },
      { clock: o.clock, logger: o.logger, tranquility: o.tranquility ?? 1 },
    );
  }

  progress(): ScannerProgress {
    return structuredClone(this.#p);
  }

  start(): void {
    if (!this.worker.active) this.worker.start();
  }

  stop(): Promise<void> {
    return this.worker.stop();
  }

  async #work(signal: AbortSignal): Promise<WorkResult> {
    if (this.#gen === undefined) {
      if (this.#o.clock.now() < this.#nextCycleAt) return 'idle';
      this.#cycleStart = this.#o.clock.now();
      this.#nextCycleAt = this.#cycleStart + (this.#o.intervalMs ?? 60_000);
      this.#cycleObjects = 0;
      this.#skipped = 0;
      this.#lastError = undefined;
      this.#usage = [];
      for (const hk of this.#o.hooks ?? []) hk.beginCycle(this.#cycleStart);
      await this.#o.onCycle?.().catch((err: unknown) => this.#o.logger.warn({ event: 'scanner_drive_check_failed', err }, 'drive replacement check failed'));
      this.#gen = this.#cycle(signal);
    }
    const r = await this.#gen.next();
    if (!r.done) return 'busy';
    this.#gen = undefined;
    await this.#finish(r.value);
    return 'idle';
  }

  async #finish(result: Result): Promise<void> {
    const durationMs = this.#o.clock.now() - this.#cycleStart;
    this.#p.cycles++;
    this.#p.cyclesByResult[result]++;
    this.#p.lastCycle = {
      result,
      startedAt: this.#cycleStart,
      durationMs,
      objects: this.#cycleObjects,
      setsSkipped: this.#skipped,
      ...(this.#lastError !== undefined ? { lastError: this.#lastError } : {}),
    };
    delete this.#p.current;
    if (this.#usage.length > 0) {
      const rec: UsageRecord = { v: 1, node: this.#o.node, updatedAt: this.#o.clock.now(), sets: this.#usage };
      await this.#o.healer.records.write(usageRecordPath(this.#o.nodeIndex), Buffer.from(JSON.stringify(rec))).catch((err: unknown) => {
        this.#o.logger.warn({ event: 'scanner_usage_write_failed', err }, 'scanner could not record data usage');
      });
    }
    if (scannerCycle.hasSubscribers) scannerCycle.publish({ result, durationSeconds: durationMs / 1000 });
    this.#o.logger.info({ event: 'scanner_cycle', result, durationMs, objects: this.#cycleObjects, setsSkipped: this.#skipped }, `scanner cycle ${result}`);
  }

  async *#cycle(signal: AbortSignal): AsyncGenerator<void, Result> {
    const h = this.#o.healer;
    const owned = h.pools.list.flatMap((p) => p.sets.filter((s) => this.#o.scans(p.index, s.index)));
    if (owned.length === 0) return 'success';
    let buckets: string[];
    try {
      buckets = await h.buckets();
    } catch (err) {
      this.#lastError = toSvcError(err).message;
      return 'error';
    }
    for (const set of owned) {
      const usage: SetUsage = { pool: set.pool, set: set.index, scannedAt: 0, buckets: {} };
      const online = set.drives.filter((d) => d.isOnline()).length;
      if (online < Math.ceil(set.width / 2)) {
        // Too few drives to vote: the set is not scanned this cycle (and not counted).
        this.#skipped++;
        this.#lastError = `pool ${set.pool} set ${set.index}: ${online} of ${set.width} drives online`;
        continue;
      }
      let ok = true;
      for (const b of [SYS_VOL, ...buckets]) {
        const u = emptyBucketUsage();
        try {
          const orphanAgeMs = this.#o.orphanAgeMs ?? 3_600_000;
          for await (const e of walkSet(set, b, b === SYS_VOL ? { skip: SYS_SKIP, orphanAgeMs } : { orphanAgeMs })) {
            if (signal.aborted) return 'partial';
            this.#p.current = { pool: set.pool, set: set.index, bucket: b, object: e.name };
            await this.#visit(set.pool, set.index, b, e, u);
            yield;
          }
        } catch (err) {
          ok = false;
          this.#lastError = `pool ${set.pool} set ${set.index} bucket ${b}: ${toSvcError(err).message}`;
        }
        if (b !== SYS_VOL) usage.buckets[b] = u;
      }
      if (!ok) {
        this.#skipped++;
        continue;
      }
      for (const hk of this.#o.hooks ?? []) await hk.endSet(set.pool, set.index).catch((err: unknown) => this.#hookFailed(err));
      usage.scannedAt = this.#o.clock.now();
      this.#usage.push(usage);
    }
    return this.#skipped === 0 ? 'success' : this.#skipped === owned.length ? 'error' : 'partial';
  }

  async #visit(pool: number, si: number, bucket: string, e: NamespaceEntry, u: BucketUsage): Promise<void> {
    if (e.orphans !== undefined) {
      const set = this.#o.healer.pools.list[pool]!.sets[si]!;
      this.#p.orphansCollected += await this.#o.healer.collectOrphans(set, bucket, e.name, e.orphans).catch((err: unknown) => {
        this.#o.logger.warn({ event: 'orphan_collect_failed', bucket, object: e.name, err: toSvcError(err).message }, 'orphan collection failed; retried next cycle');
        return 0;
      });
      // A key with nothing but orphaned data is no object.
      if (e.metas.every((m) => !m.ok)) return;
    }
    this.#p.objectsScanned++;
    this.#cycleObjects++;
    if (scannerObject.hasSubscribers) scannerObject.publish({ bucket, object: e.name });
    const reads = e.metas.map(classifySlot);
    const vote = voteObject(reads);
    if (bucket !== SYS_VOL) {
      const versions = vote.authoritative.map((g) => g.version);
      for (const hk of this.#o.hooks ?? []) await hk.visitObject(bucket, e.name, versions).catch((err: unknown) => this.#hookFailed(err));
    }
    const n = reads.length;
    for (const [i, g] of vote.authoritative.entries()) {
      u.versions++;
      const v = g.version;
      if (v.type === 'delete') u.deleteMarkers++;
      else {
        if (i === 0) u.objects++;
        u.size += v.size;
        u.rawSize += v.erasure ? Math.ceil((v.size * n) / v.erasure.data) : 0;
      }
    }
    const short = new Set<number>();
    reads.forEach((r, s) => {
      if (r.kind === 'offline') return;
      if (r.kind !== 'journal') short.add(s);
      for (const g of vote.authoritative) if (g.perSlot[s] === undefined) short.add(s);
    });
    for (const c of [...vote.stale, ...vote.dangling.copies]) short.add(c.slot);
    const set = this.#o.healer.pools.list[pool]!.sets[si]!;
    if (short.size > 0) {
      this.#p.healsQueued++;
      this.#o.background.enqueue({ bucket, object: e.name, pool, set: si, reason: 'scanner', slots: [...short] });
      return;
    }
    const every = this.#o.deepSample ?? 64;
    if (every > 0 && vote.authoritative.some((g) => g.version.type === 'object') && this.#sampled(bucket, e.name, every)) {
      this.#p.deepChecks++;
      const r = await this.#o.healer.healInSet(set, bucket, e.name, { dryRun: true, remove: false, deep: true }).catch(() => undefined);
      if (r?.outcome === 'would-heal' || r?.outcome === 'refused') {
        this.#p.healsQueued++;
        const bad = r.before.flatMap((d, s) => (d.state === 'corrupt' || d.state === 'missing' ? [s] : []));
        this.#o.background.enqueue({ bucket, object: e.name, pool, set: si, reason: 'scanner-bitrot', slots: bad }, true);
      }
    }
  }

  #hookFailed(err: unknown): void {
    this.#o.logger.warn({ event: 'scanner_hook_failed', err: toSvcError(err).message }, 'scanner hook failed; retried next cycle');
  }

  /** One object in `every`, a different one each cycle. */
  #sampled(bucket: string, key: string, every: number): boolean {
    const h = createHash('sha1').update(bucket).update('\0').update(key).digest().readUInt32BE(0);
    return h % every === this.#p.cycles % every;
  }
}
