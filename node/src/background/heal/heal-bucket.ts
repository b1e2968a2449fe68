/**
 * Bucket and `.svc.sys` metadata heal.
 *
 * A bucket is whole when its metadata record (a `.svc.sys` record, kept on
 * every pool) is healthy and every drive of every set holds its volume.
 * Heal makes the volume on the member drives that lack it, heals the
 * record's copies inside each pool (the object engine) and copies the
 * newest record to pools that miss it (`SysRecords.repair`).
 *
 * A volume without a record is a dangling bucket (a create that failed
 * half-way, a delete that missed drives): reported; `remove` deletes the
 * empty volumes, `recreate` writes a fresh record for it instead.
 *
 * `.svc.sys` records themselves (bucket records, `pool.bin`,
 * `rebalance.bin`, scanner usage, root-heal progress) heal like objects,
 * set by set, then across pools.
 */
import { type Drive, SYS_VOL } from '../../storage/drive.ts';
import type { Clock } from '../../util/clock.ts';
import { hasCode, toSvcError } from '../../util/errors.ts';
import { bucketRecordPath, makePoolVolumes } from '../../object/bucket-sync.ts';
import { type BucketRecord, encodeBucketRecord } from '../../object/buckets.ts';
import { MemberDrive } from '../../object/member-drive.ts';
import { SYS_SKIP, walkSet } from '../../object/namespace-walk.ts';
import type { Pools } from '../../object/pools.ts';
import type { SysRecords } from '../../object/sys-records.ts';
import { type HealEngine, healObject } from './heal-object.ts';
import type { DriveState } from './plan.ts';
import type { HealDrive, HealResult } from './types.ts';

export interface BucketHealOptions {
  dryRun: boolean;
  remove: boolean;
  recreate: boolean;
  deep: boolean;
}

export interface MetaHealDeps extends HealEngine {
  readonly pools: Pools;
  readonly records: SysRecords;
  readonly clock: Clock;
}

interface DriveVol {
  drive: Drive;
  state: DriveState;
}

async function volumeStates(pools: Pools, bucket: string): Promise<DriveVol[][]> {
  return Promise.all(
    pools.list.flatMap((p) =>
      p.sets.map((set) =>
        Promise.all(
          set.drives.map(async (drive): Promise<DriveVol> => {
            if (!drive.isOnline()) return { drive, state: 'offline' };
            try {
              await drive.statVol(bucket);
              return { drive, state: 'ok' };
            } catch (err) {
              return { drive, state: hasCode(err, 'VolumeNotFound') ? 'missing' : 'offline' };
            }
          }),
        ),
      ),
    ),
  );
}

function toHealDrives(sets: DriveVol[][]): HealDrive[] {
  return sets.flat().map((d) => ({ uuid: d.drive instanceof MemberDrive ? (d.drive.expectedId ?? '') : '', endpoint: d.drive.endpoint, state: d.state }));
}

/** Heals one bucket: its volume on every drive, its record in every pool. */
export async function healBucket(deps: MetaHealDeps, bucket: string, opts: BucketHealOptions): Promise<HealResult> {
  const pools = deps.pools;
  const sets = await volumeStates(pools, bucket);
  const recPath = bucketRecordPath(bucket);
  const view = await deps.records.inspect(recPath).catch(() => undefined);
  const exists = view?.winner?.data !== undefined;
  const result: HealResult = {
    type: 'bucket',
    bucket,
    object: '',
    versionId: '',
    pool: -1,
    set: -1,
    dataBlocks: 0,
    parityBlocks: 0,
    diskCount: sets.reduce((a, s) => a + s.length, 0),
    setCount: sets.length,
    objectSize: 0,
    before: toHealDrives(sets),
    after: toHealDrives(sets),
    outcome: 'ok',
    detail: '',
    shardsHealed: 0,
    bytesHealed: 0,
  };
  const missing = sets.flat().filter((d) => d.state === 'missing');
  const present = sets.flat().filter((d) => d.state === 'ok');
  const staleRecord = view?.pools.filter((p) => p.state === 'missing' || p.state === 'stale').map((p) => p.pool) ?? [];

  if (view === undefined) {
    result.outcome = 'refused';
    result.detail = 'the bucket record cannot be read on any pool now (too many drives offline); heal again once they are back';
    return result;
  }
  if (!exists) {
    if (present.length === 0) {
      result.outcome = 'absent';
      result.detail = 'no such bucket';
      return result;
    }
    const what = `dangling bucket: its volume is on ${present.length} drive(s) but no pool holds its record`;
    if (opts.dryRun || (!opts.remove && !opts.recreate)) {
      result.outcome = 'dangling';
      result.detail = `${what}; remove=true deletes the empty volumes, recreate=true writes its record${opts.dryRun ? ' (dry run: nothing changed)' : ''}`;
      return result;
    }
    if (opts.recreate) {
      const rec: BucketRecord = { v: 2, name: bucket, created: deps.clock.now(), versioning: 'Unversioned', tags: '', location: '', configs: {} };
      await deps.records.write(recPath, encodeBucketRecord(rec));
      result.detail = `${what}: record recreated`;
    } else {
      const left: string[] = [];
      for (const d of present) {
        await d.drive.deleteVol(bucket, false).then(
          () => {
            d.state = 'missing';
          },
          (err: unknown) => left.push(`${d.drive.endpoint}: ${toSvcError(err).code}`),
        );
      }
      result.after = toHealDrives(sets);
      result.outcome = left.length > 0 ? 'failed' : 'removed';
      result.detail = left.length > 0 ? `${what}; volumes not removed (not empty or failing): ${left.join(', ')}` : `${what}: empty volumes removed`;
      return result;
    }
  }

  if (missing.length === 0 && staleRecord.length === 0 && exists) {
    const rec = await healRecordCopies(deps, recPath, opts);
    result.outcome = rec.outcome;
    result.detail = rec.detail;
    result.shardsHealed = rec.shards;
    return result;
  }
  if (opts.dryRun) {
    result.outcome = 'would-heal';
    result.detail = [missing.length > 0 ? `volume missing on ${missing.length} drive(s)` : '', staleRecord.length > 0 ? `record missing or stale on pool(s) ${staleRecord.join(', ')}` : '', 'dry run: nothing changed']
      .filter(Boolean)
      .join('; ');
    return result;
  }
  // The volumes are made the way bucket sync makes them (one mechanism).
  const failures: string[] = [];
  const byDrive = new Map(sets.flat().map((d) => [d.drive, d] as const));
  for (const pool of pools.list) {
    if (!pool.sets.some((set) => set.drives.some((d) => byDrive.get(d)?.state === 'missing'))) continue;
    const r = await makePoolVolumes(pool, bucket, (d) => byDrive.get(d)?.state !== 'missing');
    for (const d of r.created) byDrive.get(d)!.state = 'ok';
    if (!r.ok) failures.push(`pool ${pool.index}: ${r.reason}`);
  }
  const rec = await healRecordCopies(deps, recPath, opts);
  result.after = toHealDrives(sets);
  const made = missing.filter((d) => d.state === 'ok').length;
  result.shardsHealed = made + rec.shards;
  if (failures.length > 0 || rec.outcome === 'failed') {
    result.outcome = 'failed';
    result.detail = [...failures, rec.outcome === 'failed' ? rec.detail : ''].filter(Boolean).join('; ');
  } else {
    result.outcome = 'healed';
    result.detail = [made > 0 ? `volume made on ${made} drive(s)` : '', rec.detail].filter(Boolean).join('; ');
  }
  return result;
}

