/**
 * The one authorization decision of the S3 API. Pure: every input is given,
 * nothing is read. The order is AWS's:
 *
 *   1. an explicit Deny in any applicable policy (bucket policy, and the
 *      principal's identity policies once IAM exists) refuses — except that
 *      a bucket's owner can always manage its policy (no lock-out);
 *   2. the bucket owner (today: the root credential) is allowed;
 *   3. an Allow in an identity policy or the bucket policy allows (under
 *      RestrictPublicBuckets a bucket with a public policy grants outsiders
 *      nothing public, by policy or by ACL);
 *   4. an ACL grant allows, unless ACLs are disabled (BucketOwnerEnforced)
 *      or the grant is public and IgnorePublicAcls is set;
 *   5. otherwise the request is refused (implicit deny).
 *
 * IAM plugs in through `identityPolicies`: a user's attached policies are
 * evaluated with the same language; the root credential needs none.
 */
import { type Acl, aclAllows, type Permission } from './acl.ts';
import type { PublicAccessBlock } from './bucket-settings.ts';
import type { ConditionContext } from './conditions.ts';
import { evaluatePolicy, isPublicPolicy, isPublicStatement, type PolicyDocument } from './policy.ts';
import type { Principal } from './principal.ts';

export interface AuthzInput {
  principal: Principal;
  /** `s3:GetObject` … */
  action: string;
  /** `arn:aws:s3:::bucket[/key]`, or `arn:aws:s3:::*` for service-level actions. */
  resource: string;
  context: ConditionContext;
  /** Canonical id of the bucket's owner (undefined for service-level actions). */
  bucketOwner?: string;
  bucketPolicy?: PolicyDocument;
  /** The principal's own policies (IAM users; none for root or anonymous). */
  identityPolicies?: readonly PolicyDocument[];
  /** The ACL that can grant this action and the permission it needs. */
  acl?: { acl: Acl; permission: Permission };
  /** False under BucketOwnerEnforced. */
  aclsEnabled: boolean;
  publicAccessBlock: PublicAccessBlock;
}

export type Decision =
  | { allow: true; by: 'owner' | 'identity-policy' | 'bucket-policy' | 'acl' }
  | { allow: false; by: 'explicit-deny' | 'implicit-deny' };

const POLICY_MANAGEMENT = new Set(['s3:getbucketpolicy', 's3:putbucketpolicy', 's3:deletebucketpolicy']);

function isOwner(i: AuthzInput): boolean {
  return i.principal.kind === 'user' && (i.principal.root || (i.bucketOwner !== undefined && i.principal.canonicalId === i.bucketOwner));
}

export function decide(i: AuthzInput): Decision {
  const req = { principal: i.principal, action: i.action, resource: i.resource, context: i.context };
  const owner = isOwner(i);
  const identity = (i.identityPolicies ?? []).map((p) => evaluatePolicy(p, req));
  const bucket = evaluatePolicy(i.bucketPolicy, req);
  if ((bucket === 'Deny' || identity.includes('Deny')) && !(owner && POLICY_MANAGEMENT.has(i.action.toLowerCase()))) {
    return { allow: false, by: 'explicit-deny' };
  }
  if (owner) return { allow: true, by: 'owner' };
  if (identity.includes('Allow')) return { allow: true, by: 'identity-policy' };
  // RestrictPublicBuckets: a bucket with a public policy serves only its owner's
  // account; outsiders get nothing public from it, neither policy nor ACL
  const restricted = i.publicAccessBlock.restrictPublicBuckets && isPublicPolicy(i.bucketPolicy);
  if (bucket === 'Allow') {
    if (!restricted) return { allow: true, by: 'bucket-policy' };
    const nonPublic = evaluatePolicy(i.bucketPolicy, req, (s) => !isPublicStatement(s));
    if (nonPublic === 'Allow') return { allow: true, by: 'bucket-policy' };
  }
  const ignorePublic = i.publicAccessBlock.ignorePublicAcls || restricted;
  if (i.acl && i.aclsEnabled && aclAllows(i.acl.acl, i.principal, i.acl.permission, ignorePublic)) {
    return { allow: true, by: 'acl' };
  }
  return { allow: false, by: 'implicit-deny' };
}
