/**
 * The one authorization decision of svc: S3 requests, admin API requests and
 * (through them) the console ask it. Pure: every input is given, nothing is
 * read. The order is AWS's policy evaluation logic:
 *
 *   1. an explicit Deny in any applicable policy (the bucket policy, the
 *      identity's policies, an access key's inline policy or a session
 *      policy) refuses — except that a bucket's owner can always manage its
 *      bucket policy (no lock-out);
 *   2. every restriction (an access key's inline policy, a session policy)
 *      must allow the request, else it is refused: such a credential never
 *      has more rights than its parent, and the policy narrows them;
 *   3. the bucket owner is allowed (the root owns every bucket; a user owns
 *      the buckets it created, as with S3's owner FULL_CONTROL);
 *   4. an Allow in an identity policy or the bucket policy allows (under
 *      RestrictPublicBuckets a bucket with a public policy grants outsiders
 *      nothing public, by policy or by ACL);
 *   5. an ACL grant allows, unless ACLs are disabled (BucketOwnerEnforced)
 *      or the grant is public and IgnorePublicAcls is set;
 *   6. otherwise the request is refused (implicit deny).
 */
import type { ConditionContext } from './conditions.ts';
import { evaluatePolicy, isPublicPolicy, isPublicStatement, type PolicyDocument } from './policy.ts';
import type { Principal } from './principal.ts';

/** The two Public Access Block switches the decision reads. */
export interface PublicAccessSwitches {
  ignorePublicAcls: boolean;
  restrictPublicBuckets: boolean;
}

export const NO_PUBLIC_ACCESS_SWITCHES: PublicAccessSwitches = { ignorePublicAcls: false, restrictPublicBuckets: false };

export interface AuthzInput {
  principal: Principal;
  /** `s3:GetObject`, `admin:ServerInfo` … */
  action: string;
  /** `arn:aws:s3:::bucket[/key]`, or `arn:aws:s3:::*` for service-level and admin actions. */
  resource: string;
  context: ConditionContext;
  /** Canonical id of the bucket's owner (undefined for service-level actions). */
  bucketOwner?: string;
  bucketPolicy?: PolicyDocument;
  /**
   * The principal's own policies; default: the principal's. Tests and
   * callers that resolved them elsewhere may pass them here.
   */
  identityPolicies?: readonly PolicyDocument[];
  /** Whether an ACL grants this request; `ignorePublic` drops grants to AllUsers and AuthenticatedUsers. */
  acl?: (ignorePublic: boolean) => boolean;
  /** False under BucketOwnerEnforced. */
  aclsEnabled: boolean;
  publicAccessBlock: PublicAccessSwitches;
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
  const p = i.principal.kind === 'user' ? i.principal : undefined;
  const identity = (i.identityPolicies ?? p?.policies ?? []).map((d) => evaluatePolicy(d, req));
  const restricted = (p?.restrictions ?? []).map((d) => evaluatePolicy(d, req));
  const bucket = evaluatePolicy(i.bucketPolicy, req);
  if ((bucket === 'Deny' || identity.includes('Deny') || restricted.includes('Deny')) && !(owner && POLICY_MANAGEMENT.has(i.action.toLowerCase()))) {
    return { allow: false, by: 'explicit-deny' };
  }
  if (restricted.some((r) => r !== 'Allow')) return { allow: false, by: 'implicit-deny' };
  if (owner) return { allow: true, by: 'owner' };
  if (identity.includes('Allow')) return { allow: true, by: 'identity-policy' };
  // RestrictPublicBuckets: a bucket with a public policy serves only its owner's
  // account; outsiders get nothing public from it, neither policy nor ACL
  const restrictPublic = i.publicAccessBlock.restrictPublicBuckets && isPublicPolicy(i.bucketPolicy);
  if (bucket === 'Allow') {
    if (!restrictPublic) return { allow: true, by: 'bucket-policy' };
    const nonPublic = evaluatePolicy(i.bucketPolicy, req, (s) => !isPublicStatement(s));
    if (nonPublic === 'Allow') return { allow: true, by: 'bucket-policy' };
  }
  const ignorePublic = i.publicAccessBlock.ignorePublicAcls || restrictPublic;
  if (i.acl && i.aclsEnabled && i.acl(ignorePublic)) return { allow: true, by: 'acl' };
  return { allow: false, by: 'implicit-deny' };
}
