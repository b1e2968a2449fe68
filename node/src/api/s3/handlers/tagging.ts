/** Bucket and object tagging. Tag sets are stored URL-encoded (`k=v&k2=v2`). */
import { SvcError } from '../../../util/errors.ts';
import { type S3Context, sendEmpty, sendXml } from '../context.ts';
import { publishAfter } from './events.ts';
import { readSmallBody } from '../put-data.ts';
import { decodeTags, encodeTags } from '../validate.ts';
import { parseXml, xmlList, xmlRawText } from '../xml.ts';

export const MAX_OBJECT_TAGS = 10;
export const MAX_BUCKET_TAGS = 50;

async function readTagging(ctx: S3Context, maxTags: number): Promise<string> {
  const body = await readSmallBody(ctx.req.headers, ctx.req, ctx.auth, 64 * 1024);
  const doc = parseXml(body, 'Tagging');
  const tagSet = doc['TagSet'];
  const tags: [string, string][] = [];
  if (tagSet !== undefined && tagSet !== '') {
    if (typeof tagSet !== 'object' || tagSet === null) throw new SvcError('MalformedXML');
    for (const t of xmlList(tagSet as Record<string, unknown>, 'Tag')) {
      const k = xmlRawText(t, 'Key');
      const v = xmlRawText(t, 'Value') ?? '';
      if (k === undefined) throw new SvcError('MalformedXML', 'Every Tag needs a Key.');
      tags.push([k, v]);
    }
  }
  return encodeTags(tags, maxTags);
}

function tagSetXml(tags: string) {
  return { TagSet: { Tag: decodeTags(tags).map(([Key, Value]) => ({ Key, Value })) } };
}

export async function handleGetBucketTagging(ctx: S3Context): Promise<void> {
  const info = await ctx.layer.getBucketInfo(ctx.ep.bucket);
  if (!info.tags) throw new SvcError('NoSuchTagSet');
  sendXml(ctx, 200, 'Tagging', tagSetXml(info.tags));
}

export async function handlePutBucketTagging(ctx: S3Context): Promise<void> {
  const tags = await readTagging(ctx, MAX_BUCKET_TAGS);
  await ctx.layer.setBucketTags(ctx.ep.bucket, tags);
  sendEmpty(ctx, 204);
}

export async function handleDeleteBucketTagging(ctx: S3Context): Promise<void> {
  await ctx.layer.setBucketTags(ctx.ep.bucket, '');
  sendEmpty(ctx, 204);
}

function versionHeader(versionId: string): Record<string, string> {
  return versionId && versionId !== 'null' ? { 'x-amz-version-id': versionId } : {};
}

export async function handleGetObjectTagging(ctx: S3Context): Promise<void> {
  const versionId = ctx.ep.query.get('versionId');
  const info = await ctx.layer.getObjectInfo(ctx.ep.bucket, ctx.ep.key, versionId ? { versionId } : {});
  sendXml(ctx, 200, 'Tagging', tagSetXml(info.tags), versionHeader(info.versionId));
}

export async function handlePutObjectTagging(ctx: S3Context): Promise<void> {
  const tags = await readTagging(ctx, MAX_OBJECT_TAGS);
  const versionId = ctx.ep.query.get('versionId');
  const info = await ctx.layer.updateObjectMetadata(ctx.ep.bucket, ctx.ep.key, versionId ? { versionId, tags } : { tags });
  await publishAfter(ctx, 'ObjectTagging:Put', info);
  sendEmpty(ctx, 200, versionHeader(info.versionId));
}

export async function handleDeleteObjectTagging(ctx: S3Context): Promise<void> {
  const versionId = ctx.ep.query.get('versionId');
  const info = await ctx.layer.updateObjectMetadata(ctx.ep.bucket, ctx.ep.key, versionId ? { versionId, tags: '' } : { tags: '' });
  await publishAfter(ctx, 'ObjectTagging:Delete', info);
  sendEmpty(ctx, 204, versionHeader(info.versionId));
}
