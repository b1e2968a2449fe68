/**
 * Authorization of a parsed S3 request (the step between authentication and
 * the handler): the endpoint's own action, plus reading the copy source for
 * CopyObject / UploadPartCopy. Loads the bucket's security settings into the
 * context for the handlers that show or change them.
 */
import type { ObjectLayer } from '../../../object/types.ts';
import { SvcError } from '../../../util/errors.ts';
import { requestOrigin } from '../../request-origin.ts';
import type { S3Context } from '../context.ts';
import { parseCopySource } from '../copy-source.ts';
import { cannedAcl, type Owner } from './acl.ts';
import { DEFAULT_OWNERSHIP, NO_PUBLIC_ACCESS_BLOCK } from './bucket-settings.ts';
import { decide, NO_PUBLIC_ACCESS_SWITCHES } from '../../../iam/decide.ts';
import { conditionContext, type RequestFacts } from './actions.ts';
import { authorizeGovernance } from './governance.ts';
import { authorize, type BucketConfigStore, type BucketSecurity, loadBucketSecurity, storedPolicy, type UnknownActionsReport } from './authorize.ts';

/** The object layer's per-bucket configuration API (the documents this edge owns). */
export function configStore(layer: ObjectLayer): BucketConfigStore {
  return layer;
}

export function rootOwner(ctx: S3Context): Owner {
  return { id: ctx.ownerId, displayName: ctx.ownerId };
}

export function requestFacts(ctx: S3Context, authType?: RequestFacts['authType']): RequestFacts {
  return {
    req: ctx.req,
    ep: ctx.ep,
    principal: ctx.principal,
    secure: requestOrigin(ctx.req).secure,
    now: ctx.clock.now(),
    authType: authType ?? (ctx.auth.anonymous ? undefined : ctx.auth.presigned ? 'REST-QUERY-STRING' : 'REST-HEADER'),
    ...(ctx.auth.signatureV2 ? { signatureV2: true } : {}),
  };
}

/** A stored bucket policy naming actions no service has (stored before svc checked them): logged once per document. */
function reportUnknownActions(ctx: S3Context): UnknownActionsReport {
  return (bucket, actions) =>
    ctx.logger.warn(
      { event: 'bucket_policy_unknown_actions', bucket, actions },
      `the policy of bucket ${bucket} names actions no service has (they grant and deny nothing); correct them and put the policy again`,
    );
}

/** The bucket's settings, loaded once per request. */
export async function bucketSecurity(ctx: S3Context, bucket = ctx.ep.bucket): Promise<BucketSecurity> {
  if (bucket === ctx.ep.bucket && ctx.security) return ctx.security;
  const sec = await loadBucketSecurity(configStore(ctx.layer), bucket, rootOwner(ctx), reportUnknownActions(ctx));
  if (bucket === ctx.ep.bucket) ctx.security = sec;
  return sec;
}

/**
 * What authorization needs of a bucket for this principal. The root owns
 * every bucket, so only an explicit Deny in the policy can refuse it: its
 * requests read just the policy (ACL, ownership and public access block
 * cannot change its answer).
 */
async function securityFor(ctx: S3Context, bucket: string): Promise<BucketSecurity> {
  if (!(ctx.principal.kind === 'user' && ctx.principal.root)) return bucketSecurity(ctx, bucket);
  const owner = rootOwner(ctx);
  return {
    owner,
    acl: cannedAcl('private', owner),
    policy: storedPolicy(await configStore(ctx.layer).getBucketConfig(bucket, 'policy'), bucket, reportUnknownActions(ctx)),
    ownership: DEFAULT_OWNERSHIP,
    publicAccessBlock: NO_PUBLIC_ACCESS_BLOCK,
  };
}

/**
 * `x-amz-expected-bucket-owner` (and `x-amz-source-expected-bucket-owner` for
 * a copy's source): a bucket owned by someone else is refused with 403, as S3
 * does. Owners are canonical ids; in svc every bucket belongs to the root
 * credential, whose canonical id is its access key.
 */
