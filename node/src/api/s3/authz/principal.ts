/**
 * Who is asking. Today a request is anonymous or signed by the root
 * credential; IAM users plug in as further `user` principals with their own
 * identity policies (see `decide.ts`).
 */
export type Principal =
  | { kind: 'anonymous' }
  | {
      kind: 'user';
      accessKey: string;
      /** Canonical user id used in ACL grants and owners (svc: the access key). */
      canonicalId: string;
      /** The root credential: owner of every bucket. */
      root: boolean;
    };

export const ANONYMOUS: Principal = { kind: 'anonymous' };

export function rootPrincipal(accessKey: string): Principal {
  return { kind: 'user', accessKey, canonicalId: accessKey, root: true };
}

/** The identifiers a policy's `Principal` may name this principal by. */
export function principalIds(p: Principal): string[] {
  if (p.kind === 'anonymous') return [];
  return [p.canonicalId, p.accessKey, `arn:aws:iam:::user/${p.accessKey}`, ...(p.root ? ['arn:aws:iam:::root'] : [])];
}
