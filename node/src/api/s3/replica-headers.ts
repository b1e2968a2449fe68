/**
 * The headers a svc source sends when it replicates to a svc target, and
 * what the target's S3 edge makes of them (`docs/replication.md`):
 *
 * - `x-svc-replication-request: true` marks a write or delete made by
 *   replication; it needs `s3:ReplicateObject` (writes) or
 *   `s3:ReplicateDelete` (deletes) besides the operation's own permission,
 *   and the result is a replica (REPLICA status, never replicated again).
 * - `x-svc-source-version-id` and `x-svc-source-mtime` (Unix ms) give the
 *   new version or delete marker the source's version id and time, so both
 *   sites hold the same versions and the newest by time wins on both. The id
 *   is a UUID, or `null` for the null version (an object written before the
 *   source bucket's versioning was enabled, or while it was suspended).
 *
 * The target answers `x-svc-replica: true`, so the source knows the remote
 * kept its version id (another S3 service ignores the headers and gives the
 * copy a version id of its own).
 */
import { SvcError } from '../../util/errors.ts';
import type { S3Context } from './context.ts';
import { hdr } from './headers.ts';
import { REPLICA_ANSWER_HEADER, REPLICATION_REQUEST_HEADER, SOURCE_MTIME_HEADER, SOURCE_VERSION_HEADER } from '../../replication/wire.ts';

export { REPLICA_ANSWER_HEADER };


const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export interface ReplicaRequest {
  versionId?: string;
  modTime?: number;
}

/**
 * The replication part of a request, authorized, or undefined for an
 * ordinary one. Bad values are `InvalidArgument`.
 */
export async function replicaRequest(ctx: S3Context, action: 's3:ReplicateObject' | 's3:ReplicateDelete'): Promise<ReplicaRequest | undefined> {
  if (hdr(ctx.req, REPLICATION_REQUEST_HEADER) !== 'true') return undefined;
  await ctx.authorizeKey(ctx.ep.key, action);
  const r: ReplicaRequest = {};
  const vid = hdr(ctx.req, SOURCE_VERSION_HEADER);
  if (vid !== undefined) {
    if (vid !== 'null' && !UUID.test(vid)) throw new SvcError('InvalidArgument', `${SOURCE_VERSION_HEADER} must be a version id (a UUID, or null)`, { argumentName: SOURCE_VERSION_HEADER });
    r.versionId = vid;
  }
  const mt = hdr(ctx.req, SOURCE_MTIME_HEADER);
  if (mt !== undefined) {
    if (!/^\d{1,15}$/.test(mt)) throw new SvcError('InvalidArgument', `${SOURCE_MTIME_HEADER} must be Unix milliseconds`, { argumentName: SOURCE_MTIME_HEADER });
    r.modTime = Number(mt);
  }
  if (r.versionId !== undefined && (await ctx.layer.getBucketInfo(ctx.ep.bucket)).versioning !== 'Enabled') {
    throw new SvcError('InvalidRequest', 'A replica keeps its version id only in a bucket with versioning enabled.');
  }
  return r;
}
