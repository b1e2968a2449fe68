/**
 * Bucket operations: ListBuckets, CreateBucket, HeadBucket, DeleteBucket,
 * GetBucketLocation, Get/PutBucketVersioning.
 */
import { SvcError } from '../../../util/errors.ts';
import { compareKeys } from '../../../util/key-order.ts';
import { owner, type S3Context, sendEmpty, sendRawXml, sendXml } from '../context.ts';
import { hdr } from '../headers.ts';
import { readSmallBody } from '../put-data.ts';
import { decodeContinuationToken, encodeContinuationToken } from './listing.ts';
import { escapeXml, parseXml, S3_NS, XML_DECL, xmlText } from '../xml.ts';
import { type Acl, cannedAcl, encodeAcl } from '../authz/acl.ts';
import type { BucketSecurity } from '../authz/authorize.ts';
import { DEFAULT_OWNERSHIP, encodeSetting, NO_PUBLIC_ACCESS_BLOCK, parseOwnership } from '../authz/bucket-settings.ts';
import { bucketSecurity, callerOwner, configStore, visibleBuckets } from '../authz/endpoint.ts';
import { headerAcl } from './acl.ts';

const MAX_CONFIG_BODY = 64 * 1024;

/** Largest `max-buckets` S3 accepts. */
const MAX_BUCKETS_PAGE = 10_000;

export async function handleListBuckets(ctx: S3Context): Promise<void> {
  const q = ctx.ep.query;
  const prefix = q.get('prefix') ?? '';
  const rawMax = q.get('max-buckets');
  if (rawMax !== undefined && (!/^\d{1,5}$/.test(rawMax) || Number(rawMax) < 1 || Number(rawMax) > MAX_BUCKETS_PAGE)) {
    throw new SvcError('InvalidArgument', `max-buckets must be an integer between 1 and ${MAX_BUCKETS_PAGE}.`);
  }
  const token = q.get('continuation-token');
  // the token is opaque to clients: base64url of the last bucket name returned
  const after = token !== undefined && token !== '' ? decodeContinuationToken(token) : undefined;
  const buckets = (await visibleBuckets(ctx, await ctx.layer.listBuckets()))
    .filter((b) => b.name.startsWith(prefix) && (after === undefined || compareKeys(b.name, after) > 0))
    .sort((a, b) => compareKeys(a.name, b.name));
  const page = rawMax === undefined ? buckets : buckets.slice(0, Number(rawMax));
  const truncated = page.length < buckets.length;
  sendXml(ctx, 200, 'ListAllMyBucketsResult', {
    Owner: owner(ctx),
    Buckets: { Bucket: page.map((b) => ({ Name: b.name, CreationDate: b.created, BucketRegion: ctx.region })) },
    ...(truncated ? { ContinuationToken: encodeContinuationToken(page[page.length - 1]!.name) } : {}),
    ...(q.has('prefix') ? { Prefix: prefix } : {}),
  });
}

export async function handleCreateBucket(ctx: S3Context): Promise<void> {
  const ownershipHeader = hdr(ctx.req, 'x-amz-object-ownership');
  const ownership = ownershipHeader !== undefined ? parseOwnership(ownershipHeader) : undefined;
  const owner = callerOwner(ctx);
  // a new bucket: private, no policy, nothing blocked (see authz/bucket-settings.ts)
  const fresh: BucketSecurity = { owner, acl: cannedAcl('private', owner), policy: undefined, ownership: ownership ?? DEFAULT_OWNERSHIP, publicAccessBlock: NO_PUBLIC_ACCESS_BLOCK };
  let acl: Acl | undefined;
  try {
    acl = headerAcl(ctx, ctx.req, fresh);
  } catch (err) {
    if (err instanceof SvcError && err.code === 'AccessControlListNotSupported') throw new SvcError('InvalidBucketAclWithObjectOwnership');
    throw err;
  }
  const lockHeader = hdr(ctx.req, 'x-amz-bucket-object-lock-enabled');
  if (lockHeader !== undefined && !/^(true|false)$/i.test(lockHeader.trim())) throw new SvcError('InvalidArgument', 'x-amz-bucket-object-lock-enabled must be true or false.');
  // Object lock: versioning on for good, retention and legal hold available.
  const objectLock = lockHeader?.trim().toLowerCase() === 'true';
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
    await ctx.layer.makeBucket(ctx.ep.bucket, { location, ...(objectLock ? { objectLock } : {}) });
  } catch (err) {
    // One tenant: every existing bucket is the caller's own. AWS answers that
    // with 200 (and changes nothing) in us-east-1, BucketAlreadyOwnedByYou elsewhere;
    // BucketAlreadyExists is for a bucket another account owns.
    if (!(err instanceof SvcError && (err.code === 'BucketAlreadyExists' || err.code === 'BucketAlreadyOwnedByYou'))) throw err;
    // another user's bucket: the name is taken
    if (ctx.principal.kind === 'user' && !ctx.principal.root && (await bucketSecurity(ctx)).owner.id !== owner.id) throw new SvcError('BucketAlreadyExists');
    if (ctx.region !== 'us-east-1') throw new SvcError('BucketAlreadyOwnedByYou');
    sendEmpty(ctx, 200, { location: `/${ctx.ep.bucket}` });
    return;
  }
  const store = configStore(ctx.layer);
  if (ownership) await store.setBucketConfig(ctx.ep.bucket, 'ownership', encodeSetting(ownership));
  // a bucket a user created records its owner (the root's buckets read as the root's without a document)
  const stored = acl ?? (owner.id !== ctx.ownerId ? cannedAcl('private', owner) : undefined);
  if (stored) await store.setBucketConfig(ctx.ep.bucket, 'acl', Buffer.from(encodeAcl(stored)));
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

// Settings svc does not offer, read as S3 answers a bucket that never had them.

export async function handleGetBucketAccelerateConfiguration(ctx: S3Context): Promise<void> {
  await ctx.layer.getBucketInfo(ctx.ep.bucket);
  sendXml(ctx, 200, 'AccelerateConfiguration', {});
}

export async function handleGetBucketRequestPayment(ctx: S3Context): Promise<void> {
  await ctx.layer.getBucketInfo(ctx.ep.bucket);
  sendXml(ctx, 200, 'RequestPaymentConfiguration', { Payer: 'BucketOwner' });
}

export async function handleGetBucketLogging(ctx: S3Context): Promise<void> {
  await ctx.layer.getBucketInfo(ctx.ep.bucket);
  sendXml(ctx, 200, 'BucketLoggingStatus', {});
}

export async function handleGetBucketWebsite(ctx: S3Context): Promise<void> {
  await ctx.layer.getBucketInfo(ctx.ep.bucket);
  throw new SvcError('NoSuchWebsiteConfiguration');
}

/** Nothing to remove: 204, as S3 answers for a bucket without a website configuration. */
export async function handleDeleteBucketWebsite(ctx: S3Context): Promise<void> {
  await ctx.layer.getBucketInfo(ctx.ep.bucket);
  sendEmpty(ctx, 204);
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
  // Replication needs versioning on (S3 refuses to suspend it under a replication configuration).
  if (status === 'Suspended' && (await ctx.layer.getBucketConfig(ctx.ep.bucket, 'replication')) !== undefined) {
    throw new SvcError('InvalidBucketState', 'A replication configuration is present on this bucket, so the versioning state cannot be changed.');
  }
  await ctx.layer.setBucketVersioning(ctx.ep.bucket, status);
  sendEmpty(ctx, 200);
}
