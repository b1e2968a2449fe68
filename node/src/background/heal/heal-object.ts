/**
 * The object heal engine: one function every healer uses (admin heal,
 * read-repair queue, scanner, drive rebuild). Under the (bucket, object)
 * lock that PUT, delete, multipart complete and data movement take:
 *
 * 1. read every drive's journal (with inline data) and vote the
 *    authoritative version set (`plan.ts`);
 * 2. check every drive's shards of every authoritative data version (file
 *    sizes, or with `deep` every bitrot frame; inline shards in memory);
 * 3. plan per version which drives need data rebuilt or metadata rewritten,
 *    and refuse the whole object, changing nothing, when one cannot be
 *    healed now (geometry that does not match the set, zero parity, too few
 *    good shards, drives offline that could decide the vote);
 * 4. carry it out through the normal durable path: the missing shards are
 *    rebuilt by reading K good shards (bitrot-verified, decoded when needed)
 *    and re-encoding, staged under `.svc.sys/tmp`, fsync'd and verified,
 *    then committed with `renameData` (atomic xl.meta); copies that lost the
 *    vote are dropped, dangling versions only with `remove`.
 *
 * The result carries every drive's state before and after.
 */
import { randomUUID } from 'node:crypto';
import { BitrotVerifier, shardFileDataSize, shardSize } from '../../erasure/index.ts';
import { type Drive, type FileVersion, SYS_VOL, TMP_DIR, XL_META } from '../../storage/drive.ts';
import { objectPath } from '../../storage/object-path.ts';
import { baseVersionId } from '../../storage/xl-meta.ts';
import { hasCode, SvcError, toSvcError } from '../../util/errors.ts';
import type { Logger } from '../../util/logger.ts';
import type { BadShardReason, ErasureSet, StagedShards } from '../../object/erasure-set.ts';
import { MemberDrive } from '../../object/member-drive.ts';
import { type LockClock, removalBlocked } from '../../object/object-lock.ts';
import type { NamespaceLocker } from '../../object/ns-lock.ts';
import type { VersionGroup } from '../../object/quorum.ts';
import { classifySlot, type DriveState, NO_PARITY, type ObjectVote, planVersion, type ShardCheck, type SlotRead, type VersionPlan, voteObject, worse } from './plan.ts';
import { SourceFailure, stageRebuiltPart } from './rebuild-stream.ts';
import type { HealDrive, HealObjectOptions, HealResult } from './types.ts';

/** How long a drive whose bucket folder heal recreated reports itself as healing. */
export const VOLUME_ISSUE_MS = 600_000;

export interface HealEngine {
  readonly locker: NamespaceLocker;
  readonly logger: Logger;
  /** The object-lock clock (server time plus the cluster's skew allowance): `remove` never takes a locked version. */
  lockClock(): LockClock;
}

/**
 * Ids of the dangling versions object lock protects (a legal hold, or a
 * retention still running at the lock clock; heal never bypasses
 * GOVERNANCE). Any copy's lock counts: the copies of a dangling version
 * could not be voted, so the strictest one decides.
 */
function lockedIds(groups: readonly VersionGroup[], clock: LockClock): Set<string> {
  const out = new Set<string>();
  for (const g of groups) {
    const copies = [g.version, ...g.perSlot.filter((c): c is FileVersion => c !== undefined)];
    if (copies.some((c) => removalBlocked(c.sysMeta, clock) !== undefined)) for (const c of copies) out.add(c.versionId);
  }
  return out;
}

function uuidOf(d: Drive): string {
  return d instanceof MemberDrive ? (d.expectedId ?? '') : '';
}

/** The drives of a set with one state each. */
export function healDrives(set: ErasureSet, states: readonly DriveState[]): HealDrive[] {
  return set.drives.map((d, s) => ({ uuid: uuidOf(d), endpoint: d.endpoint, state: states[s]! }));
}

