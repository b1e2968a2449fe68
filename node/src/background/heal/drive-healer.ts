/**
 * Drive replacement (SPEC "Drive replacement"). A drive that comes back
 * without a format (emptied while the node runs, swapped for an empty disk,
 * a new file system mounted over its path) is not a member of its set
 * (`MemberDrive`): its slot serves nothing until a set heal writes the
 * format into the original slot (the id the set matrix gives it) and
 * rebuilds every shard and record the slot should hold.
 *
 * - Detection: every node watches its own drives (every 5 s, at start-up
 *   right away, and on each scanner cycle). A replacement found is recorded
 *   as an intent on the drive itself (`.svc.sys/healing.json`, the
 *   recovery tracker) and rebuilt automatically by an internal set heal
 *   (`HealSequences.startSetHeal`), one drive at a time per node.
 * - An admin set heal (`pool` and `set` in the heal body) does the same for
 *   every replaced drive of its set, wherever it is (`healSetFormat`).
 * - The tracker goes `pending` → `healing` (counters updated as the set
 *   heal walks) → `completed` (or `failed`); replacement recovery reports
 *   it from every drive. A tracker left `healing` by a heal that stopped (a
 *   crash, a restart) is picked up again by the drive's own node.
 *
 * A drive carrying another deployment's or another slot's format is never
 * formatted over automatically (it may be someone's data); only an
 * unformatted one, or with an admin set heal a corrupt format, is.
 */
import { DISTRIBUTION_ALGO, FORMAT_FILE, FORMAT_VERSION, type FormatFile } from '../../storage/format.ts';
import { type Drive, SYS_VOL } from '../../storage/drive.ts';
import { LocalDrive } from '../../storage/local-drive.ts';
import type { Clock } from '../../util/clock.ts';
import { toSvcError } from '../../util/errors.ts';
import type { Logger } from '../../util/logger.ts';
import type { MemberDrive, Membership } from '../../object/member-drive.ts';
import type { Pools } from '../../object/pools.ts';
import { sleepUnlessAborted, Worker } from '../../util/worker.ts';
import type { HealSequences } from './sequences.ts';
import type { SetFormatHealer } from './sequence.ts';
import type { DriveState } from './plan.ts';
import type { HealDrive, HealResult } from './types.ts';
import type { Eventual } from '../../util/eventual.ts';

/** The recovery tracker a replaced drive carries: `.svc.sys/healing.json`. */
export const TRACKER_FILE = 'healing.json';

export interface DriveTracker {
  v: 1;
  /** `<pool>-<set>-<slot>`. */
  id: string;
  endpoint: string;
  pool: number;
  set: number;
  slot: number;
  /** The id written into the drive's format (its slot's). */
  driveId: string;
  state: 'pending' | 'healing' | 'completed' | 'failed';
  reason: string;
  /** Who heals it: a heal sequence's client token. */
  healer: string;
  detectedAt: number;
  updatedAt: number;
  finishedAt?: number;
  objectsScanned: number;
  objectsHealed: number;
  bytesHealed: number;
  lastError?: string;
}

export function decodeTracker(raw: Uint8Array): DriveTracker | undefined {
  try {
    const t = JSON.parse(Buffer.from(raw).toString('utf8')) as DriveTracker;
    return t && t.v === 1 && typeof t.state === 'string' ? t : undefined;
  } catch {
    return undefined;
  }
}

/** The local drive behind wrappers (membership guard, I/O tracing), if the drive is local. */
export function localDriveOf(d: Drive): LocalDrive | undefined {
  let cur: Drive | undefined = d;
  for (let i = 0; i < 4 && cur !== undefined; i++) {
    if (cur instanceof LocalDrive) return cur;
    cur = (cur as { inner?: Drive }).inner;
  }
  return undefined;
}

/** A tracker not updated for this long while `healing` belongs to a heal that stopped. */
const STALE_MS = 60_000;
const PROGRESS_EVERY_MS = 5_000;

