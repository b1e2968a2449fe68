/**
 * The headers a svc source sends when it replicates to a svc target, and
 * the one the target answers with (`docs/replication.md`); the S3 edge
 * (`api/s3/replica-headers.ts`) reads them, the replicator sends them.
 *
 * - `x-svc-replication-request: true` marks a write or delete made by
 *   replication (a replica: never replicated again).
 * - `x-svc-source-version-id` and `x-svc-source-mtime` (Unix ms) give the
 *   new version or delete marker the source's version id and time.
 * - `x-svc-replica: true` in the answer: the target kept the source's
 *   version id (another S3 service ignores the headers).
 */
export const REPLICATION_REQUEST_HEADER = 'x-svc-replication-request';
export const SOURCE_VERSION_HEADER = 'x-svc-source-version-id';
export const SOURCE_MTIME_HEADER = 'x-svc-source-mtime';
export const REPLICA_ANSWER_HEADER = 'x-svc-replica';
