/**
 * Bucket notifications at the S3 edge: Get/PutBucketNotificationConfiguration
 * (the XML document ⇄ `notify/bucket-config.ts`, checked against the
 * deployment's targets) and MinIO's `ListenBucketNotification` stream
 * (`GET /<bucket>?events=...`, `GET /?events=...` for every bucket): one
 * JSON line `{"Records":[...]}` per event, a space every `ping` seconds
 * (default 5) while nothing happens, so proxies and the node's idle limit
 * see a live response. A listener that stops reading is cut off once
 * 4 MiB wait for it.
 */
import { parseQuery, splitTarget } from '../headers.ts';
import { decodeNotificationConfig, encodeNotificationConfig, notificationConfigXml, parseNotificationConfig } from '../../../notify/bucket-config.ts';
import { isKnownEventPattern } from '../../../notify/event.ts';
import { SvcError } from '../../../util/errors.ts';
import { type S3Context, sendEmpty, sendXml } from '../context.ts';
import { readSmallBody } from '../put-data.ts';
import { parseXml, type XmlNode } from '../xml.ts';

const MAX_BODY = 1024 * 1024;
/** A listener more than this far behind is disconnected. */
const MAX_LISTENER_BACKLOG = 4 * 1024 * 1024;

export async function handleGetBucketNotificationConfiguration(ctx: S3Context): Promise<void> {
  const c = decodeNotificationConfig(await ctx.layer.getBucketConfig(ctx.ep.bucket, 'notification'));
  sendXml(ctx, 200, 'NotificationConfiguration', notificationConfigXml(c) as XmlNode);
}

export async function handlePutBucketNotificationConfiguration(ctx: S3Context): Promise<void> {
  const body = await readSmallBody(ctx.req.headers, ctx.req, ctx.auth, MAX_BODY);
  // The bucket first: a missing bucket is NoSuchBucket, whatever the document says.
  await ctx.layer.getBucketInfo(ctx.ep.bucket);
  const notify = ctx.notify;
  const c = parseNotificationConfig(parseXml(body, 'NotificationConfiguration'), (arn) => notify?.knownTarget(arn) === true, ctx.region);
  // An empty document removes the configuration, as S3 does.
  const empty = c.rules.length === 0 && !c.eventBridge;
  await ctx.layer.setBucketConfig(ctx.ep.bucket, 'notification', empty ? undefined : encodeNotificationConfig(c));
  sendEmpty(ctx, 200);
}

export async function handleListenBucketNotification(ctx: S3Context): Promise<void> {
  const notify = ctx.notify;
  if (!notify) throw new SvcError('NotImplemented', 'Bucket notifications are not available on this server.');
  const all = parseQuery(splitTarget(ctx.req.url ?? '/').query);
  const events = all.filter(([k]) => k === 'events').map(([, v]) => v);
  if (events.length === 0) throw new SvcError('InvalidArgument', 'Name at least one event type (events=s3:ObjectCreated:*).', { argumentName: 'events' });
  for (const e of events) {
    if (!isKnownEventPattern(e)) throw new SvcError('InvalidArgument', 'A specified event is not supported for notifications.', { argumentName: 'events', argumentValue: e });
  }
  const prefix = ctx.ep.query.get('prefix');
  const suffix = ctx.ep.query.get('suffix');
  const pingRaw = ctx.ep.query.get('ping');
  const ping = pingRaw === undefined || pingRaw === '' ? 5 : Number(pingRaw);
  if (!Number.isInteger(ping) || ping < 1 || ping > 300) throw new SvcError('InvalidArgument', 'ping must be a number of seconds from 1 to 300.', { argumentName: 'ping' });
  if (ctx.ep.bucket !== '') await ctx.layer.getBucketInfo(ctx.ep.bucket);

  const res = ctx.res;
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' });
  res.flushHeaders();
  let closed = false;
  const stop = notify.listen({
    ...(ctx.ep.bucket !== '' ? { bucket: ctx.ep.bucket } : {}),
    ...(prefix ? { prefix } : {}),
    ...(suffix ? { suffix } : {}),
    events,
    send: (record) => {
      if (closed) return;
      if (res.writableLength > MAX_LISTENER_BACKLOG) {
        ctx.logger.warn({ event: 'notify_listener_too_slow', bucket: ctx.ep.bucket, backlog: res.writableLength }, 'a ListenBucketNotification client fell too far behind: disconnected');
        res.destroy();
        return;
      }
      res.write(`${JSON.stringify({ Records: [record] })}\n`);
    },
    // At shutdown the stream ends (the drain does not wait for it); the response's close stops the rest.
    end: () => {
      if (!closed) res.end();
    },
  });
  const stopPing = ctx.clock.every(ping * 1000, () => {
    if (!closed && res.writableLength === 0) res.write(' ');
  });
  await new Promise<void>((resolve) => {
    const done = () => {
      if (closed) return;
      closed = true;
      stop();
      stopPing();
      resolve();
    };
    // The response closes when the client goes (or the node shuts down).
    res.once('close', done);
  });
}
