/**
 * Bucket operations: ListBuckets, CreateBucket, HeadBucket, DeleteBucket,
 * GetBucketLocation, Get/PutBucketVersioning.
 */
import { SvcError } from '../../../util/errors.ts';
import { compareKeys } from '../../../util/key-order.ts';
import { hdr, owner, type S3Context, sendEmpty, sendRawXml, sendXml } from '../context.ts';
import { readSmallBody } from '../put-data.ts';
import { escapeXml, parseXml, S3_NS, XML_DECL, xmlText } from '../xml.ts';
import { checkCannedAcl } from './acl.ts';

const MAX_CONFIG_BODY = 64 * 1024;

export async function handleListBuckets(ctx: S3Context): Promise<void> {
  const buckets = await ctx.layer.listBuckets();
  buckets.sort((a, b) => compareKeys(a.name, b.name));
  sendXml(ctx, 200, 'ListAllMyBucketsResult', {
    Owner: owner(ctx),
    Buckets: { Bucket: buckets.map((b) => ({ Name: b.name, CreationDate: b.created })) },
  });
}

export async function handleCreateBucket(ctx: S3Context): Promise<void> {
  checkCannedAcl(hdr(ctx.req, 'x-amz-acl'));
  if (hdr(ctx.req, 'x-amz-bucket-object-lock-enabled') === 'true') {
    throw new SvcError('NotImplemented', 'Object lock is not supported by this server.');
  }
  const body = await readSmallBody(ctx.req.headers, ctx.req, ctx.auth, MAX_CONFIG_BODY);
  let location = '';
  if (body.length > 0) {
    const cfg = parseXml(body, 'CreateBucketConfiguration');
    location = xmlText(cfg, 'LocationConstraint') ?? '';
  }
  if (location !== '' && location !== ctx.region) {
    throw new SvcError('IllegalLocationConstraintException', `The ${location} location constraint is incompatible for the region specific endpoint this request was sent to (${ctx.region}).`);
  }
  try {
    await ctx.layer.makeBucket(ctx.ep.bucket, { location });
  } catch (err) {
    // one tenant: every existing bucket is the caller's own
    if (err instanceof SvcError && err.code === 'BucketAlreadyExists') throw new SvcError('BucketAlreadyOwnedByYou');
    throw err;
  }
  sendEmpty(ctx, 200, { location: `/${ctx.ep.bucket}` });
}

export async function handleHeadBucket(ctx: S3Context): Promise<void> {
  const info = await ctx.layer.getBucketInfo(ctx.ep.bucket);
  sendEmpty(ctx, 200, { 'x-amz-bucket-region': info.location || ctx.region });
}

export async function handleDeleteBucket(ctx: S3Context): Promise<void> {
  await ctx.layer.deleteBucket(ctx.ep.bucket);
  sendEmpty(ctx, 204);
}

export async function handleGetBucketLocation(ctx: S3Context): Promise<void> {
  const info = await ctx.layer.getBucketInfo(ctx.ep.bucket);
  // us-east-1 is reported as an empty constraint, as S3 does
  const loc = info.location && info.location !== 'us-east-1' ? info.location : '';
  sendRawXml(ctx, `${XML_DECL}<LocationConstraint xmlns="${S3_NS}">${escapeXml(loc)}</LocationConstraint>`);
}

export async function handleGetBucketVersioning(ctx: S3Context): Promise<void> {
  const info = await ctx.layer.getBucketInfo(ctx.ep.bucket);
  sendXml(ctx, 200, 'VersioningConfiguration', info.versioning === 'Unversioned' ? {} : { Status: info.versioning });
}

export async function handlePutBucketVersioning(ctx: S3Context): Promise<void> {
  const body = await readSmallBody(ctx.req.headers, ctx.req, ctx.auth, MAX_CONFIG_BODY);
  const cfg = parseXml(body, 'VersioningConfiguration');
  const status = xmlText(cfg, 'Status');
  const mfa = xmlText(cfg, 'MfaDelete');
  if (mfa === 'Enabled') throw new SvcError('NotImplemented', 'MFA delete is not supported by this server.');
  if (status !== 'Enabled' && status !== 'Suspended') throw new SvcError('MalformedXML', 'Status must be Enabled or Suspended.');
  await ctx.layer.setBucketVersioning(ctx.ep.bucket, status);
  sendEmpty(ctx, 200);
}
