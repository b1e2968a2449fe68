/**
 * Applies a bucket's lifecycle rules to one object, under the object's
 * namespace lock, from a fresh quorum read (never from what a scanner saw a
 * moment ago): the rules engine selects (`rules.ts`), then each selected
 * version is expired through the same primitives a client's delete uses —
 * a delete marker (current version of a versioned bucket), or a majority
 * version delete — and a version under object lock is never removed
 * (`removalBlocked`; lifecycle never bypasses GOVERNANCE). Deleting
 * noncurrent versions can leave an expired object delete marker, so the
 * selection runs again (at most a few rounds) until nothing more is due.
 *
 * Crash safety is that of the primitives, one version at a time: a version
 * delete unlists the version on each drive before removing its data, and is
 * visible only once it passes the read vote, so each version is either still
 * whole or gone; a delete marker commits like any write (old or new state).
 */
import { randomUUID } from 'node:crypto';
import type { FileVersion } from '../../storage/drive.ts';
import { objectPath } from '../../storage/object-path.ts';
import { hasCode } from '../../util/errors.ts';
import type { Logger } from '../../util/logger.ts';
import type { Governance } from '../governance.ts';
import type { NamespaceLocker } from '../ns-lock.ts';
import { newDeleteMarker } from '../object-info.ts';
import { type PostCommitHook, withPostCommit } from '../post-commit.ts';
import { removalBlocked } from '../object-lock.ts';
import { type Located, pickNewest, type Pools } from '../pools.ts';
import { groupVersions, listedVersions } from '../quorum.ts';
import { plainPartSizes } from '../sse.ts';
import type { VersioningStatus } from '../types.ts';
import { type LifecycleAction, type LifecycleConfig, selectVersions, type VersionFacts } from './rules.ts';

export interface LifecycleOutcome {
  /** Versions permanently deleted (noncurrent versions, unversioned objects). */
  deleted: number;
  /** Delete markers added (current versions of versioned buckets expired). */
  markersAdded: number;
  /** Expired object delete markers removed. */
  markersRemoved: number;
  /** Selected versions kept because object lock protects them. */
  locked: number;
  /** Why the object was left alone this time (no quorum, undecided versions), if it was. */
  skipped?: string;
  /** What was done, for logs and tests. */
  actions: (LifecycleAction & { done: boolean })[];
}

export interface ApplyDeps {
  pools: Pools;
  locker: NamespaceLocker;
  governance: Governance;
  logger: Logger;
  /** Told of each expiry (bucket events `s3:LifecycleExpiration:*`). */
  postCommit?: PostCommitHook;
}

const MAX_ROUNDS = 3;

/** What the rules engine sees of a stored version. */
export function versionFacts(v: FileVersion): VersionFacts {
  const deleteMarker = v.type === 'delete';
  return {
    versionId: v.versionId,
    deleteMarker,
    modTime: v.modTime,
    size: deleteMarker ? 0 : plainPartSizes(v).reduce((a, b) => a + b, 0),
    tags: v.tags,
  };
}

function emptyOutcome(): LifecycleOutcome {
  return { deleted: 0, markersAdded: 0, markersRemoved: 0, locked: 0, actions: [] };
}

/** The object's committed versions (newest first) on the pool holding it, or why it cannot be decided now. */
function committedVersions(loc: Located): { versions: FileVersion[] } | { skipped: string } {
  const { groups, failed } = groupVersions(loc.metas);
  const committed = listedVersions(groups, (g) => g.quorum);
  const keep = new Set(committed);
  // A version neither at quorum nor ruled out (its drives did not answer) might be real: decide later.
  const undecided = groups.some((g) => !keep.has(g) && g.votes < g.quorum && g.votes + failed >= g.quorum && !committed.some((c) => c.version.versionId === g.version.versionId));
  if (undecided) return { skipped: 'versions without a decided quorum' };
  return { versions: committed.map((g) => g.version) };
}

/** Applies `config` to `bucket/key` at `now` (Unix ms of the caller's clock). */
export async function applyLifecycle(
  d: ApplyDeps,
  bucket: string,
  key: string,
  config: LifecycleConfig,
  versioning: VersioningStatus,
  now: number,
): Promise<LifecycleOutcome> {
  const out = emptyOutcome();
  const path = objectPath(key);
  const unlock = await d.locker.lock(bucket, key);
  try {
    const refused = new Set<string>();
    for (let round = 0; round < MAX_ROUNDS; round++) {
      let loc: Located | undefined;
      try {
        loc = pickNewest(await d.pools.lookup(bucket, key), bucket, key);
      } catch (err) {
        if (!hasCode(err, 'ErasureReadQuorum')) throw err;
        out.skipped = 'no read quorum';
        return out;
      }
      if (!loc) return out;
      const c = committedVersions(loc);
      if ('skipped' in c) {
        out.skipped = c.skipped;
        return out;
      }
      const byId = new Map(c.versions.map((v) => [v.versionId, v]));
      const due = selectVersions(config, key, c.versions.map(versionFacts), now, versioning !== 'Unversioned').filter((a) => !refused.has(a.versionId));
      if (due.length === 0) return out;
      const lockClock = { now, graceMs: d.governance.lockClock().graceMs };
      for (const a of due) {
        const v = byId.get(a.versionId)!;
        if (a.kind === 'expire-current' && versioning !== 'Unversioned') {
          // A versioned bucket keeps the data: the current version becomes noncurrent under a new delete marker.
          const id = versioning === 'Enabled' ? randomUUID() : 'null';
          const replaced = id === 'null' ? byId.get('null') : undefined;
          if (replaced?.type === 'object' && removalBlocked(replaced.sysMeta, lockClock) !== undefined) {
            // a suspended bucket's null marker would replace a locked null version
            refused.add(a.versionId);
            out.locked++;
            out.actions.push({ ...a, done: false });
            continue;
          }
          await withPostCommit(d.postCommit, { kind: 'delete-marker', cause: 'lifecycle', bucket, key, versionId: id, time: now }, (extra) =>
            loc.set.writeMarker(bucket, path, { ...newDeleteMarker(id, now), sysMeta: { ...extra } }, bucket, key),
          );
          out.markersAdded++;
          out.actions.push({ ...a, done: true });
          continue;
        }
        if (v.type === 'object' && removalBlocked(v.sysMeta, lockClock) !== undefined) {
          refused.add(a.versionId);
          out.locked++;
          out.actions.push({ ...a, done: false });
          continue;
        }
        await withPostCommit(d.postCommit, { kind: 'version-removed', cause: 'lifecycle', bucket, key, versionId: a.versionId, time: now }, () =>
          loc.set.deleteVersion(bucket, path, a.versionId, bucket, key),
        );
        if (a.kind === 'delete-marker' || v.type === 'delete') out.markersRemoved++;
        else out.deleted++;
        out.actions.push({ ...a, done: true });
      }
    }
    return out;
  } finally {
    unlock();
  }
}
