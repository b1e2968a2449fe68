/**
 * ACL operations (Get/PutBucketAcl, Get/PutObjectAcl) and the ACL a write
 * request asks for through `x-amz-acl` / `x-amz-grant-*` (CreateBucket,
 * PutObject, CopyObject, CreateMultipartUpload, POST Object).
 *
 * Bucket ACLs are the bucket's `acl` configuration document; object ACLs
 * live with the object version. Under BucketOwnerEnforced ACLs are
 * disabled: reads show the owner's FULL_CONTROL, writes other than the
 * owner-only ACL are AccessControlListNotSupported. BlockPublicAcls refuses
 * ACLs that grant to AllUsers or AuthenticatedUsers.
 */
import type { IncomingMessage } from 'node:http';
import { SvcError } from '../../../util/errors.ts';
import { type Acl, aclFromHeaders, aclFromXml, aclToXml, cannedAcl, encodeAcl, isPublicAcl, type Owner } from '../authz/acl.ts';
import { objectAcl } from '../authz/authorize.ts';
import type { BucketSecurity } from '../authz/authorize.ts';
import { bucketSecurity, configStore, rootOwner } from '../authz/endpoint.ts';
import { type S3Context, sendEmpty, sendXml } from '../context.ts';
import { publishAfter } from './events.ts';
import { readSmallBody } from '../put-data.ts';
import { parseXml } from '../xml.ts';

/** Canonical ids svc knows: the root credential's (IAM users join here). */
function knownUsers(ctx: S3Context): (id: string) => string | undefined {
  return (id) => (id === ctx.ownerId ? ctx.ownerId : ctx.knownUser?.(id));
}

/** True for an ACL that grants nothing beyond the owner's FULL_CONTROL (allowed even when ACLs are disabled). */
function ownerOnly(acl: Acl): boolean {
  return acl.grants.every((g) => g.grantee.type === 'CanonicalUser' && g.grantee.id === acl.owner.id && g.permission === 'FULL_CONTROL');
}

/** Applies ownership controls and Public Access Block to an ACL a request wants to set. */
export function checkAclAllowed(acl: Acl, sec: BucketSecurity): void {
  if (sec.ownership === 'BucketOwnerEnforced' && !ownerOnly(acl)) throw new SvcError('AccessControlListNotSupported');
  if (sec.publicAccessBlock.blockPublicAcls && isPublicAcl(acl)) {
    throw new SvcError('AccessDenied', 'Access Denied: the bucket blocks public ACLs (BlockPublicAcls).');
  }
}

/** The ACL a write request names in headers, checked against the bucket; undefined when it names none. */
export function headerAcl(ctx: S3Context, req: IncomingMessage, sec: BucketSecurity, owner: Owner = rootOwner(ctx)): Acl | undefined {
  const acl = aclFromHeaders(req, owner, knownUsers(ctx), sec.owner);
  if (acl) checkAclAllowed(acl, sec);
  return acl;
}

/** The encoded object ACL a write request asks for (PutObject, CopyObject, CreateMultipartUpload). */
export async function requestedObjectAcl(ctx: S3Context): Promise<string | undefined> {
  const acl = headerAcl(ctx, ctx.req, await bucketSecurity(ctx));
  return acl ? encodeAcl(acl) : undefined;
}

function effectiveAcl(acl: Acl, sec: BucketSecurity): Acl {
  return sec.ownership === 'BucketOwnerEnforced' ? cannedAcl('private', sec.owner) : acl;
}

export async function handleGetBucketAcl(ctx: S3Context): Promise<void> {
  const sec = await bucketSecurity(ctx);
  sendXml(ctx, 200, 'AccessControlPolicy', aclToXml(effectiveAcl(sec.acl, sec)));
}

export async function handleGetObjectAcl(ctx: S3Context): Promise<void> {
  const versionId = ctx.ep.query.get('versionId');
  const info = await ctx.layer.getObjectInfo(ctx.ep.bucket, ctx.ep.key, versionId ? { versionId } : {});
  const sec = await bucketSecurity(ctx);
  sendXml(ctx, 200, 'AccessControlPolicy', aclToXml(effectiveAcl(objectAcl(info, sec.owner), sec)), versionId ? { 'x-amz-version-id': info.versionId } : {});
}

/** The ACL of a Put*Acl request: headers or an AccessControlPolicy body, never both, never neither. */
async function aclToSet(ctx: S3Context, owner: Owner, sec: BucketSecurity): Promise<Acl> {
  const fromHeaders = aclFromHeaders(ctx.req, owner, knownUsers(ctx), sec.owner);
  const body = await readSmallBody(ctx.req.headers, ctx.req, ctx.auth, 64 * 1024);
  if (fromHeaders && body.length > 0) throw new SvcError('InvalidRequest', 'This request does not support content together with ACL headers.');
  const acl = fromHeaders ?? (body.length > 0 ? aclFromXml(parseXml(body, 'AccessControlPolicy'), owner, knownUsers(ctx)) : undefined);
  if (!acl) throw new SvcError('MissingSecurityHeader', 'Your request was missing a required header: x-amz-acl, x-amz-grant-* or an AccessControlPolicy body.');
  checkAclAllowed(acl, sec);
  return acl;
}

export async function handlePutBucketAcl(ctx: S3Context): Promise<void> {
  const sec = await bucketSecurity(ctx);
  const acl = await aclToSet(ctx, sec.owner, sec);
  await configStore(ctx.layer).setBucketConfig(ctx.ep.bucket, 'acl', Buffer.from(encodeAcl(acl)));
  sendEmpty(ctx, 200);
}

export async function handlePutObjectAcl(ctx: S3Context): Promise<void> {
  const sec = await bucketSecurity(ctx);
  const versionId = ctx.ep.query.get('versionId');
  const current = await ctx.layer.getObjectInfo(ctx.ep.bucket, ctx.ep.key, versionId ? { versionId } : {});
  const acl = await aclToSet(ctx, objectAcl(current, sec.owner).owner, sec);
  const info = await ctx.layer.updateObjectMetadata(ctx.ep.bucket, ctx.ep.key, { ...(versionId ? { versionId } : {}), acl: encodeAcl(acl) });
  await publishAfter(ctx, 'ObjectAcl:Put', info);
  sendEmpty(ctx, 200, versionId ? { 'x-amz-version-id': info.versionId } : {});
}