/** A drive's own copy of a version: its shard index (and no inline data). */
function forSlot(v: FileVersion, slot: number): FileVersion {
  const out: FileVersion = { ...v };
  delete out.inlineData;
  if (v.erasure) out.erasure = { ...v.erasure, index: v.erasure.distribution[slot]! };
  return out;
}

function inlineIntact(copy: FileVersion): boolean {
  const e = copy.erasure!;
  const data = copy.inlineData;
  if (data === undefined) return false;
  try {
    const v = new BitrotVerifier(shardSize(e.blockSize, e.data), shardFileDataSize(copy.size, e.blockSize, e.data));
    v.push(data);
    v.end();
    return true;
  } catch {
    return false;
  }
}

/** Each drive's check of its shards of one data version (`undefined`: no copy or no answer). */
async function checkShards(set: ErasureSet, vol: string, path: string, g: VersionGroup, deep: boolean): Promise<ShardCheck[]> {
  const v = g.version;
  if (v.type !== 'object' || !v.erasure) return g.perSlot.map((c) => (c ? [] : undefined));
  return Promise.all(
    g.perSlot.map(async (copy, s): Promise<ShardCheck> => {
      if (copy === undefined) return undefined;
      if (v.inline) return [inlineIntact(copy) ? 'ok' : 'corrupt'];
      try {
        return await set.drives[s]!.checkParts(vol, path, copy, { deep });
      } catch (err) {
        // A drive that cannot answer now holds nothing usable for this heal.
        if (hasCode(err, 'FileCorrupt')) return v.parts.map(() => 'corrupt');
        return undefined;
      }
    }),
  );
}

function slotStates(reads: readonly SlotRead[], plans: readonly VersionPlan[], vote: ObjectVote): DriveState[] {
  return reads.map((r, s) => {
    let st: DriveState = r.kind === 'offline' ? 'offline' : r.kind === 'corrupt' ? 'corrupt' : plans.length > 0 ? 'ok' : 'missing';
    for (const p of plans) st = worse(st, p.states[s]!);
    if (plans.length === 0 && vote.dangling.copies.some((c) => c.slot === s)) st = worse(st, 'corrupt');
    return st;
  });
}

/** Heals one object (or `.svc.sys` record) of `set` under its namespace lock. */
export async function healObject(engine: HealEngine, set: ErasureSet, vol: string, key: string, opts: HealObjectOptions): Promise<HealResult> {
  const unlock = await engine.locker.lock(vol, key);
  try {
    return await healLocked(engine, set, vol, key, opts, 0);
  } finally {
    unlock();
  }
}

