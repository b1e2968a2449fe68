/**
 * Bucket events that follow a request without a commit of their own
 * (`ObjectAccessed:*`, `ObjectTagging:*`, `ObjectAcl:Put`, an in-place
 * self-copy): queued once the request succeeded. Events of new versions and
 * removals are made by the object layer's post-commit hook instead.
 */
import type { EventName } from '../../../notify/event.ts';
import type { ObjectInfo } from '../../../object/types.ts';
import type { S3Context } from '../context.ts';

/** Queues an event that follows a request without a commit of its own (a failure to queue it is logged, never the request's). */
export async function publishAfter(ctx: S3Context, name: EventName, info: ObjectInfo, via?: 'copy'): Promise<void> {
  if (!ctx.notify) return;
  await ctx.notify
    .publish(name, {
      bucket: info.bucket,
      key: info.name,
      versionId: info.versionId,
      time: ctx.clock.now(),
      size: info.size,
      etag: info.etag,
      userMeta: info.userMeta,
      ...(info.contentHeaders.contentType !== undefined ? { contentType: info.contentHeaders.contentType } : {}),
      origin: ctx.origin(via),
    })
    .catch((err: unknown) => ctx.logger.error({ event: 'notify_publish_failed', bucket: info.bucket, key: info.name, name, err }, 'bucket event could not be queued'));
}

