/**
 * Replication status of a version, pure: what a version's internal
 * metadata (`FileVersion.sysMeta`) records and what S3 shows of it.
 *
 * - On the source each version that some rule replicates carries one
 *   status per destination (the remote target's ARN): PENDING from its
 *   commit, COMPLETED once the remote holds it, FAILED while a copy keeps
 *   failing (it is retried). `x-amz-replication-status` is the aggregate:
 *   FAILED if any failed, else PENDING if any is pending, else COMPLETED.
 * - On a target, a version written by replication carries REPLICA (and is
 *   never replicated again from there: two-way setups do not loop).
 */

export type TargetStatus = 'PENDING' | 'COMPLETED' | 'FAILED';
export type ReplicationStatus = TargetStatus | 'REPLICA';

/** sysMeta key of the per-destination statuses (JSON `{arn: status}`). */
export const STATUS_KEY = 'repl';
/** sysMeta key marking a replica (value: the time it was received, Unix ms). */
export const REPLICA_KEY = 'replica';
/** sysMeta key of the version ids remote stores gave the copies (JSON `{arn: versionId}`), when they differ from ours. */
export const REMOTE_VERSION_KEY = 'repl-vid';

export function targetStatuses(sysMeta: Record<string, string> | undefined): Record<string, TargetStatus> {
  const raw = sysMeta?.[STATUS_KEY];
  if (raw === undefined) return {};
  try {
    const v = JSON.parse(raw) as unknown;
    return v !== null && typeof v === 'object' ? (v as Record<string, TargetStatus>) : {};
  } catch {
    return {};
  }
}

/** The `x-amz-replication-status` of a version (undefined: not replicated at all). */
export function replicationStatus(sysMeta: Record<string, string> | undefined): ReplicationStatus | undefined {
  if (sysMeta?.[REPLICA_KEY] !== undefined) return 'REPLICA';
  const all = Object.values(targetStatuses(sysMeta));
  if (all.length === 0) return undefined;
  if (all.includes('FAILED')) return 'FAILED';
  if (all.includes('PENDING')) return 'PENDING';
  return 'COMPLETED';
}

/** sysMeta entries of a new version queued for `arns` (all PENDING). */
export function pendingMeta(arns: readonly string[]): Record<string, string> {
  return { [STATUS_KEY]: JSON.stringify(Object.fromEntries(arns.map((a) => [a, 'PENDING']))) };
}

/** sysMeta with one destination's status set (and the remote's version id when it differs). */
export function withTargetStatus(sysMeta: Record<string, string>, arn: string, status: TargetStatus, remoteVersionId?: string): Record<string, string> {
  const next: Record<string, string> = { ...sysMeta, [STATUS_KEY]: JSON.stringify({ ...targetStatuses(sysMeta), [arn]: status }) };
  if (remoteVersionId !== undefined) {
    let vids: Record<string, string> = {};
    try {
      vids = JSON.parse(sysMeta[REMOTE_VERSION_KEY] ?? '{}') as Record<string, string>;
    } catch {
      vids = {};
    }
    next[REMOTE_VERSION_KEY] = JSON.stringify({ ...vids, [arn]: remoteVersionId });
  }
  return next;
}

/** The version id a remote gave the copy of this version (for a later delete of it), if recorded. */
export function remoteVersionId(sysMeta: Record<string, string> | undefined, arn: string): string | undefined {
  try {
    return (JSON.parse(sysMeta?.[REMOTE_VERSION_KEY] ?? '{}') as Record<string, string>)[arn];
  } catch {
    return undefined;
  }
}

/** sysMeta marking a replica. */
export function replicaMeta(receivedAt: number): Record<string, string> {
  return { [REPLICA_KEY]: String(receivedAt) };
}
