/**
 * ACLs: svc has one owner and no grants. Reads answer the owner's
 * FULL_CONTROL policy; writes accept `private` (canned or as an equivalent
 * document) so clients that touch ACLs keep working; anything granting
 * access to others is NotImplemented.
 */
import { SvcError } from '../../../util/errors.ts';
import { hdr, owner, type S3Context, sendEmpty, sendXml } from '../context.ts';
import { readSmallBody } from '../put-data.ts';
import { parseXml, xmlList } from '../xml.ts';

/** Accepts an `x-amz-acl` header value of `private` (or absent). */
export function checkCannedAcl(v: string | undefined): void {
  if (v === undefined || v === 'private') return;
  throw new SvcError('NotImplemented', `The canned ACL '${v}' is not supported; svc objects and buckets are private.`);
}

function sendPolicy(ctx: S3Context): void {
  sendXml(ctx, 200, 'AccessControlPolicy', {
    Owner: owner(ctx),
    AccessControlList: {
      Grant: {
        Grantee: { '@xmlns:xsi': 'http://www.w3.org/2001/XMLSchema-instance', '@xsi:type': 'CanonicalUser', ID: ctx.ownerId, DisplayName: ctx.ownerId },
        Permission: 'FULL_CONTROL',
      },
    },
  });
}

export async function handleGetBucketAcl(ctx: S3Context): Promise<void> {
  await ctx.layer.getBucketInfo(ctx.ep.bucket);
  sendPolicy(ctx);
}

export async function handleGetObjectAcl(ctx: S3Context): Promise<void> {
  const versionId = ctx.ep.query.get('versionId');
  await ctx.layer.getObjectInfo(ctx.ep.bucket, ctx.ep.key, versionId ? { versionId } : {});
  sendPolicy(ctx);
}

async function checkAclWrite(ctx: S3Context): Promise<void> {
  for (const g of ['x-amz-grant-read', 'x-amz-grant-write', 'x-amz-grant-read-acp', 'x-amz-grant-write-acp', 'x-amz-grant-full-control']) {
    if (hdr(ctx.req, g) !== undefined) throw new SvcError('NotImplemented', 'Explicit ACL grants are not supported; only the private ACL is.');
  }
  checkCannedAcl(hdr(ctx.req, 'x-amz-acl'));
  const body = await readSmallBody(ctx.req.headers, ctx.req, ctx.auth, 64 * 1024);
  if (body.length === 0) return;
  const doc = parseXml(body, 'AccessControlPolicy');
  const acl = doc['AccessControlList'];
  const grants = acl && typeof acl === 'object' ? xmlList(acl as Record<string, unknown>, 'Grant') : [];
  for (const g of grants) {
    const grantee = g['Grantee'] as Record<string, unknown> | undefined;
    const id = grantee && typeof grantee === 'object' ? grantee['ID'] : undefined;
    if (g['Permission'] !== 'FULL_CONTROL' || id !== ctx.ownerId) {
      throw new SvcError('NotImplemented', 'Only the private ACL (owner FULL_CONTROL) is supported.');
    }
  }
}

export async function handlePutBucketAcl(ctx: S3Context): Promise<void> {
  await checkAclWrite(ctx);
  await ctx.layer.getBucketInfo(ctx.ep.bucket);
  sendEmpty(ctx, 200);
}

export async function handlePutObjectAcl(ctx: S3Context): Promise<void> {
  await checkAclWrite(ctx);
  const versionId = ctx.ep.query.get('versionId');
  await ctx.layer.getObjectInfo(ctx.ep.bucket, ctx.ep.key, versionId ? { versionId } : {});
  sendEmpty(ctx, 200);
}
