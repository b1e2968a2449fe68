/**
 * Admin authorization: every route names the permission it needs (the
 * MinIO policy action names, so IAM policies written for them read the same
 * here) and an `AdminAuthorizer` decides per verified caller, with the one
 * decision every request gets (`iam/decide.ts`): the root credential holds
 * every admin permission; a user, access key or session holds what its
 * policies allow (`admin:*`, `admin:ServerInfo`, ...), narrowed by its
 * access-key or session policy.
 */
import { decide, NO_PUBLIC_ACCESS_SWITCHES } from '../../iam/decide.ts';
import type { SignedPrincipal } from '../../iam/principal.ts';
import { addPrincipalKeys } from '../../iam/context-keys.ts';
import { plainIp } from '../../util/ip-set.ts';

export type AdminAction = 'admin:ServerInfo' | 'admin:Decommission' | 'admin:Rebalance' | 'admin:Heal' | 'admin:SetBucketQuota' | 'admin:GetBucketQuota' | 'admin:ConfigUpdate' | 'admin:SetBucketTarget' | 'admin:GetBucketTarget';

/** The verified caller of an admin request. */
export interface AdminCaller {
  /** The access key whose signature was verified. */
  readonly principal: string;
  readonly sessionToken?: string;
  readonly clientAddress: string;
}

export interface AdminAuthorizer {
  /** True when the identity behind the caller may perform `action`. */
  allowed(caller: AdminCaller, action: string): boolean;
  /** The caller's identity and secret key (identity routes encrypt with it); undefined when it no longer resolves. */
  resolve?(caller: AdminCaller): { principal: SignedPrincipal; secretKey: string } | undefined;
}

/** The root credential holds every admin permission; no other identity exists. Its access key may change (rotation). */
export function rootAuthorizer(rootAccessKey: string | (() => string)): AdminAuthorizer {
  const current = typeof rootAccessKey === 'string' ? () => rootAccessKey : rootAccessKey;
  return { allowed: (caller) => caller.principal === current() };
}

/** Whether `p` may perform the admin `action` (the one decision; admin actions are deployment-wide). */
export function principalMay(p: SignedPrincipal, action: string, clientAddress: string, now: number, resource = 'arn:aws:s3:::*', bucketOwner?: string): boolean {
  const m = new Map<string, string[]>();
  addPrincipalKeys(m, p);
  m.set('aws:sourceip', [plainIp(clientAddress)]);
  m.set('aws:currenttime', [new Date(now).toISOString()]);
  m.set('aws:epochtime', [String(Math.floor(now / 1000))]);
  return decide({ principal: p, action, resource, context: m, ...(bucketOwner !== undefined ? { bucketOwner } : {}), aclsEnabled: false, publicAccessBlock: NO_PUBLIC_ACCESS_SWITCHES }).allow;
}

/** Authorization through the identity store: `lookup` resolves a caller as the request's signature did. */
export function iamAuthorizer(
  lookup: (accessKey: string, sessionToken?: string) => { principal?: SignedPrincipal; secretKey: string } | undefined,
  now: () => number,
): AdminAuthorizer {
  const resolve = (c: AdminCaller) => {
    const cred = lookup(c.principal, c.sessionToken);
    return cred?.principal ? { principal: cred.principal, secretKey: cred.secretKey } : undefined;
  };
  return {
    resolve,
    allowed: (c, action) => {
      const r = resolve(c);
      return r !== undefined && principalMay(r.principal, action, c.clientAddress, now());
    },
  };
}
