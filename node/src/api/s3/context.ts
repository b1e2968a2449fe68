/**
 * The per-request context every S3 handler receives, and the response
 * helpers they share.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { BucketQuotas } from '../../object/quota.ts';
import type { ObjectLayer } from '../../object/types.ts';
import type { Clock } from '../../util/clock.ts';
import { SvcError } from '../../util/errors.ts';
import type { Logger } from '../../util/logger.ts';
import type { AuthContext, VerifyOptions } from './auth/sigv4.ts';
import type { BucketSecurity } from './authz/authorize.ts';
import type { Principal } from '../../iam/principal.ts';
import type { S3Endpoint } from './router.ts';
import type { TargetArn } from '../../notify/bucket-config.ts';
import type { EventName } from '../../notify/event.ts';
import type { Listener } from '../../notify/notification-system.ts';
import type { Change, ChangeOrigin } from '../../object/post-commit.ts';
import { toXml, type XmlNode } from './xml.ts';

export interface S3Context<E extends S3Endpoint = S3Endpoint> {
  req: IncomingMessage;
  res: ServerResponse;
  ep: E;
  auth: AuthContext;
  layer: ObjectLayer;
  region: string;
  clock: Clock;
  logger: Logger;
  requestId: string;
  /** Owner id shown in listings and ACLs (the root access key: svc has one owner). */
  ownerId: string;
  principal: Principal;
  /** How signatures are verified: the credential lookup, region rule, clock (POST Object verifies its form's signature itself). */
  verify: VerifyOptions;
  /** Display name of a canonical user id svc knows (ACL grants name users by it); undefined for unknown ids. */
  knownUser?: (canonicalId: string) => string | undefined;
  /** The bucket's access-control settings, loaded by authorization (bucket-level operations). */
  security?: BucketSecurity;
  /** Authorizes one more action of this request on another key (DeleteObjects entries); throws AccessDenied. */
  authorizeKey(key: string, action: string): Promise<void>;
  /** Bucket notifications, when the server has them. */
  notify?: NotifyEdge;
  /** The request as bucket events tell it (who, from where, which request). */
  origin(via?: ChangeOrigin['via']): ChangeOrigin;
  /** Bucket quotas (absent: none are enforced). */
  quotas?: BucketQuotas;
}

/**
 * Runs a write that adds `bytes` (0 when unknown up front) to `bucket` under
 * its quota: refused before anything is stored when it would exceed it;
 * counted as in flight while it runs and as stored (its real size) after.
 */
export async function underQuota<T extends { size: number }>(ctx: S3Context, bucket: string, bytes: number, write: () => Promise<T>): Promise<T> {
  if (ctx.quotas === undefined) return write();
  const r = await ctx.quotas.admit(bucket, bytes);
  try {
    const out = await write();
    r.commit(out.size);
    return out;
  } catch (err) {
    r.release();
    throw err;
  }
}

/** What the S3 edge uses of bucket notifications (`notify/notification-system.ts`). */
export interface NotifyEdge {
  /** An ARN names a target of this deployment (configurations are checked against it). */
  knownTarget(arn: TargetArn): boolean;
  /** Events that follow a successful request without a commit of their own (accessed, tagging, ACL). */
  publish(name: EventName, c: Pick<Change, 'bucket' | 'key' | 'versionId' | 'time' | 'size' | 'etag' | 'contentType' | 'userMeta' | 'origin'>): Promise<void>;
  /** A live listener (ListenBucketNotification); returns its removal. */
  listen(l: Listener): () => void;
}

export type Handler<E extends S3Endpoint = S3Endpoint> = (ctx: S3Context<E>) => Promise<void>;

/** `versionId` of the query: absent, or a non-empty id (`InvalidArgument` for an empty one). */
export function versionIdParam(ctx: S3Context): string | undefined {
  const v = ctx.ep.query.get('versionId');
  if (v === undefined) return undefined;
  if (v === '') throw new SvcError('InvalidArgument', 'Version id cannot be the empty string.');
  return v;
}

export function sendXml(ctx: S3Context, status: number, root: string, body: XmlNode, extra: Record<string, string> = {}): void {
  const text = toXml(root, body);
  ctx.res.writeHead(status, {
    ...extra,
    'content-type': 'application/xml',
    'content-length': Buffer.byteLength(text),
  });
  ctx.res.end(text);
}

export function sendRawXml(ctx: S3Context, text: string): void {
  ctx.res.writeHead(200, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(text) });
  ctx.res.end(text);
}

export function sendEmpty(ctx: S3Context, status: number, headers: Record<string, string> = {}): void {
  ctx.res.writeHead(status, { ...headers, 'content-length': 0 });
  ctx.res.end();
}

/** `"<etag>"` as S3 sends it. */
export function quoteEtag(etag: string): string {
  return `"${etag}"`;
}

/** Strips quotes (and a weak prefix) from a client-sent ETag. */
export function unquoteEtag(etag: string): string {
  return etag.trim().replace(/^W\//, '').replace(/^"|"$/g, '');
}

export function owner(ctx: S3Context): XmlNode {
  return { ID: ctx.ownerId, DisplayName: ctx.ownerId };
}