/** Heals a record's copies in every pool's set, then copies the newest to pools that miss it. */
async function healRecordCopies(deps: MetaHealDeps, path: string, opts: { dryRun: boolean; deep: boolean }): Promise<{ outcome: 'ok' | 'healed' | 'would-heal' | 'failed'; detail: string; shards: number }> {
  let shards = 0;
  const notes: string[] = [];
  let failed = false;
  let would = false;
  for (const pool of deps.pools.list) {
    const r = await healObject(deps, deps.pools.setOf(pool, path), SYS_VOL, path, { dryRun: opts.dryRun, remove: false, deep: opts.deep });
    shards += r.shardsHealed;
    if (r.outcome === 'healed') notes.push(`pool ${pool.index}: ${r.detail}`);
    if (r.outcome === 'would-heal') would = true;
    if (r.outcome === 'failed' || r.outcome === 'refused') {
      failed = true;
      notes.push(`pool ${pool.index}: ${r.detail}`);
    }
  }
  if (!opts.dryRun && deps.pools.count > 1) {
    const rep = await deps.records.repair(path);
    if (rep.repaired.length > 0) notes.push(`record copied to pool(s) ${rep.repaired.join(', ')}`);
    shards += rep.repaired.length;
    for (const f of rep.failed) {
      failed = true;
      notes.push(`pool ${f.pool}: ${f.error.message}`);
    }
  }
  const outcome = failed ? 'failed' : would ? 'would-heal' : shards > 0 ? 'healed' : 'ok';
  return { outcome, detail: notes.join('; '), shards };
}

/**
 * Every `.svc.sys` record of every set (staging and multipart areas left
 * out), healed like objects; records missing on a pool are copied there.
 * `each` receives every result that found something.
 */
export async function healSysRecords(
  deps: MetaHealDeps,
  opts: { dryRun: boolean; deep: boolean; only?: (pool: number, set: number) => boolean },
  each: (r: HealResult) => Promise<void> | void,
  signal?: AbortSignal,
): Promise<void> {
  const names = new Set<string>();
  for (const pool of deps.pools.list) {
    for (const set of pool.sets) {
      if (opts.only && !opts.only(pool.index, set.index)) continue;
      for await (const e of walkSet(set, SYS_VOL, { skip: SYS_SKIP })) {
        if (signal?.aborted) return;
        names.add(e.name);
        const r = await healObject(deps, set, SYS_VOL, e.name, { dryRun: opts.dryRun, remove: false, deep: opts.deep });
        if (r.outcome !== 'ok' && r.outcome !== 'absent') await each(r);
      }
    }
  }
  if (opts.dryRun || deps.pools.count < 2) return;
  for (const name of names) {
    if (signal?.aborted) return;
    const rep = await deps.records.repair(name).catch(() => undefined);
    if (rep && rep.repaired.length > 0) {
      await each({
        type: 'metadata',
        bucket: SYS_VOL,
        object: name,
        versionId: '',
        pool: -1,
        set: -1,
        dataBlocks: 0,
        parityBlocks: 0,
        diskCount: 0,
        setCount: deps.pools.list.reduce((a, p) => a + p.sets.length, 0),
        objectSize: rep.view.winner?.data?.length ?? 0,
        before: [],
        after: [],
        outcome: 'healed',
        detail: `record copied to pool(s) ${rep.repaired.join(', ')}`,
        shardsHealed: rep.repaired.length,
        bytesHealed: 0,
      });
    }
  }
}