async function healLocked(engine: HealEngine, set: ErasureSet, vol: string, key: string, opts: HealObjectOptions, attempt: number): Promise<HealResult> {
  const n = set.width;
  const path = objectPath(key);
  const reads = (await set.readMetas(vol, path, true)).map(classifySlot);
  const vote = voteObject(reads);
  const checks = await Promise.all(vote.authoritative.map((g) => checkShards(set, vol, path, g, opts.deep)));
  const plans = vote.authoritative.map((g, i) => planVersion(g, reads, checks[i]!, n));
  const before = slotStates(reads, plans, vote);
  const newest = plans[0]?.group.version;
  const dataVersion = plans.find((p) => p.group.version.erasure)?.group.version.erasure;
  const result: HealResult = {
    type: vol === SYS_VOL ? 'metadata' : 'object',
    bucket: vol,
    object: key,
    versionId: newest?.versionId ?? '',
    pool: set.pool,
    set: set.index,
    dataBlocks: dataVersion?.data ?? 0,
    parityBlocks: dataVersion?.parity ?? 0,
    diskCount: n,
    setCount: 1,
    objectSize: newest?.size ?? 0,
    before: healDrives(set, before),
    after: healDrives(set, before),
    outcome: 'ok',
    detail: '',
    shardsHealed: 0,
    bytesHealed: 0,
  };

  if (plans.length === 0 && vote.dangling.groups.length === 0 && vote.undecided.length === 0 && vote.noParity.length === 0 && vote.unproven.length === 0) {
    result.outcome = 'absent';
    result.detail = 'no drive holds this object';
    return result;
  }
  const refusals = plans.filter((p) => p.refusal !== undefined && !p.dataLost).map((p) => `version ${p.group.version.versionId}: ${p.refusal}`);
  if (vote.undecided.length > 0) {
    refusals.push(`${vote.offline} drive(s) did not answer and could hold a newer copy of version(s) ${vote.undecided.join(', ')}; heal again once they are back`);
  }
  for (const id of vote.noParity) refusals.push(`version ${id}: ${NO_PARITY}`);
  if (refusals.length > 0) {
    result.outcome = 'refused';
    result.detail = refusals.join('; ');
    return result;
  }
  // A version whose data is lost was once complete: only an operator's explicit removal takes it.
  const lost = plans.filter((p) => p.dataLost && opts.removeLost === true);
  const lostKept = plans.filter((p) => p.dataLost && opts.removeLost !== true);
  const work = plans.filter((p) => p.refusal === undefined);
  const dangling = {
    groups: [...vote.dangling.groups, ...lost.map((p) => p.group)],
    copies: [...vote.dangling.copies, ...lost.flatMap((p) => p.group.perSlot.flatMap((c, slot) => (c ? [{ slot, id: c.versionId }] : [])))],
  };
  const locked = dangling.groups.length > 0 ? lockedIds(dangling.groups, engine.lockClock()) : new Set<string>();
  const removable = dangling.copies.filter((c) => !locked.has(c.id));
  const lockNote = locked.size > 0 ? `; version(s) under object lock kept: ${[...new Set(dangling.groups.filter((g) => locked.has(g.version.versionId)).map((g) => g.version.versionId))].join(', ')}` : '';
  const keptNote = [
    ...lostKept.map((p) => `version ${p.group.version.versionId} lost its data (${p.refusal}); kept until an operator heals with remove=true`),
    ...(vote.unproven.length > 0 ? [`version(s) ${vote.unproven.join(', ')} below quorum but damaged drives may hold them; kept`] : []),
  ].join('; ');
  const danglingNote =
    dangling.groups.length > 0
      ? `${dangling.groups.length} dangling version(s) (below read quorum for good: ${lost.map((p) => `${p.group.version.versionId}: ${p.refusal}`).concat(vote.dangling.groups.map((g) => `${g.version.versionId}: ${g.votes} of ${g.quorum} copies`)).join('; ')})${lockNote}`
      : '';
  const targets = work.reduce((a, p) => a + p.dataTargets.length + p.metaTargets.length, 0);
  const hasWork = targets > 0 || vote.stale.length > 0 || (opts.remove && removable.length > 0);

  if (opts.dryRun || !hasWork) {
    if (work.length === 0 && dangling.groups.length > 0) {
      result.outcome = 'dangling';
      result.detail = opts.remove && !opts.dryRun ? danglingNote : `${danglingNote}; removed only with remove=true`;
    } else if (hasWork || dangling.groups.length > 0) {
      result.outcome = opts.dryRun && hasWork ? 'would-heal' : dangling.groups.length > 0 ? 'dangling' : 'ok';
      result.detail = [
        targets > 0 ? `${targets} drive copies to rebuild or rewrite` : '',
        vote.stale.length > 0 ? `${vote.stale.length} stale copies to drop` : '',
        danglingNote,
        opts.dryRun ? 'dry run: nothing changed' : '',
      ]
        .filter(Boolean)
        .join('; ');
    }
    return keep(result, keptNote);
  }

  const after = [...before];
  const failed = new Map<number, unknown>();
  const fail = (s: number, err: unknown) => {
    if (!failed.has(s)) failed.set(s, err);
    engine.logger.warn({ event: 'heal_drive_write_failed', bucket: vol, object: key, slot: s, endpoint: set.drives[s]!.endpoint, err }, 'heal could not write a drive');
  };
  const drives = set.drives;
  const badSources = new Set<number>();

  // Only drives that are members of their slot right now are written: a
  // drive emptied a moment ago must not be filled before its format is back.
  const targeted = new Set(work.flatMap((p) => [...p.dataTargets, ...p.metaTargets]));
  await Promise.all(
    [...targeted].map(async (s) => {
      const d = drives[s]!;
      if (!(d instanceof MemberDrive) || d.observedWithin(1_000)) {
        if (!d.isOnline()) fail(s, new SvcError('DiskNotFound', `${d.endpoint} is offline`));
        return;
      }
      await d.diskInfo().catch(() => undefined);
      if (!d.isOnline()) fail(s, new SvcError('DiskNotFound', `${d.endpoint} is not usable now (offline or not a member of its slot)`));
    }),
  );
  // Drives without the bucket's volume get it first (they hold none of its objects); the drive reports the damage.
  await Promise.all(
    [...targeted]
      .filter((s) => reads[s]!.kind === 'no-volume' && !failed.has(s))
      .map(async (s) => {
        try {
          await drives[s]!.makeVol(vol, { healing: { detail: `bucket folder ${vol} was missing and has been recreated; its objects are rebuilt here by heal`, ttlMs: VOLUME_ISSUE_MS } });
          engine.logger.warn({ event: 'heal_bucket_volume_recreated', bucket: vol, endpoint: drives[s]!.endpoint, object: key }, 'bucket folder missing on a drive: recreated by heal');
        } catch (err) {
          if (!hasCode(err, 'VolumeExists')) fail(s, err);
        }
      }),
  );

  // Copies that lost the vote go (a base id whose version lives on that drive
  // under a superseded name is replaced by the rewrite below instead).
  const authOf = new Map(vote.authoritative.map((g) => [g.version.versionId, g]));
  for (const { slot, id } of vote.stale) {
    const auth = authOf.get(baseVersionId(id))?.perSlot[slot];
    if (id === baseVersionId(id) && auth !== undefined && auth.versionId !== id) continue;
    await drives[slot]!.deleteVersion(vol, path, id).catch((err: unknown) => {
      if (!hasCode(err, 'FileNotFound')) fail(slot, err);
    });
  }

  // An unreadable journal is replaced: its entries and data dirs go, every version is rebuilt there.
  for (const s of targeted) {
    if (reads[s]!.kind !== 'corrupt' || failed.has(s)) continue;
    try {
      await drives[s]!.delete(vol, `${path}/${XL_META}`, { recursive: false });
      for (const p of work) {
        const dd = p.group.version.dataDir;
        if (dd !== '') await drives[s]!.delete(vol, `${path}/${dd}`, { recursive: true }).catch((err: unknown) => (hasCode(err, 'FileNotFound') ? undefined : Promise.reject(err)));
      }
    } catch (err) {
      if (!hasCode(err, 'FileNotFound')) fail(s, err);
    }
  }

  for (const p of work) {
    const v = p.group.version;
    for (const s of p.metaTargets) {
      if (failed.has(s)) continue;
      const copy = p.group.perSlot[s];
      const next = forSlot(v, s);
      if (v.inline && copy?.inlineData) next.inlineData = copy.inlineData;
      try {
        await drives[s]!.writeMetadata(vol, path, next);
        result.shardsHealed++;
      } catch (err) {
        fail(s, err);
      }
    }
    if (p.dataTargets.length === 0) continue;
    const todo = p.dataTargets.filter((s) => !failed.has(s));
    if (todo.length === 0) continue;
    try {
      const r = await rebuild(
        engine,
        set,
        vol,
        path,
        key,
        p,
        todo,
        reads.map((x) => x.kind === 'corrupt'),
      );
      result.shardsHealed += r.ok.length;
      result.bytesHealed += r.bytes;
      for (const [s, err] of r.failed) fail(s, err);
      for (const s of r.badSources ?? []) badSources.add(s);
    } catch (err) {
      const e = toSvcError(err);
      if (err instanceof SourceFailure && attempt === 0) {
        // A source turned out bad while read (a normal scan checks sizes only): vote and plan again, deep.
        engine.logger.warn({ event: 'heal_source_bad', bucket: vol, object: key, slots: err.slots }, 'a heal source shard failed; retrying with a deep check');
        return healLocked(engine, set, vol, key, { ...opts, deep: true }, attempt + 1);
      }
      for (const s of todo) fail(s, e);
    }
  }

  if (badSources.size > 0 && attempt === 0 && failed.size === 0) {
    // Sources that failed while read (a size check cannot see bitrot) were
    // replaced by spares; heal again, deep, so they are rebuilt too.
    engine.logger.warn({ event: 'heal_source_bad', bucket: vol, object: key, slots: [...badSources] }, 'heal sources failed while read; healing them too');
    const again = await healLocked(engine, set, vol, key, { ...opts, deep: true }, attempt + 1);
    again.before = result.before;
    again.shardsHealed += result.shardsHealed;
    again.bytesHealed += result.bytesHealed;
    if (again.outcome === 'ok') again.outcome = 'healed';
    return again;
  }

  if (opts.remove && removable.length > 0) {
    for (const { slot, id } of removable) {
      await drives[slot]!.deleteVersion(vol, path, id).catch((err: unknown) => {
        if (!hasCode(err, 'FileNotFound')) fail(slot, err);
      });
    }
    // Never a silent deletion: what went, from where, and why.
    engine.logger.warn(
      {
        event: 'heal_versions_removed',
        bucket: vol,
        object: key,
        versions: [...new Set(removable.map((c) => baseVersionId(c.id)))],
        drives: [...new Set(removable.map((c) => drives[c.slot]!.endpoint))],
        reason: danglingNote,
      },
      'heal removed dangling versions (below read quorum for good)',
    );
  }

  for (let s = 0; s < n; s++) {
    if (failed.has(s)) {
      if (hasCode(failed.get(s), 'DiskNotFound')) after[s] = 'offline';
      continue;
    }
    if (before[s] === 'offline') continue;
    if (work.length === 0) after[s] = opts.remove && locked.size === 0 ? 'missing' : before[s]!;
    else after[s] = 'ok';
  }
  result.after = healDrives(set, after);
  if (failed.size > 0) {
    result.outcome = 'failed';
    result.detail = [...failed].map(([s, err]) => `${drives[s]!.endpoint}: ${err instanceof Error ? err.message : String(err)}`).join('; ');
  } else if (work.length === 0) {
    result.outcome = opts.remove && removable.length > 0 ? 'removed' : 'dangling';
    result.detail = danglingNote;
  } else {
    result.outcome = 'healed';
    result.detail = [
      result.shardsHealed > 0 ? `${result.shardsHealed} drive copies rebuilt or rewritten` : '',
      vote.stale.length > 0 ? `${vote.stale.length} stale copies dropped` : '',
      danglingNote === '' ? '' : opts.remove ? `${danglingNote} removed` : `${danglingNote}; removed only with remove=true`,
    ]
      .filter(Boolean)
      .join('; ');
  }
  return keep(result, keptNote);
}

