/**
 * The condition keys a principal brings to every request, whatever the API:
 * `aws:PrincipalType`, `aws:username`, `aws:userid`, and the keys its
 * credential carries (`aws:TokenIssueTime` for temporary credentials, the
 * identity provider's claims such as `jwt:sub` or `ldap:username`). Pure.
 */
import type { Principal } from './principal.ts';

export function addPrincipalKeys(m: Map<string, string[]>, p: Principal): void {
  if (p.kind === 'anonymous') {
    m.set('aws:principaltype', ['Anonymous']);
    return;
  }
  m.set('aws:principaltype', [p.root && p.credential !== 'sts' ? 'Account' : p.credential === 'sts' ? 'AssumedRole' : 'User']);
  m.set('aws:username', [p.userName ?? p.accessKey]);
  m.set('aws:userid', [p.credential === 'sts' ? `${p.canonicalId}:${p.accessKey}` : p.canonicalId]);
  for (const [k, v] of Object.entries(p.claims ?? {})) m.set(k.toLowerCase(), [...v]);
}
