/**
 * Bucket replication at the S3 edge: Get/Put/DeleteBucketReplication (the
 * XML document ⇄ `replication/config.ts`, checked against the bucket's
 * versioning and its remote targets).
 */
import { decodeReplicationConfig, encodeReplicationConfig, parseReplicationConfig, replicationConfigXml } from '../../../replication/config.ts';
import { decodeTargets } from '../../../replication/targets.ts';
import { SvcError } from '../../../util/errors.ts';
import { type S3Context, sendEmpty, sendXml } from '../context.ts';
import { readSmallBody } from '../put-data.ts';
import { parseXml, type XmlNode } from '../xml.ts';

const MAX_BODY = 2 * 1024 * 1024;

export async function handleGetBucketReplication(ctx: S3Context): Promise<void> {
  const c = decodeReplicationConfig(await ctx.layer.getBucketConfig(ctx.ep.bucket, 'replication'));
  if (!c) throw new SvcError('ReplicationConfigurationNotFoundError', undefined, { bucketName: ctx.ep.bucket });
  sendXml(ctx, 200, 'ReplicationConfiguration', replicationConfigXml(c) as XmlNode);
}

export async function handlePutBucketReplication(ctx: S3Context): Promise<void> {
  const body = await readSmallBody(ctx.req.headers, ctx.req, ctx.auth, MAX_BODY);
  // The bucket first: a missing bucket is NoSuchBucket, whatever the document says.
  const info = await ctx.layer.getBucketInfo(ctx.ep.bucket);
  const targets = decodeTargets(await ctx.layer.getBucketConfig(ctx.ep.bucket, 'replication-targets')).targets;
  const c = parseReplicationConfig(parseXml(body, 'ReplicationConfiguration'), { targets }, info.versioning);
  await ctx.layer.setBucketConfig(ctx.ep.bucket, 'replication', encodeReplicationConfig(c));
  sendEmpty(ctx, 200);
}

export async function handleDeleteBucketReplication(ctx: S3Context): Promise<void> {
  await ctx.layer.getBucketInfo(ctx.ep.bucket);
  await ctx.layer.setBucketConfig(ctx.ep.bucket, 'replication', undefined);
  sendEmpty(ctx, 204);
}