export interface DriveHealerOptions {
  pools: Pools;
  clock: Clock;
  logger: Logger;
  /** This node's id (`host:port`), for logs. */
  selfId: string;
  /** Check period (default 5 s). */
  everyMs?: number;
  /**
   * The buckets that exist (their records): each check gives a member drive
   * that lacks one of their folders the folder back (a folder deleted under
   * a running node), so new writes land on every drive again and the
   * scanner can heal the objects into it.
   */
  buckets?: { list(): Promise<string[]>; exists(bucket: string): Promise<boolean> };
  /** How long a recreated bucket folder shows as a `healing` issue of its drive (default 10 min). */
  volumeIssueMs?: number;
  /**
   * The heal sequences that run its rebuilds. They format replaced drives
   * through this healer (`SetFormatHealer`), so they are built after it:
   * the composition settles them once (`background/healing.ts`). Without
   * them (or before), a replaced drive is detected but not rebuilt.
   */
  sequences?: Eventual<HealSequences>;
}

interface Slot {
  pool: number;
  set: number;
  slot: number;
  member: MemberDrive;
}

/** A slot's tracker id (and key of the active trackers). */
export const slotKey = (s: { pool: number; set: number; slot: number }) => `${s.pool}-${s.set}-${s.slot}`;

export class DriveHealer implements SetFormatHealer {
  readonly worker: Worker<{ replacements: number; healing: string[]; volumesRecreated: number }>;
  readonly #o: DriveHealerOptions;
  /** Trackers of drives this node is formatting or rebuilding, by slot id. */
  readonly #active = new Map<string, DriveTracker>();
  readonly #lastWrite = new Map<string, number>();
  readonly #mounts = new Map<string, string>();
  /** Tokens of the set heals this node started for automatic rebuilds. */
  readonly #autoTokens = new Set<string>();
  #replacements = 0;
  #checking: Promise<void> | undefined;
  /** The bucket list, read at most every 30 s. */
  #bucketList: { at: number; names: string[] } | undefined;
  /** Bucket folders this node gave back to its drives. */
  #volumesRecreated = 0;

