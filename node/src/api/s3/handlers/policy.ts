/**
 * Bucket policies (Put/Get/DeleteBucketPolicy, GetBucketPolicyStatus),
 * Object Ownership controls and Public Access Block. Each is one of the
 * bucket's configuration documents in the object layer.
 */
import { SvcError } from '../../../util/errors.ts';
import {
  decodeOwnership,
  decodePublicAccessBlock,
  encodeSetting,
  ownershipFromXml,
  ownershipToXml,
  publicAccessBlockFromXml,
  publicAccessBlockToXml,
} from '../authz/bucket-settings.ts';
import { bucketSecurity, configStore } from '../authz/endpoint.ts';
import { isPublicPolicy, MAX_POLICY_BYTES, parsePolicy } from '../../../iam/policy.ts';
import { type S3Context, sendEmpty, sendXml } from '../context.ts';
import { readSmallBody } from '../put-data.ts';
import { parseXml } from '../xml.ts';

const MAX_SETTING_BODY = 64 * 1024;

export async function handlePutBucketPolicy(ctx: S3Context): Promise<void> {
  const sec = await bucketSecurity(ctx);
  // read a little past the limit so an oversized policy is MalformedPolicy, not EntityTooLarge
  const body = await readSmallBody(ctx.req.headers, ctx.req, ctx.auth, MAX_POLICY_BYTES * 2);
  const doc = parsePolicy(body, ctx.ep.bucket);
  if (sec.publicAccessBlock.blockPublicPolicy && isPublicPolicy(doc)) {
    throw new SvcError('AccessDenied', 'Access Denied: the bucket blocks public policies (BlockPublicPolicy).');
  }
  await configStore(ctx.layer).setBucketConfig(ctx.ep.bucket, 'policy', body);
  sendEmpty(ctx, 204);
}

export async function handleGetBucketPolicy(ctx: S3Context): Promise<void> {
  const raw = await configStore(ctx.layer).getBucketConfig(ctx.ep.bucket, 'policy');
  if (!raw) throw new SvcError('NoSuchBucketPolicy');
  // the document as it was stored, byte for byte
  ctx.res.writeHead(200, { 'content-type': 'application/json', 'content-length': raw.byteLength });
  ctx.res.end(raw);
}

export async function handleDeleteBucketPolicy(ctx: S3Context): Promise<void> {
  await configStore(ctx.layer).setBucketConfig(ctx.ep.bucket, 'policy', undefined);
  sendEmpty(ctx, 204);
}

export async function handleGetBucketPolicyStatus(ctx: S3Context): Promise<void> {
  const sec = await bucketSecurity(ctx);
  // a bucket without a policy is not public by policy (what S3 answers), not an error
  sendXml(ctx, 200, 'PolicyStatus', { IsPublic: sec.policy ? isPublicPolicy(sec.policy) : false });
}

export async function handlePutBucketOwnershipControls(ctx: S3Context): Promise<void> {
  const body = await readSmallBody(ctx.req.headers, ctx.req, ctx.auth, MAX_SETTING_BODY);
  const ownership = ownershipFromXml(parseXml(body, 'OwnershipControls'));
  const sec = await bucketSecurity(ctx);
  // S3 refuses to disable ACLs while the bucket ACL still grants to others
  if (ownership === 'BucketOwnerEnforced' && sec.acl.grants.some((g) => !(g.grantee.type === 'CanonicalUser' && g.grantee.id === sec.owner.id))) {
    throw new SvcError('InvalidBucketAclWithObjectOwnership');
  }
  await configStore(ctx.layer).setBucketConfig(ctx.ep.bucket, 'ownership', encodeSetting(ownership));
  sendEmpty(ctx, 200);
}

export async function handleGetBucketOwnershipControls(ctx: S3Context): Promise<void> {
  const o = decodeOwnership(await configStore(ctx.layer).getBucketConfig(ctx.ep.bucket, 'ownership'));
  if (!o) throw new SvcError('OwnershipControlsNotFoundError');
  sendXml(ctx, 200, 'OwnershipControls', ownershipToXml(o));
}

export async function handleDeleteBucketOwnershipControls(ctx: S3Context): Promise<void> {
  await configStore(ctx.layer).setBucketConfig(ctx.ep.bucket, 'ownership', undefined);
  sendEmpty(ctx, 204);
}

export async function handlePutPublicAccessBlock(ctx: S3Context): Promise<void> {
  const body = await readSmallBody(ctx.req.headers, ctx.req, ctx.auth, MAX_SETTING_BODY);
  const pab = publicAccessBlockFromXml(parseXml(body, 'PublicAccessBlockConfiguration'));
  await configStore(ctx.layer).setBucketConfig(ctx.ep.bucket, 'public-access-block', encodeSetting(pab));
  sendEmpty(ctx, 200);
}

export async function handleGetPublicAccessBlock(ctx: S3Context): Promise<void> {
  const pab = decodePublicAccessBlock(await configStore(ctx.layer).getBucketConfig(ctx.ep.bucket, 'public-access-block'));
  if (!pab) throw new SvcError('NoSuchPublicAccessBlockConfiguration');
  sendXml(ctx, 200, 'PublicAccessBlockConfiguration', publicAccessBlockToXml(pab));
}

export async function handleDeletePublicAccessBlock(ctx: S3Context): Promise<void> {
  await configStore(ctx.layer).setBucketConfig(ctx.ep.bucket, 'public-access-block', undefined);
  sendEmpty(ctx, 204);
}