function checkExpectedOwner(ctx: S3Context, header: string): void {
  const raw = ctx.req.headers[header];
  const expected = Array.isArray(raw) ? raw[0] : raw;
  if (expected !== undefined && expected.trim() !== rootOwner(ctx).id) {
    throw new SvcError('AccessDenied', `Access Denied: the bucket is not owned by the account named in ${header}.`);
  }
}

export async function authorizeEndpoint(ctx: S3Context): Promise<void> {
  const { ep } = ctx;
  const facts = requestFacts(ctx);
  if (ep.bucket === '' || ep.op === 'CreateBucket') {
    await authorize({ facts, bucket: '' });
    return;
  }
  checkExpectedOwner(ctx, 'x-amz-expected-bucket-owner');
  if (ep.op === 'CopyObject' || ep.op === 'UploadPartCopy') checkExpectedOwner(ctx, 'x-amz-source-expected-bucket-owner');
  const security = await securityFor(ctx, ep.bucket);
  if (ep.op === 'DeleteObjects') {
    // S3 authorizes each key of a multi-object delete on its own
    ctx.authorizeKey = async (key, action) => {
      await authorize({ facts, bucket: ep.bucket, key, action, security });
    };
    return;
  }
  const versionId = ep.query.get('versionId');
  await authorize({
    facts,
    bucket: ep.bucket,
    ...(ep.key ? { key: ep.key } : {}),
    security,
    object: () => ctx.layer.getObjectInfo(ep.bucket, ep.key, versionId ? { versionId } : {}),
  });
  await authorizeGovernance(facts, ep.bucket, ep.key, security);
  // One more permission of this request on its key (a replication write also needs s3:ReplicateObject / s3:ReplicateDelete).
  ctx.authorizeKey = async (key, action) => {
    await authorize({ facts, bucket: ep.bucket, key, action, security });
  };
  if (ep.op === 'CopyObject' || ep.op === 'UploadPartCopy') {
    const src = parseCopySource(ep.copySource);
    await authorize({
      facts,
      bucket: src.bucket,
      key: src.key,
      action: src.versionId ? 's3:GetObjectVersion' : 's3:GetObject',
      security: await securityFor(ctx, src.bucket),
      object: () => ctx.layer.getObjectInfo(src.bucket, src.key, src.versionId ? { versionId: src.versionId } : {}),
    });
  }
}

/** The owner a bucket created by this caller gets: the root's own id for the root (and its keys), else the user's. */
export function callerOwner(ctx: S3Context): Owner {
  const p = ctx.principal;
  if (p.kind !== 'user' || p.root) return rootOwner(ctx);
  return { id: p.canonicalId, displayName: p.userName ?? p.canonicalId };
}

/**
 * Which of `buckets` ListBuckets shows this caller: all of them with
 * `s3:ListAllMyBuckets` (the root always); else those it may list
 * (`s3:ListBucket` by its own policies, the bucket policy, an ACL grant, or
 * as the bucket's owner), as MinIO lists a user's buckets.
 */
export async function visibleBuckets<T extends { name: string }>(ctx: S3Context, buckets: T[]): Promise<T[]> {
  const facts = requestFacts(ctx);
  const all = decide({ principal: ctx.principal, action: 's3:ListAllMyBuckets', resource: 'arn:aws:s3:::*', context: conditionContext(facts), aclsEnabled: false, publicAccessBlock: NO_PUBLIC_ACCESS_SWITCHES }).allow;
  if (all) return buckets;
  const out: T[] = [];
  for (const b of buckets) {
    const security = await bucketSecurity(ctx, b.name).catch(() => undefined);
    if (security === undefined) continue;
    const ok = await authorize({ facts: { ...facts, ep: { ...facts.ep, op: 'ListObjectsV2', bucket: b.name } as RequestFacts['ep'] }, bucket: b.name, action: 's3:ListBucket', security }).then(
      () => true,
      () => false,
    );
    if (ok) out.push(b);
  }
  return out;
}