/**
 * Versions left in place although below quorum (lost data without an
 * operator's removal, copies damaged drives may still hold) are said in the
 * detail; with nothing else done the outcome is `refused`, so background
 * heal retries and then gives up with a log instead of reporting success.
 */
function keep(result: HealResult, note: string): HealResult {
  if (note === '') return result;
  result.detail = result.detail === '' ? note : `${result.detail}; ${note}`;
  if (result.outcome === 'ok') result.outcome = 'refused';
  return result;
}

/**
 * Rebuilds one version's shards on `targets` from its good `sources`, staged,
 * fsync'd and verified, then committed drive by drive: shard files
 * reconstructed block by block (`rebuild-stream.ts`); an inline version's
 * small data read, re-encoded and written into each target's journal.
 */
async function rebuild(
  engine: HealEngine,
  set: ErasureSet,
  vol: string,
  path: string,
  key: string,
  plan: VersionPlan,
  targets: number[],
  hadData: readonly boolean[],
): Promise<{ ok: number[]; failed: Map<number, unknown>; bytes: number; badSources?: number[] }> {
  const v = plan.group.version;
  const failed = new Map<number, unknown>();
  const badSources: number[] = [];
  if (v.inline) return rebuildInline(set, vol, path, key, plan, targets, failed);

  const stagePath = `${TMP_DIR}/${randomUUID()}`;
  let alive = [...targets];
  let shardBytes = 0;
  try {
    for (const part of v.parts) {
      const staged = await stageRebuiltPart(set, vol, path, v, part, plan.sources, alive, stagePath);
      for (const s of alive) if (!staged.alive[s]) failed.set(s, new SvcError('DiskNotFound', 'drive dropped out of the heal'));
      alive = alive.filter((s) => staged.alive[s]);
      shardBytes += staged.shardBytes;
      badSources.push(...staged.badSources);
      if (alive.length === 0) break;
    }

    const ok: number[] = [];
    for (const s of alive) {
      const d = set.drives[s]!;
      try {
        // A drive that held the version (or an unreadable journal) moves its bad data dir out of the way first.
        if (plan.group.perSlot[s] !== undefined || hadData[s]) {
          await d.delete(vol, `${path}/${v.dataDir}`, { recursive: true }).catch((err: unknown) => {
            if (!hasCode(err, 'FileNotFound')) throw err;
          });
        }
        const r = await d.renameData(SYS_VOL, stagePath, forSlot(v, s), vol, path);
        for (const id of r.superseded ?? []) {
          await d.deleteVersion(vol, path, id).catch((err: unknown) => {
            if (!hasCode(err, 'FileNotFound')) throw err;
          });
        }
        ok.push(s);
      } catch (err) {
        failed.set(s, err);
      }
    }
    return { ok, failed, bytes: ok.length * shardBytes, badSources };
  } finally {
    // Only the targets staged anything.
    await Promise.all(targets.map((t) => set.drives[t]!.delete(SYS_VOL, stagePath, { recursive: true }).catch(() => undefined)));
    engine.logger.debug({ event: 'heal_rebuild', bucket: vol, path, targets }, 'heal rebuilt shards');
  }
}

