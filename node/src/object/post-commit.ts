/**
 * The post-commit hook: how work that must follow a durable change of the
 * namespace (bucket notifications today, replication later) learns of it
 * without the object layer knowing what that work is.
 *
 * For every change (a new version, a delete marker, a version removed) the
 * write path calls `prepare` under the key's write lock, before the commit.
 * A consumer that wants the change returns a ticket, having made whatever
 * it needs durable (a notification target's queue entry); a throw there
 * fails the write before anything is committed. The write path then
 * commits and calls `ticket.committed()` on success, before the client is
 * answered, or `ticket.abandoned()` when the commit failed (the change did
 * not happen: nothing may be published for it). A crash between the two
 * leaves a prepared change whose outcome the consumer finds out from the
 * namespace (`docs/notifications.md`, "Delivery guarantees").
 */

import type { ChangeOrigin, ObjectInfo } from './types.ts';

export type { ChangeOrigin };

export type ChangeKind =
  /** A new version (PUT, POST, copy, completed multipart upload). */
  | 'created'
  /** A delete marker was written (a versioned bucket's delete). */
  | 'delete-marker'
  /** A version was removed for good (unversioned bucket, or a delete of a version id). */
  | 'version-removed';

export interface Change {
  kind: ChangeKind;
  /** What caused it: a client request or the lifecycle rules. */
  cause: 'request' | 'multipart' | 'lifecycle';
  bucket: string;
  key: string;
  versionId: string;
  /** Unix ms of the change. */
  time: number;
  size?: number;
  etag?: string;
  contentType?: string;
  userMeta?: Record<string, string>;
  origin?: ChangeOrigin;
}

export interface PostCommitTicket {
  /** The change is durable (write quorum reached). */
  committed(): Promise<void>;
  /** The change did not happen. */
  abandoned(): Promise<void>;
}

export interface PostCommitHook {
  /**
   * Called under the key's write lock, before the change is committed.
   * Returns a ticket when a consumer wants the change, undefined otherwise;
   * a throw refuses the write.
   */
  prepare(change: Change): Promise<PostCommitTicket | undefined>;
}

/**
 * Runs `commit` between `prepare` and the ticket's outcome. A failing
 * `abandoned` never hides the commit's own error.
 */
export async function withPostCommit<T>(hook: PostCommitHook | undefined, change: Change | undefined, commit: () => Promise<T>): Promise<T> {
  const ticket = hook && change ? await hook.prepare(change) : undefined;
  let result: T;
  try {
    result = await commit();
  } catch (err) {
    await ticket?.abandoned().catch(() => undefined);
    throw err;
  }
  await ticket?.committed();
  return result;
}

/** The change a new version makes, from what it will read as. */
export function createdChange(info: ObjectInfo, cause: Change['cause'], origin: ChangeOrigin | undefined): Change {
  const c: Change = {
    kind: 'created',
    cause,
    bucket: info.bucket,
    key: info.name,
    versionId: info.versionId,
    time: info.modTime.getTime(),
    size: info.size,
    etag: info.etag,
    userMeta: info.userMeta,
  };
  if (info.contentHeaders.contentType !== undefined) c.contentType = info.contentHeaders.contentType;
  if (origin) c.origin = origin;
  return c;
}
