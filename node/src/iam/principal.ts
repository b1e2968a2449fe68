/**
 * Who is asking. A request is anonymous or signed by a credential that
 * resolves (through the identity store) to one of these principals. Pure
 * data: the policies are already parsed; `decide.ts` evaluates them.
 */
import type { PolicyDocument } from './policy-document.ts';

/** How the signing credential came to be. */
export type CredentialKind = 'root' | 'user' | 'accesskey' | 'sts';

export type Principal =
  | { kind: 'anonymous' }
  | {
      kind: 'user';
      /** The access key that signed the request. */
      accessKey: string;
      /**
       * Canonical user id used in ACL grants and bucket owners: the root
       * access key for the root and its access keys, the user's name for a
       * user, its access keys and its temporary credentials.
       */
      canonicalId: string;
      /** The root credential (or a credential derived from it): owner of every bucket. */
      root: boolean;
      /** `aws:username`: the user the credential belongs to (the root access key for the root). */
      userName?: string;
      credential?: CredentialKind;
      /** The identity's own policies: the user's and its groups' (none for the root). */
      policies?: readonly PolicyDocument[];
      /**
       * Policies that must each allow the request as well: an access key's
       * inline policy, a session policy. The effective rights are the
       * intersection (an access key never has more than its parent).
       */
      restrictions?: readonly PolicyDocument[];
      /** Extra condition keys the credential carries (`jwt:sub`, `ldap:username`, `aws:TokenIssueTime`...). */
      claims?: Readonly<Record<string, readonly string[]>>;
    };

export type SignedPrincipal = Extract<Principal, { kind: 'user' }>;

export const ANONYMOUS: Principal = { kind: 'anonymous' };

export function rootPrincipal(accessKey: string): SignedPrincipal {
  return { kind: 'user', accessKey, canonicalId: accessKey, root: true, userName: accessKey, credential: 'root' };
}

/** The identifiers a policy's `Principal` may name this principal by. */
export function principalIds(p: Principal): string[] {
  if (p.kind === 'anonymous') return [];
  const user = p.userName ?? p.canonicalId;
  const ids = [p.canonicalId, p.accessKey, user, `arn:aws:iam:::user/${user}`];
  if (p.credential === 'sts') ids.push(`arn:aws:sts:::assumed-role/${user}/${p.accessKey}`);
  if (p.root) ids.push('arn:aws:iam:::root');
  return [...new Set(ids)];
}
