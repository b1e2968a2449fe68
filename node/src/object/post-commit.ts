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
  /** URL-encoded tag set of a new version (replication rules filter on tags). */
  tags?: string;
  /** The change was made by replication from another site (it is not replicated again). */
  replica?: boolean;
  origin?: ChangeOrigin;
}

export interface PostCommitTicket {
  /**
   * Internal metadata the consumer wants recorded with the new version or
   * delete marker (replication's PENDING status); the write path merges it
   * into what it commits. Ignored for a removed version.
   */
  readonly sysMeta?: Readonly<Record<string, string>>;
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
 * Runs `commit` between `prepare` and the ticket's outcome; `commit` gets
 * the internal metadata the consumers asked to record (`{}` when none). A
 * failing `abandoned` never hides the commit's own error.
 */
export async function withPostCommit<T>(hook: PostCommitHook | undefined, change: Change | undefined, commit: (sysMeta: Readonly<Record<string, string>>) => Promise<T>): Promise<T> {
  const ticket = hook && change ? await hook.prepare(change) : undefined;
  let result: T;
  try {
    result = await commit(ticket?.sysMeta ?? {});
  } catch (err) {
    await ticket?.abandoned().catch(() => undefined);
    throw err;
  }
  await ticket?.committed();
  return result;
}

/**
 * Several consumers as one hook, asked in order: a throw abandons the
 * tickets already given; the tickets' metadata is merged; every ticket is
 * told the outcome (a failing `committed` of one does not keep the others
 * from theirs; the first failure is thrown after).
 */
export function combineHooks(hooks: readonly PostCommitHook[]): PostCommitHook | undefined {
  if (hooks.length <= 1) return hooks[0];
  return {
    async prepare(change) {
      const tickets: PostCommitTicket[] = [];
      try {
        for (const h of hooks) {
          const t = await h.prepare(change);
          if (t) tickets.push(t);
        }
      } catch (err) {
        await Promise.all(tickets.map((t) => t.abandoned().catch(() => undefined)));
        throw err;
      }
      if (tickets.length === 0) return undefined;
      if (tickets.length === 1) return tickets[0];
      const sysMeta = Object.assign({}, ...tickets.map((t) => t.sysMeta ?? {})) as Record<string, string>;
      const all = async (f: (t: PostCommitTicket) => Promise<void>) => {
        const rs = await Promise.allSettled(tickets.map(f));
        const bad = rs.find((r) => r.status === 'rejected');
        if (bad) throw (bad as PromiseRejectedResult).reason;
      };
      return { sysMeta, committed: () => all((t) => t.committed()), abandoned: () => all((t) => t.abandoned()) };
    },
  };
}

/** Which post-commit consumer a hook is; they are asked in this order. */
export const POST_COMMIT_SLOTS = ['replication', 'events'] as const;
export type PostCommitSlot = (typeof POST_COMMIT_SLOTS)[number];

/** The installed post-commit consumers by slot, and the one hook the write paths call (`current`). */
export class PostCommitHooks {
  readonly #hooks = new Map<PostCommitSlot, PostCommitHook>();
  #current: PostCommitHook | undefined;

  /** Installs (or with `undefined` removes) the consumer of `slot`. */
  set(hook: PostCommitHook | undefined, slot: PostCommitSlot): void {
    if (hook) this.#hooks.set(slot, hook);
    else this.#hooks.delete(slot);
    this.#current = combineHooks(POST_COMMIT_SLOTS.flatMap((s) => this.#hooks.get(s) ?? []));
  }

  /** Every installed consumer as one hook, asked in `POST_COMMIT_SLOTS` order (none: undefined). */
  get current(): PostCommitHook | undefined {
    return this.#current;
  }
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
    tags: info.tags,
  };
  if (info.contentHeaders.contentType !== undefined) c.contentType = info.contentHeaders.contentType;
  if (origin) c.origin = origin;
  return c;
}