  constructor(o: DriveHealerOptions) {
    this.#o = o;
    this.worker = new Worker(
      {
        name: 'drive-monitor',
        work: async () => {
          await this.check();
          return 'idle';
        },
        waitForWork: (signal) => sleepUnlessAborted(o.clock, o.everyMs ?? 5_000, signal),
        progress: () => ({ replacements: this.#replacements, healing: [...this.healing()], volumesRecreated: this.#volumesRecreated }),
      },
      { clock: o.clock, logger: o.logger },
    );
  }

  /** Endpoints this node is rebuilding now. */
  healing(): Set<string> {
    return new Set([...this.#active.values()].filter((t) => t.state === 'healing').map((t) => t.endpoint));
  }

  #slots(filter?: (s: Slot) => boolean): Slot[] {
    const out: Slot[] = [];
    for (const p of this.#o.pools.list) {
      if (p.width < 2) continue; // a single drive has nothing to rebuild from
      for (const set of p.sets) {
        set.drives.forEach((_, slot) => {
          const s = { pool: p.index, set: set.index, slot, member: this.#o.pools.member(p.index, set.index, slot) };
          if (s.member.expectedId !== undefined && (!filter || filter(s))) out.push(s);
        });
      }
    }
    return out;
  }

  /** Looks at this node's drives once (the monitor's and the scanner's tick). */
  check(): Promise<void> {
    this.#checking ??= this.#check().finally(() => {
      this.#checking = undefined;
    });
    return this.#checking;
  }

  async #check(): Promise<void> {
    for (const s of this.#slots((x) => localDriveOf(x.member.inner) !== undefined)) {
      const info = await s.member.diskInfo().catch(() => undefined);
      if (info === undefined) continue;
      const key = slotKey(s);
      const mountChanged = info.mountId !== undefined && this.#mounts.has(key) && this.#mounts.get(key) !== info.mountId;
      if (info.mountId !== undefined) this.#mounts.set(key, info.mountId);
      if (mountChanged) {
        this.#o.logger.warn({ event: 'drive_mount_changed', endpoint: s.member.endpoint, membership: s.member.membership }, 'the file system behind a drive path changed');
      }
      if (s.member.membership === 'unformatted') {
        if (this.#active.has(key)) continue;
        const reason = mountChanged ? 'mount identity changed: a new, empty file system is mounted at the drive path' : 'drive reachable without a format (emptied or replaced)';
        await this.#autoHeal(s, reason);
        continue;
      }
      if (s.member.membership !== 'member') continue;
      await this.#checkVolumes(s).catch((err: unknown) => {
        const e = toSvcError(err);
        // Below quorum (start-up, peers away) the bucket list cannot be read: the next check tries again.
        const quiet = e.code === 'ErasureReadQuorum' || e.code === 'ServiceUnavailable';
        this.#o.logger[quiet ? 'debug' : 'warn']({ event: 'drive_volume_check_failed', endpoint: s.member.endpoint, err: e.message }, 'bucket folder check failed');
      });
      // A rebuild that stopped half-way (crash, restart, a heal on another node that went away).
      const t = await this.#readTracker(s);
      if (t?.state !== 'healing' || this.#active.has(key)) continue;
      const live = this.#o.sequences?.get()?.running().some((q) => q.token === t.healer) ?? false;
      if (!live && this.#o.clock.now() - t.updatedAt > STALE_MS) await this.#autoHeal(s, `${t.reason}; resuming an interrupted rebuild`, t);
    }
  }

  /** Gives a member drive back the folders of existing buckets it lacks. */
  async #checkVolumes(s: Slot): Promise<void> {
    const buckets = this.#o.buckets;
    if (buckets === undefined) return;
    const now = this.#o.clock.now();
    if (this.#bucketList === undefined || now - this.#bucketList.at > 30_000) this.#bucketList = { at: now, names: await buckets.list() };
    const have = new Set((await s.member.listVols()).map((v) => v.name));
    const missing = this.#bucketList.names.filter((b) => !have.has(b));
    const made: string[] = [];
    for (const b of missing) {
      // A bucket deleted since the list was read must not come back as a stray folder.
      if (!(await buckets.exists(b))) continue;
      try {
        await s.member.makeVol(b, {
          healing: { detail: `bucket folder ${b} was missing and has been recreated; its objects are rebuilt here by the scanner and background heal`, ttlMs: this.#o.volumeIssueMs ?? 600_000 },
        });
        made.push(b);
      } catch (err) {
        if (toSvcError(err).code !== 'VolumeExists') throw err;
      }
    }
    if (made.length === 0) return;
    this.#volumesRecreated += made.length;
    this.#o.logger.warn(
      { event: 'heal_bucket_volume_recreated', endpoint: s.member.endpoint, pool: s.pool, set: s.set, slot: s.slot, buckets: made },
      'bucket folders were missing on a drive; recreated (the scanner heals their objects into it)',
    );
  }

  async #autoHeal(s: Slot, reason: string, prior?: DriveTracker): Promise<void> {
    const sequences = this.#o.sequences?.get();
    if (sequences === undefined) return;
    // One automatic rebuild at a time per node (the next replaced drive waits for the next check).
    if ([...this.#active.values()].some((t) => this.#autoTokens.has(t.healer) || t.healer === 'auto')) return;
    const tracker = this.#tracker(s, { driveId: s.member.expectedId!, state: 'pending', reason, healer: 'auto' }, prior);
    this.#replacements++;
    this.#o.logger.warn({ event: 'drive_replacement_detected', endpoint: s.member.endpoint, pool: s.pool, set: s.set, slot: s.slot, reason }, 'replaced drive detected; rebuilding it');
    this.#active.set(tracker.id, tracker);
    await this.#writeTracker(s, tracker);
    const seq = sequences.startSetHeal(s.pool, s.set);
    this.#autoTokens.add(seq.token);
    tracker.healer = seq.token;
  }

  /** Writes the format into every replaced slot of a set (the heal sequence's format stage). */
  async healSetFormat(pool: number, set: number, opts: { dryRun: boolean; healer: string }): Promise<HealResult | undefined> {
    const slots = this.#slots((s) => s.pool === pool && s.set === set);
    if (slots.length === 0) return undefined;
    const states = await Promise.all(
      slots.map(async (s) => {
        const info = await s.member.inner.diskInfo().catch(() => undefined);
        if (info === undefined || !info.online) return 'offline' as const;
        s.member.observe(info);
        return s.member.membership;
      }),
    );
    const toFormat = slots.filter((_, i) => states[i] === 'unformatted' || states[i] === 'corrupt');
    const stateOf = (m: Membership | 'offline'): DriveState => (m === 'member' ? 'ok' : m === 'offline' ? 'offline' : m === 'corrupt' || m === 'foreign' ? 'corrupt' : 'missing');
    const before: HealDrive[] = slots.map((s, i) => ({ uuid: s.member.expectedId ?? '', endpoint: s.member.endpoint, state: stateOf(states[i]!) }));
    const result: HealResult = {
      type: 'metadata',
      bucket: SYS_VOL,
      object: FORMAT_FILE,
      versionId: '',
      pool,
      set,
      dataBlocks: 0,
      parityBlocks: 0,
      diskCount: slots.length,
      setCount: 1,
      objectSize: 0,
      before,
      after: before.map((d) => ({ ...d })),
      outcome: 'ok',
      detail: '',
      shardsHealed: 0,
      bytesHealed: 0,
    };
    if (toFormat.length === 0) {
      const foreign = slots.filter((_, i) => states[i] === 'foreign');
      if (foreign.length > 0) {
        result.outcome = 'refused';
        result.detail = `${foreign.map((s) => s.member.endpoint).join(', ')}: formatted for another slot or deployment; not formatted over (move its data away and empty it to replace it)`;
      }
      return result;
    }
    if (opts.dryRun) {
      result.outcome = 'would-heal';
      result.detail = `would write the format into ${toFormat.length} replaced drive(s): ${toFormat.map((s) => s.member.endpoint).join(', ')}; dry run: nothing changed`;
      return result;
    }
    const notes: string[] = [];
    let failed = false;
    for (const s of toFormat) {
      const i = slots.indexOf(s);
      try {
        await this.#format(s, opts.healer, states[i] === 'corrupt' ? 'format.json unreadable' : 'drive without a format');
        result.after[i]!.state = 'ok';
        result.shardsHealed++;
        notes.push(`format written into slot ${s.slot} (${s.member.endpoint})`);
      } catch (err) {
        failed = true;
        notes.push(`${s.member.endpoint}: ${toSvcError(err).message}`);
      }
    }
    result.outcome = failed ? 'failed' : 'healed';
    result.detail = notes.join('; ');
    return result;
  }

  /** Writes the slot's format, prepares the drive and makes it a member again; the tracker says `healing`. */
  async #format(s: Slot, healer: string, reason: string): Promise<void> {
    const ids = this.#o.pools.ids[s.pool];
    const p = this.#o.pools.list[s.pool]!;
    if (ids === undefined) throw new Error('the pool has no format matrix');
    const fmt: FormatFile = {
      version: FORMAT_VERSION,
      format: 'erasure',
      id: this.#o.pools.deploymentId,
      erasure: {
        this: ids[s.set]![s.slot]!,
        sets: ids,
        distributionAlgo: DISTRIBUTION_ALGO,
        setCount: p.sets.length,
        setDriveCount: p.width,
        driveCount: p.sets.length * p.width,
      },
    };
    const inner = s.member.inner;
    const prior = this.#active.get(slotKey(s));
    const tracker = this.#tracker(s, { driveId: fmt.erasure.this, state: 'healing', reason: prior?.reason ?? reason, healer }, prior);
    await inner.writeAll(SYS_VOL, FORMAT_FILE, Buffer.from(`${JSON.stringify(fmt, null, 2)}\n`));
    const local = localDriveOf(inner);
    if (local !== undefined) {
      local.forgetFormat();
      await local.init();
    }
    // A remote drive reports its new format within its format cache's second.
    for (let i = 0; i < 20; i++) {
      s.member.observe(await inner.diskInfo());
      if (s.member.membership === 'member') break;
      await this.#o.clock.sleep(100);
    }
    await this.#writeTracker(s, tracker);
    this.#active.set(tracker.id, tracker);
    this.#o.logger.info({ event: 'drive_format_healed', endpoint: s.member.endpoint, pool: s.pool, set: s.set, slot: s.slot, healer }, 'format written into the replaced drive\'s slot');
  }

  /** A new tracker of slot `s` (its detection time kept from `prior`). */
  #tracker(s: Slot, f: Pick<DriveTracker, 'driveId' | 'state' | 'reason' | 'healer'>, prior?: DriveTracker): DriveTracker {
    const now = this.#o.clock.now();
    return {
      v: 1,
      id: slotKey(s),
      endpoint: s.member.endpoint,
      pool: s.pool,
      set: s.set,
      slot: s.slot,
      ...f,
      detectedAt: prior?.detectedAt ?? now,
      updatedAt: now,
      objectsScanned: 0,
      objectsHealed: 0,
      bytesHealed: 0,
    };
  }

  /**
   * The slots of (`pool`, `set`) that `healer` is rebuilding, in slot order:
   * looked up among the few active trackers (this runs once per healed
   * batch), not by listing every drive of the cluster.
   */
  #mine(pool: number, set: number, healer: string): [Slot, DriveTracker][] {
    const out: [Slot, DriveTracker][] = [];
    for (const t of this.#active.values()) {
      if (t.pool === pool && t.set === set && t.healer === healer && t.state === 'healing') out.push([{ pool, set, slot: t.slot, member: this.#o.pools.member(pool, set, t.slot) }, t]);
    }
    return out.sort((a, b) => a[0].slot - b[0].slot);
  }

  /** Copies a rebuild's counters into tracker `t`. */
  #count(t: DriveTracker, progress: { objects: number; healed: number; bytes: number }): void {
    t.objectsScanned = progress.objects;
    t.objectsHealed = progress.healed;
    t.bytesHealed = progress.bytes;
    t.updatedAt = this.#o.clock.now();
  }

  async setProgress(pool: number, set: number, healer: string, progress: { objects: number; healed: number; bytes: number }): Promise<void> {
    for (const [s, t] of this.#mine(pool, set, healer)) {
      this.#count(t, progress);
      if (t.updatedAt - (this.#lastWrite.get(t.id) ?? 0) >= PROGRESS_EVERY_MS) await this.#writeTracker(s, t);
    }
  }

  async setHealed(pool: number, set: number, healer: string, progress: { objects: number; healed: number; bytes: number; ok: boolean }): Promise<void> {
    for (const [s, t] of this.#mine(pool, set, healer)) {
      this.#count(t, progress);
      t.finishedAt = t.updatedAt;
      t.state = progress.ok ? 'completed' : 'failed';
      if (!progress.ok) t.lastError = 'some objects could not be healed (refused or failed); see the heal results and heal again';
      await this.#writeTracker(s, t);
      this.#active.delete(t.id);
      this.#autoTokens.delete(healer);
      this.#o.logger.info({ event: 'drive_rebuild_finished', endpoint: t.endpoint, state: t.state, objects: t.objectsScanned, bytes: t.bytesHealed }, `replaced drive rebuild ${t.state}`);
    }
  }

  async #readTracker(s: Slot): Promise<DriveTracker | undefined> {
    const raw = await s.member.inner.readAll(SYS_VOL, TRACKER_FILE).catch(() => undefined);
    return raw === undefined ? undefined : decodeTracker(raw);
  }

  async #writeTracker(s: Slot, t: DriveTracker): Promise<void> {
    this.#lastWrite.set(t.id, this.#o.clock.now());
    await s.member.inner.writeAll(SYS_VOL, TRACKER_FILE, Buffer.from(JSON.stringify(t))).catch((err: unknown) => {
      this.#o.logger.warn({ event: 'drive_tracker_write_failed', endpoint: t.endpoint, err }, 'could not write a replaced drive\'s recovery tracker');
    });
  }

  /**
   * A set heal ended without finishing its walk (stopped, failed): its
   * drives' trackers stay `healing`, and the drive's node takes the rebuild
   * up again once they are stale.
   */
  abandoned(token: string): void {
    for (const [id, t] of this.#active) if (t.healer === token) this.#active.delete(id);
    this.#autoTokens.delete(token);
  }
}
