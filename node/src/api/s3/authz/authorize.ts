/**
 * Authorization at the edge (I/O): loads what the decision needs — the
 * bucket's policy, ACL, ownership controls and public access block, stored
 * by the object layer as per-bucket configuration documents — and, only when
 * nothing else allowed an object action, the object's own ACL; then asks
 * `decide` and throws AccessDenied on a refusal. Runs before any byte of a
 * request body is read.
 */
import type { ObjectInfo } from '../../../object/types.ts';
import { SvcError } from '../../../util/errors.ts';
import { type Acl, aclAllows, cannedAcl, decodeAcl, type Owner } from './acl.ts';
import { actionOf, ACTIONS, conditionContext, type RequestFacts, resourceArn } from './actions.ts';
import { DEFAULT_OWNERSHIP, decodeOwnership, decodePublicAccessBlock, NO_PUBLIC_ACCESS_BLOCK, type ObjectOwnership, type PublicAccessBlock } from './bucket-settings.ts';
import { decide, NO_PUBLIC_ACCESS_SWITCHES } from '../../../iam/decide.ts';
import { type PolicyDocument, parsePolicy } from '../../../iam/policy.ts';
import type { Principal } from '../../../iam/principal.ts';

/** Per-bucket configuration documents the S3 API owns (stored by the object layer with the bucket). */
export type BucketConfigKind = 'policy' | 'acl' | 'cors' | 'ownership' | 'public-access-block';

export interface BucketConfigStore {
  getBucketConfig(bucket: string, kind: BucketConfigKind): Promise<Uint8Array | undefined>;
  setBucketConfig(bucket: string, kind: BucketConfigKind, data: Uint8Array | undefined): Promise<void>;
}

export interface BucketSecurity {
  owner: Owner;
  acl: Acl;
  policy: PolicyDocument | undefined;
  ownership: ObjectOwnership;
  publicAccessBlock: PublicAccessBlock;
}

/** Parsed policies by bucket and text: a stored document is validated once, not per request. */
const parsedPolicies = new Map<string, PolicyDocument>();
const MAX_PARSED_POLICIES = 512;

/** Told, once per parsed document, of the actions a stored bucket policy names that no service has. */
export type UnknownActionsReport = (bucket: string, actions: readonly string[]) => void;

/**
 * The stored policy, parsed once per stored document. Action names were
 * checked when it was written; a policy stored before that check keeps
 * working (an unknown action matches nothing) and is reported.
 */
export function storedPolicy(raw: Uint8Array | undefined, bucket: string, report?: UnknownActionsReport): PolicyDocument | undefined {
  if (!raw) return undefined;
  const cacheKey = `${bucket}\0${Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('utf8')}`;
  let doc = parsedPolicies.get(cacheKey);
  if (!doc) {
    doc = parsePolicy(raw, bucket, { stored: true });
    if (parsedPolicies.size >= MAX_PARSED_POLICIES) parsedPolicies.clear();
    parsedPolicies.set(cacheKey, doc);
    if (doc.unknownActions) report?.(bucket, doc.unknownActions);
  }
  return doc;
}

/** Everything access control knows about a bucket; a bucket without documents is private, ACLs enabled, nothing blocked. */
export async function loadBucketSecurity(store: BucketConfigStore, bucket: string, root: Owner, report?: UnknownActionsReport): Promise<BucketSecurity> {
  const [policy, acl, ownership, pab] = await Promise.all([
    store.getBucketConfig(bucket, 'policy'),
    store.getBucketConfig(bucket, 'acl'),
    store.getBucketConfig(bucket, 'ownership'),
    store.getBucketConfig(bucket, 'public-access-block'),
  ]);
  const bucketAcl = acl ? decodeAcl(acl) : cannedAcl('private', root);
  return {
    owner: bucketAcl.owner,
    acl: bucketAcl,
    policy: storedPolicy(policy, bucket, report),
    ownership: decodeOwnership(ownership) ?? DEFAULT_OWNERSHIP,
    publicAccessBlock: decodePublicAccessBlock(pab) ?? NO_PUBLIC_ACCESS_BLOCK,
  };
}

/** An object's ACL as stored with its version; private to the bucket owner when none was set. */
export function objectAcl(info: Pick<ObjectInfo, 'acl'>, owner: Owner): Acl {
  return info.acl ? decodeAcl(info.acl) : cannedAcl('private', owner);
}

export interface AuthorizeRequest {
  facts: RequestFacts;
  bucket: string;
  key?: string;
  /** Defaults to the endpoint's action. */
  action?: string;
  security?: BucketSecurity;
  /** Loads the object's version (for its ACL) when an object ACL could decide. */
  object?: () => Promise<Pick<ObjectInfo, 'acl'> | undefined>;
}

/** Throws AccessDenied unless the request is allowed. */
export async function authorize(r: AuthorizeRequest): Promise<void> {
  const ep = r.facts.ep;
  const spec = ACTIONS[ep.op];
  const action = r.action ?? actionOf(ep);
  const principal: Principal = r.facts.principal;
  if (spec.level === 'service' || r.bucket === '') {
    // ListBuckets and CreateBucket: signed callers only. ListBuckets lists
    // what the caller may see (its handler filters); CreateBucket needs
    // s3:CreateBucket on the new bucket from the caller's own policies.
    if (principal.kind !== 'user') throw new SvcError('AccessDenied');
    if (ep.op === 'ListBuckets') return;
    const d = decide({
      principal,
      action,
      resource: resourceArn(ep.bucket),
      context: conditionContext(r.facts),
      aclsEnabled: false,
      publicAccessBlock: NO_PUBLIC_ACCESS_SWITCHES,
    });
    if (!d.allow) throw new SvcError('AccessDenied');
    return;
  }
  const sec = r.security!;
  const base = {
    principal,
    action,
    resource: resourceArn(r.bucket, r.key),
    context: conditionContext(r.facts),
    bucketOwner: sec.owner.id,
    ...(sec.policy ? { bucketPolicy: sec.policy } : {}),
    aclsEnabled: sec.ownership !== 'BucketOwnerEnforced',
    publicAccessBlock: sec.publicAccessBlock,
  };
  const aclOn = spec.acl;
  let d = decide(aclOn?.on === 'bucket' ? { ...base, acl: (ig: boolean) => aclAllows(sec.acl, principal, aclOn.permission, ig) } : base);
  if (!d.allow && d.by === 'implicit-deny' && aclOn?.on === 'object' && base.aclsEnabled && r.object) {
    const info = await r.object().catch(() => undefined);
    if (info) {
      const acl = objectAcl(info, sec.owner);
      d = decide({ ...base, acl: (ig: boolean) => aclAllows(acl, principal, aclOn.permission, ig) });
    }
  }
  if (!d.allow) throw new SvcError('AccessDenied');
}
