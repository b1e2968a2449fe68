/**
 * The checks a new version of a key passes after its writer took the key's
 * write lock and before it commits (a PUT, a completed multipart upload):
 * the request's write preconditions against a fresh quorum read of the
 * key's latest version, then, when the new version replaces the null
 * version of a bucket with object lock, that version's retention
 * (`Governance.guardNullReplace`). Both are read under the lock so nothing
 * changes between the check and the commit.
 */
import { SvcError } from '../util/errors.ts';
import type { ErasureSet } from './erasure-set.ts';
import type { Governance } from './governance.ts';
import { checkWritePreconditions } from './preconditions.ts';
import type { BucketLockConfig } from './object-lock.ts';
import type { Preconditions } from './types.ts';

export interface NewVersionTarget {
  /** The set the new version commits to. */
  set: ErasureSet;
  bucket: string;
  /** The key's object path (`objectPath(key)`). */
  path: string;
  versionId: string;
  /** The request's write preconditions (none: no read). */
  preconditions: Preconditions | undefined;
  /** The bucket's object-lock configuration (none: a null version cannot be locked, no read). */
  lock: BucketLockConfig | undefined;
}

/** Throws what refuses the new version (`PreconditionFailed`, `ErasureReadQuorum`, a locked null version); the caller holds the key's write lock. */
export async function guardNewVersion(gov: Governance, t: NewVersionTarget): Promise<void> {
  if (t.preconditions) {
    const { res } = await t.set.resolve(t.bucket, t.path);
    if (res.kind === 'quorum') throw new SvcError('ErasureReadQuorum');
    checkWritePreconditions(t.preconditions, res.kind === 'found' ? res.group.version : undefined);
  }
  await gov.guardNullReplace(t.set, t.bucket, t.path, t.versionId, t.lock);
}
