/**
 * From an access key (and a session token) to who is asking: the one
 * identity lookup behind every signature scheme. Pure over one generation
 * of the identity store: the root credential (from its own source, which
 * follows rotation), users, access keys (service accounts) and temporary
 * credentials (sealed session tokens). Each resolution carries the
 * principal with its policies already parsed (cached per generation), so a
 * request evaluates without reading anything.
 *
 * Refusals are "unknown" (undefined): a disabled user, a disabled or
 * expired access key, an access key or session whose parent is disabled or
 * gone, a token that does not open. Expiry of access keys and sessions is
 * reported through `expiresAt` and enforced by the seam with SigV4's clock
 * rules (`lookupSecret`).
 */
import { cannedPolicy } from './canned.ts';
import { type PolicyDocument, parseIdentityPolicy } from './policy.ts';
import type { SignedPrincipal } from './principal.ts';
import { openSessionToken, type SessionClaims } from './session-token.ts';
import { type AccessKeyRecord, effectivePolicyNames, type IamDoc, ldapPolicyNames, type Secret } from './state.ts';

/** Structurally the S3 API's `Credential`. */
export interface ResolvedCredential {
  accessKey: string;
  secretKey: string;
  sessionToken?: string;
  expiresAt?: number;
  principal: SignedPrincipal;
}

export interface RootKeys {
  readonly accessKey: string;
  readonly secretKey: string;
}

export interface IndexDeps {
  readonly doc: IamDoc;
  /** Opens a sealed secret (KMS) or returns a plain one. */
  readonly open: (s: Secret) => string;
  readonly root: () => RootKeys;
}

const MAX_SESSIONS_CACHED = 4096;
/** Policies here were validated when written; one stored before svc checked action names still loads (`ParseOptions.stored`). */
const STORED = { stored: true } as const;

export class IamIndex {
  readonly doc: IamDoc;
  readonly #open: (s: Secret) => string;
  readonly #root: () => RootKeys;
  readonly #secrets = new Map<string, string>();
  readonly #policies = new Map<string, PolicyDocument | null>();
  readonly #sessions = new Map<string, SessionClaims | null>();
  readonly #stsKey: Buffer;

  constructor(d: IndexDeps) {
    this.doc = d.doc;
    this.#open = d.open;
    this.#root = d.root;
    this.#stsKey = Buffer.from(d.open(d.doc.stsKey), 'base64');
  }

  get stsKey(): Buffer {
    return this.#stsKey;
  }

  /** A named policy, parsed once per generation; undefined when it does not exist. */
  policy(name: string): PolicyDocument | undefined {
    const canned = cannedPolicy(name);
    if (canned) return canned.doc;
    let p = this.#policies.get(name);
    if (p === undefined) {
      const rec = this.doc.policies[name];
      p = rec === undefined ? null : parseIdentityPolicy(rec.text, STORED);
      this.#policies.set(name, p);
    }
    return p ?? undefined;
  }

  /**
   * The stored policies (named ones, access keys' own) that name actions
   * no service has: written before svc checked action names. They load,
   * and those actions match nothing; the node reports them at start-up.
   */
  unknownActions(): { policy?: string; accessKey?: string; actions: string[] }[] {
    const out: { policy?: string; accessKey?: string; actions: string[] }[] = [];
    // a document that does not parse at all is refused where it is used, as before; this only lists
    const unknownIn = (parse: () => PolicyDocument | undefined) => {
      try {
        return parse()?.unknownActions;
      } catch {
        return undefined;
      }
    };
    for (const name of Object.keys(this.doc.policies)) {
      const actions = unknownIn(() => this.policy(name));
      if (actions) out.push({ policy: name, actions });
    }
    for (const [accessKey, k] of Object.entries(this.doc.accessKeys)) {
      const text = k.policy;
      const actions = text !== undefined ? unknownIn(() => parseCached(this.#policies, `ak:${accessKey}`, text)) : undefined;
      if (actions) out.push({ accessKey, actions });
    }
    return out;
  }

  #docs(names: readonly string[]): PolicyDocument[] {
    return names.map((n) => this.policy(n)).filter((p): p is PolicyDocument => p !== undefined);
  }

  #secret(key: string, s: Secret): string {
    let v = this.#secrets.get(key);
    if (v === undefined) {
      v = this.#open(s);
      this.#secrets.set(key, v);
    }
    return v;
  }

  /** The principal of an enabled user; undefined when absent or disabled. */
  userPrincipal(name: string, accessKey = name): SignedPrincipal | undefined {
    const u = this.doc.users[name];
    if (u === undefined || u.status !== 'enabled') return undefined;
    return { kind: 'user', accessKey, canonicalId: name, root: false, userName: name, credential: 'user', policies: this.#docs(effectivePolicyNames(this.doc, name)) };
  }

  #rootPrincipal(accessKey: string, rootKey: string): SignedPrincipal {
    return { kind: 'user', accessKey, canonicalId: rootKey, root: true, userName: rootKey, credential: 'root' };
  }