/** An inline version: its (small) data read from the sources, encoded, each target's shard written into its journal. */
async function rebuildInline(
  set: ErasureSet,
  vol: string,
  path: string,
  key: string,
  plan: VersionPlan,
  targets: number[],
  failed: Map<number, unknown>,
): Promise<{ ok: number[]; failed: Map<number, unknown>; bytes: number }> {
  const v = plan.group.version;
  const e = v.erasure!;
  const sources = new Set(plan.sources);
  const src: VersionGroup = { ...plan.group, perSlot: plan.group.perSlot.map((c, s) => (sources.has(s) ? c : undefined)) };
  const bad = new Set<number>();
  const onBadShards = (_reason: BadShardReason, slots: number[]) => {
    for (const s of slots) if (sources.has(s)) bad.add(s);
  };
  let staged: StagedShards;
  try {
    // stageShards copies every chunk before it asks for the next: reused read buffers are safe.
    staged = await set.stageShards(set.readRange(vol, path, src, 0, v.size, vol, key, { onBadShards, reuse: true }), v.size, {
      data: e.data,
      parity: e.parity,
      distribution: e.distribution,
      inlineBudget: Number.MAX_SAFE_INTEGER,
      partNumber: 1,
      dataDir: '',
      only: targets,
    });
  } catch (err) {
    throw bad.size > 0 ? new SourceFailure([...bad], err) : err;
  }
  const ok: number[] = [];
  for (const s of targets) {
    if (!staged.alive[s]) {
      failed.set(s, new SvcError('DiskNotFound', 'drive dropped out of the heal'));
      continue;
    }
    try {
      await set.drives[s]!.writeMetadata(vol, path, { ...forSlot(v, s), inlineData: staged.inlineData[s]! });
      ok.push(s);
    } catch (err) {
      failed.set(s, err);
    }
  }
  return { ok, failed, bytes: ok.reduce((a, s) => a + staged.inlineData[s]!.length, 0) };
}