  /** The credential an access key (and session token) stands for; undefined when unknown or not usable. */
  lookup(accessKey: string, sessionToken?: string): ResolvedCredential | undefined {
    const root = this.#root();
    if (sessionToken !== undefined) return this.#session(accessKey, sessionToken, root);
    if (accessKey === root.accessKey) return { accessKey, secretKey: root.secretKey, principal: this.#rootPrincipal(accessKey, root.accessKey) };
    const u = this.doc.users[accessKey];
    if (u !== undefined) {
      const principal = this.userPrincipal(accessKey);
      return principal ? { accessKey, secretKey: this.#secret(`u:${accessKey}`, u.secret), principal } : undefined;
    }
    const k = this.doc.accessKeys[accessKey];
    if (k === undefined || k.status !== 'enabled') return undefined;
    const parent = k.ldap !== undefined ? this.#ldapKeyPrincipal(accessKey, k) : k.parent === null ? this.#rootPrincipal(accessKey, root.accessKey) : this.userPrincipal(k.parent, accessKey);
    if (parent === undefined) return undefined;
    const restrictions = k.policy !== undefined ? [parseCached(this.#policies, `ak:${accessKey}`, k.policy)] : [];
    return {
      accessKey,
      secretKey: this.#secret(`k:${accessKey}`, k.secret),
      ...(k.expiresAt !== undefined ? { expiresAt: k.expiresAt } : {}),
      principal: { ...parent, accessKey, credential: 'accesskey', restrictions },
    };
  }

  /**
   * An LDAP user's access key: the policies mapped now to its DN and the
   * groups stored with it, with the claims an LDAP session carries; none
   * while the LDAP provider is removed or turned off.
   */
  #ldapKeyPrincipal(accessKey: string, k: AccessKeyRecord): SignedPrincipal | undefined {
    const o = k.ldap!;
    const cfg = this.doc.idp.ldap;
    if (cfg === undefined || cfg.disabled === true) return undefined;
    return {
      kind: 'user',
      accessKey,
      // as an LDAP session's: the provider named, so it never owns an svc user's buckets
      canonicalId: `ldap:${o.username}`,
      root: false,
      userName: o.username,
      policies: this.#docs(ldapPolicyNames(this.doc.ldapPolicies, o.dn, o.groups)),
      claims: { 'ldap:username': [o.username], 'ldap:user': [o.dn], 'ldap:groups': [...o.groups] },
    };
  }

  #claims(token: string): SessionClaims | undefined {
    let c = this.#sessions.get(token);
    if (c === undefined) {
      c = openSessionToken(this.#stsKey, token) ?? null;
      if (this.#sessions.size >= MAX_SESSIONS_CACHED) this.#sessions.clear();
      this.#sessions.set(token, c);
    }
    return c ?? undefined;
  }

  #session(accessKey: string, token: string, root: RootKeys): ResolvedCredential | undefined {
    const c = this.#claims(token);
    if (c === undefined || c.ak !== accessKey) return undefined;
    let base: SignedPrincipal | undefined;
    if (c.kind === 'assume-role') {
      base = c.parent === null || c.parent === undefined ? this.#rootPrincipal(accessKey, root.accessKey) : this.userPrincipal(c.parent, accessKey);
    } else {
      const subject = c.subject ?? accessKey;
      // an external identity's canonical id names its provider, so it never owns an svc user's buckets
      base = { kind: 'user', accessKey, canonicalId: `${c.kind === 'ldap' ? 'ldap' : 'oidc'}:${subject}`, root: false, userName: subject, policies: this.#docs(c.policies ?? []) };
    }
    if (base === undefined) return undefined;
    const restrictions = c.sessionPolicy !== undefined ? [parseCached(this.#policies, `sp:${token}`, c.sessionPolicy)] : [];
    return {
      accessKey,
      secretKey: c.sk,
      sessionToken: token,
      expiresAt: c.exp,
      principal: {
        ...base,
        accessKey,
        credential: 'sts',
        restrictions: [...(base.restrictions ?? []), ...restrictions],
        claims: { ...(c.claims ?? {}), 'aws:TokenIssueTime': [new Date(c.iat).toISOString()] },
      },
    };
  }
}

function parseCached(cache: Map<string, PolicyDocument | null>, key: string, text: string): PolicyDocument {
  let p = cache.get(key);
  if (p === undefined || p === null) {
    p = parseIdentityPolicy(text, STORED);
    // bounded: session policies add an entry per session; named ones are parsed again on demand
    if (cache.size >= MAX_SESSIONS_CACHED * 2) cache.clear();
    cache.set(key, p);
  }
  return p;
}
