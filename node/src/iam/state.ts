/**
 * The identity store's data: users, groups, policies, access keys, the
 * identity-provider configuration, and the key that seals session tokens,
 * as one versioned document (`config/iam/iam.json` in the system area).
 * Pure: decoding and validation, the mutations the admin API performs (each
 * a function from the current document to the next one, throwing the admin
 * error that refuses it and changing nothing then), and what a listing
 * shows. The I/O around it (quorum reads and locked writes, peers, sealing
 * with the KMS) lives in `server/iam-service.ts`.
 *
 * Secrets are `Secret` values: sealed with a KMS key (`kms`) when the
 * deployment has a key store, otherwise kept in clear (`plain`) in the
 * system area of the drives, as MinIO and RustFS keep IAM data without a
 * KMS; never logged either way.
 */
import { SvcError } from '../util/errors.ts';
import { isCannedPolicy } from './canned.ts';
import { parseIdentityPolicy } from './policy.ts';

export const IAM_DOC_VERSION = 1;
/** Largest encoded document (users, groups, policies and access keys together). */
export const MAX_IAM_DOC_BYTES = 16 * 1024 * 1024;

export type Secret = { readonly v: 'plain'; readonly s: string } | { readonly v: 'kms'; readonly kid: string; readonly s: string };
export type Status = 'enabled' | 'disabled';

export interface UserRecord {
  secret: Secret;
  status: Status;
  policies: string[];
  createdAt: number;
  updatedAt: number;
}

export interface GroupRecord {
  status: Status;
  members: string[];
  policies: string[];
  updatedAt: number;
}

export interface PolicyRecord {
  /** The document as given (validated). */
  text: string;
  createdAt: number;
  updatedAt: number;
}

/** The LDAP user an access key belongs to, as resolved by the lookup bind when the key was created. */
export interface LdapKeyOwner {
  /** The user's DN as the server gave it (the key's `parent`). */
  dn: string;
  /** The name the user search found the DN by (`ldap:username`, `aws:username`). */
  username: string;
  /** The DNs of the user's groups at creation. */
  groups: string[];
}

export interface AccessKeyRecord {
  secret: Secret;
  /** The owning user's name (an LDAP user's DN when `ldap` is set); null for an access key of the root credential. */
  parent: string | null;
  /**
   * Set for an access key of an LDAP user: its rights are the policies mapped
   * (`ldapPolicies`, at request time) to this DN and these groups.
   */
  ldap?: LdapKeyOwner;
  status: Status;
  /** Why the node disabled it (an LDAP user no longer found); cleared when its status is set again. */
  disabledReason?: string;
  /** Inline policy narrowing the parent's rights (JSON text), if any. */
  policy?: string;
  name?: string;
  description?: string;
  /** Unix ms; absent = never expires. */
  expiresAt?: number;
  createdAt: number;
  updatedAt: number;
}

export interface OpenIdConfig {
  /** Issuer URL (`iss`); its `/.well-known/openid-configuration` names the JWKS. */
  issuer: string;
  /** Accepted `aud` values (the client ids). */
  clientIds: string[];
  /** Claim holding policy names (a list, or a comma-separated string). */
  claimName: string;
  /** Policies every session of this provider gets beside the claim's. */
  rolePolicy?: string;
  /** Condition keys `jwt:<name>` the session carries from the token's claims. */
  claimPrefix?: string;
  /** The client's secret at the provider (`client_secret`), sealed; never shown. */
  clientSecret?: Secret;
  /** Scopes the console's sign-in asks for (default `openid`). */
  scopes?: string[];
  /** The console's callback URL registered at the provider (default: from the request's host). */
  redirectUri?: string;
  /** The provider's name on the console's sign-in button. */
  displayName?: string;
  /** Turned off (`enable=off`): kept, but its tokens are refused and the console offers no SSO. */
  disabled?: boolean;
}

export interface LdapConfig {
  /** `ldaps://host:port`, `ldap://host:port` or MinIO's `host:port` (TLS unless `startTls`/`serverInsecure`); `iam/idp-config.ts` reads it. */
  serverAddr: string;
  /** Lookup bind (a service account) used to find the user's DN and groups. */
  lookupBindDn: string;
  lookupBindPassword: Secret;
  /** Base DN and filter (`%s` = the user name given) to find users. */
  userDnSearchBaseDn: string;
  userDnSearchFilter: string;
  /** Base DN and filter (`%d` = the user's DN, `%s` = the user name) to find the user's groups. */
  groupSearchBaseDn?: string;
  groupSearchFilter?: string;
  /** Upgrade a plain connection with StartTLS before any bind (`server_starttls=on`). */
  startTls?: boolean;
  /** A `host:port` address is plain LDAP, not LDAPS (`server_insecure=on`). */
  serverInsecure?: boolean;
  /** Do not verify the server's certificate (`tls_skip_verify=on`): the explicit opt-out. */
  tlsSkipVerify?: boolean;
  /** Turned off (`enable=off`): kept, but LDAP sign-ins are refused. */
  disabled?: boolean;
}

export interface IamDoc {
  version: number;
  /** Increases with every change; peers compare it to know they are current. */
  generation: number;
  updatedAt: number;
  /** 32-byte key that seals session tokens (base64 inside the secret). */
  stsKey: Secret;
  users: Record<string, UserRecord>;
  groups: Record<string, GroupRecord>;
  policies: Record<string, PolicyRecord>;
  accessKeys: Record<string, AccessKeyRecord>;
  /** Policies mapped to LDAP distinguished names (users and groups, lower-cased). */
  ldapPolicies: Record<string, string[]>;
  /** Whether each mapped DN was attached as a user or a group (`policy entities` lists them apart). */
  ldapKinds?: Record<string, 'user' | 'group'>;
  idp: { openid?: OpenIdConfig; ldap?: LdapConfig };
}

/**
 * Whether a mapped DN is a user or a group: as attached, or, for a mapping
 * an earlier release stored without its kind, where it lies: below the
 * configured group search base and not below the user search base is a
 * group; anything else (both bases the same, no LDAP configured) a user.
 */
export function ldapKindOf(d: IamDoc, dn: string): 'user' | 'group' {
  const recorded = d.ldapKinds?.[dn];
  if (recorded !== undefined) return recorded;
  const below = (base: string | undefined) => base !== undefined && base !== '' && (dn === base.toLowerCase() || dn.endsWith(`,${base.toLowerCase()}`));
  const cfg = d.idp.ldap;
  return below(cfg?.groupSearchBaseDn) && !below(cfg?.userDnSearchBaseDn) ? 'group' : 'user';
}

export function emptyDoc(stsKey: Secret, now: number): IamDoc {
  return { version: IAM_DOC_VERSION, generation: 0, updatedAt: now, stsKey, users: {}, groups: {}, policies: {}, accessKeys: {}, ldapPolicies: {}, idp: {} };
}

export function encodeDoc(d: IamDoc): Uint8Array {
  const buf = Buffer.from(JSON.stringify(d));
  if (buf.length > MAX_IAM_DOC_BYTES) throw new SvcError('XSvcIamLimitExceeded', `the identity store would exceed ${MAX_IAM_DOC_BYTES} bytes`);
  return buf;
}

export function decodeDoc(raw: Uint8Array, path: string): IamDoc {
  let d: Partial<IamDoc>;
  try {
    d = JSON.parse(Buffer.from(raw).toString('utf8')) as Partial<IamDoc>;
  } catch (cause) {
    throw new SvcError('FileCorrupt', `IAM record ${path} is not valid JSON`, { path }, { cause });
  }
  if (d.version !== IAM_DOC_VERSION) {
    throw new SvcError('FileCorrupt', `IAM record ${path} has version ${JSON.stringify(d.version)}; this build reads version ${IAM_DOC_VERSION}`, { path });
  }
  if (typeof d.generation !== 'number' || d.stsKey === undefined) throw new SvcError('FileCorrupt', `IAM record ${path} lacks its generation or session key`, { path });
  return {
    version: d.version,
    generation: d.generation,
    updatedAt: d.updatedAt ?? 0,
    stsKey: d.stsKey,
    users: d.users ?? {},
    groups: d.groups ?? {},
    policies: d.policies ?? {},
    accessKeys: checkAccessKeys(d.accessKeys ?? {}, path),
    ldapPolicies: d.ldapPolicies ?? {},
    ...(d.ldapKinds ? { ldapKinds: d.ldapKinds } : {}),
    idp: d.idp ?? {},
  };
}

/** Access keys as stored; an LDAP owner must be whole (its DN the key's parent), or the record is refused as corrupt. */
function checkAccessKeys(keys: Record<string, AccessKeyRecord>, path: string): Record<string, AccessKeyRecord> {
  const isStrings = (v: unknown) => Array.isArray(v) && v.every((x) => typeof x === 'string');
  for (const [ak, k] of Object.entries(keys)) {
    if (k.disabledReason !== undefined && typeof k.disabledReason !== 'string') throw new SvcError('FileCorrupt', `IAM record ${path}: the access key ${ak} has a malformed disabledReason`, { path });
    if (k.ldap === undefined) continue;
    const o = k.ldap as Partial<LdapKeyOwner> | null;
    if (o === null || typeof o.dn !== 'string' || typeof o.username !== 'string' || !isStrings(o.groups) || k.parent !== o.dn) {
      throw new SvcError('FileCorrupt', `IAM record ${path}: the access key ${ak} has a malformed LDAP owner`, { path });
    }
  }
  return keys;
}

// ---- validation

const NAME_RE = /^[A-Za-z0-9+=,.@_-]{3,128}$/;
const GROUP_RE = /^[A-Za-z0-9+=,.@_ -]{1,128}$/;
const POLICY_NAME_RE = /^[A-Za-z0-9+=,.@_-]{1,128}$/;

export function checkAccessKey(ak: string): void {
  if (!NAME_RE.test(ak)) throw new SvcError('XSvcAdminInvalidAccessKey');
}

export function checkSecretKey(sk: string): void {
  if (sk.length < 8 || sk.length > 40) throw new SvcError('XSvcAdminInvalidSecretKey');
}

export function checkGroupName(g: string): void {
  if (!GROUP_RE.test(g)) throw new SvcError('InvalidArgument', 'group names are 1 to 128 characters of letters, digits, spaces and +=,.@_-');
}

export function checkPolicyName(p: string): void {
  if (!POLICY_NAME_RE.test(p)) throw new SvcError('InvalidArgument', `invalid policy name "${p}": 1 to 128 characters of letters, digits and +=,.@_-`);
}

export function checkStatus(s: string): Status {
  if (s !== 'enabled' && s !== 'disabled') throw new SvcError('InvalidArgument', `status must be "enabled" or "disabled", not "${s}"`);
  return s;
}

/** Every named policy exists (canned or custom). */
function checkPoliciesExist(d: IamDoc, names: readonly string[]): void {
  for (const n of names) if (!isCannedPolicy(n) && d.policies[n] === undefined) throw new SvcError('XSvcAdminNoSuchPolicy', `the policy "${n}" does not exist`);
}

function user(d: IamDoc, name: string): UserRecord {
  const u = d.users[name];
  if (u === undefined) throw new SvcError('XSvcAdminNoSuchUser', `the user "${name}" does not exist`);
  return u;
}

function group(d: IamDoc, name: string): GroupRecord {
  const g = d.groups[name];
  if (g === undefined) throw new SvcError('XSvcAdminNoSuchGroup', `the group "${name}" does not exist`);
  return g;
}

/** An access key name in use by the root, a user or an access key. */
function keyInUse(d: IamDoc, ak: string, rootAccessKey: string): boolean {
  return ak === rootAccessKey || d.users[ak] !== undefined || d.accessKeys[ak] !== undefined;
}

const uniq = (xs: readonly string[]) => [...new Set(xs)];

/** Policy names from a comma-separated list (`mc` sends them so). */
export function policyList(s: string): string[] {
  const out = uniq(s.split(',').map((x) => x.trim()).filter((x) => x !== ''));
  for (const p of out) checkPolicyName(p);
  return out;
}

// ---- mutations: each changes `d` in place (the caller works on a fresh copy) and returns what the API answers

export interface Ctx {
  now: number;
  rootAccessKey: string;
}

export function setUser(d: IamDoc, c: Ctx, name: string, secret: Secret, status: Status, policies?: string[]): void {
  checkAccessKey(name);
  if (name === c.rootAccessKey || d.accessKeys[name] !== undefined) throw new SvcError('XSvcAdminAccessKeyExists', `"${name}" is already in use by ${name === c.rootAccessKey ? 'the root credential' : 'an access key'}`);
  if (policies) checkPoliciesExist(d, policies);
  const cur = d.users[name];
  d.users[name] = { secret, status, policies: policies ?? cur?.policies ?? [], createdAt: cur?.createdAt ?? c.now, updatedAt: c.now };
}

export function removeUser(d: IamDoc, name: string): void {
  user(d, name);
  delete d.users[name];
  for (const g of Object.values(d.groups)) g.members = g.members.filter((m) => m !== name);
  // its access keys go with it
  for (const [ak, k] of Object.entries(d.accessKeys)) if (k.parent === name && k.ldap === undefined) delete d.accessKeys[ak];
}

export function setUserStatus(d: IamDoc, c: Ctx, name: string, status: Status): void {
  const u = user(d, name);
  u.status = status;
  u.updatedAt = c.now;
}

export function updateGroupMembers(d: IamDoc, c: Ctx, name: string, members: string[], remove: boolean, status?: Status): void {
  checkGroupName(name);
  for (const m of members) user(d, m);
  let g = d.groups[name];
  if (remove) {
    g = group(d, name);
    if (members.length === 0) {
      if (g.members.length > 0) throw new SvcError('XSvcAdminGroupNotEmpty');
      delete d.groups[name];
      return;
    }
    g.members = g.members.filter((m) => !members.includes(m));
  } else {
    g ??= { status: 'enabled', members: [], policies: [], updatedAt: c.now };
    g.members = uniq([...g.members, ...members]);
    d.groups[name] = g;
  }
  if (status) g.status = status;
  g.updatedAt = c.now;
}

export function setGroupStatus(d: IamDoc, c: Ctx, name: string, status: Status): void {
  const g = group(d, name);
  g.status = status;
  g.updatedAt = c.now;
}

export function putPolicy(d: IamDoc, c: Ctx, name: string, text: string): void {
  checkPolicyName(name);
  if (isCannedPolicy(name)) throw new SvcError('XSvcAdminCannedPolicy');
  parseIdentityPolicy(text);
  const cur = d.policies[name];
  d.policies[name] = { text, createdAt: cur?.createdAt ?? c.now, updatedAt: c.now };
}

export function removePolicy(d: IamDoc, name: string): void {
  if (isCannedPolicy(name)) throw new SvcError('XSvcAdminCannedPolicy');
  if (d.policies[name] === undefined) throw new SvcError('XSvcAdminNoSuchPolicy', `the policy "${name}" does not exist`);
  const users = Object.entries(d.users).filter(([, u]) => u.policies.includes(name)).map(([n]) => n);
  const groups = Object.entries(d.groups).filter(([, g]) => g.policies.includes(name)).map(([n]) => n);
  const dns = Object.entries(d.ldapPolicies).filter(([, p]) => p.includes(name)).map(([dn]) => dn);
  if (users.length > 0 || groups.length > 0 || dns.length > 0) {
    const where = [...users.map((u) => `user ${u}`), ...groups.map((g) => `group ${g}`), ...dns.map((dn) => `LDAP ${ldapKindOf(d, dn)} ${dn}`)];
    throw new SvcError('XSvcAdminPolicyInUse', `the policy "${name}" is attached to ${where.join(', ')}; detach it first`);
  }
  delete d.policies[name];
}

export type Target = { user: string } | { group: string };

function targetRecord(d: IamDoc, t: Target): { policies: string[]; updatedAt: number } {
  return 'user' in t ? user(d, t.user) : group(d, t.group);
}

/** Replaces the target's policies (`set-user-or-group-policy`). */
export function setPolicies(d: IamDoc, c: Ctx, t: Target, policies: string[]): void {
  checkPoliciesExist(d, policies);
  const r = targetRecord(d, t);
  r.policies = uniq(policies);
  r.updatedAt = c.now;
}

/** Attaches (or detaches) policies; returns the ones that changed. Attaching one already attached is refused as mc expects nothing changed. */
export function attachPolicies(d: IamDoc, c: Ctx, t: Target, policies: string[], detach: boolean): string[] {
  if (policies.length === 0) throw new SvcError('InvalidArgument', 'name at least one policy');
  if (!detach) checkPoliciesExist(d, policies);
  const r = targetRecord(d, t);
  const changed = detach ? policies.filter((p) => r.policies.includes(p)) : policies.filter((p) => !r.policies.includes(p));
  if (changed.length === 0) {
    throw new SvcError('InvalidArgument', detach ? `none of ${policies.join(', ')} is attached` : `${policies.join(', ')} ${policies.length > 1 ? 'are' : 'is'} already attached`);
  }
  r.policies = detach ? r.policies.filter((p) => !policies.includes(p)) : uniq([...r.policies, ...policies]);
  r.updatedAt = c.now;
  return changed;
}

export interface NewAccessKey {
  accessKey: string;
  secret: Secret;
  parent: string | null;
  /** An LDAP user's key: `parent` must be its DN; the user is not one of the store's. */
  ldap?: LdapKeyOwner;
  policy?: string;
  name?: string;
  description?: string;
  expiresAt?: number;
}

export function addAccessKey(d: IamDoc, c: Ctx, k: NewAccessKey): void {
  checkAccessKey(k.accessKey);
  if (keyInUse(d, k.accessKey, c.rootAccessKey)) throw new SvcError('XSvcAdminAccessKeyExists');
  if (k.ldap !== undefined) {
    if (k.parent !== k.ldap.dn) throw new SvcError('InvalidArgument', "an LDAP user's access key has the user's DN as its parent");
    if (ldapPolicyNames(d.ldapPolicies, k.ldap.dn, k.ldap.groups).length === 0) throw new SvcError('XSvcAdminLdapUserNoPolicy', `no policy is attached to the LDAP user ${k.ldap.dn} or its groups: attach one first (svc admin idp ldap policy attach)`);
  } else if (k.parent !== null) user(d, k.parent);
  if (k.policy !== undefined) parseIdentityPolicy(k.policy);
  if (k.expiresAt !== undefined && k.expiresAt <= c.now) throw new SvcError('InvalidArgument', 'the expiry must be in the future');
  if (k.name !== undefined && k.name.length > 32) throw new SvcError('InvalidArgument', 'an access key name is at most 32 characters');
  if (k.description !== undefined && k.description.length > 256) throw new SvcError('InvalidArgument', 'a description is at most 256 characters');
  d.accessKeys[k.accessKey] = {
    secret: k.secret,
    parent: k.parent,
    ...(k.ldap !== undefined ? { ldap: { dn: k.ldap.dn, username: k.ldap.username, groups: [...k.ldap.groups] } } : {}),
    status: 'enabled',
    ...(k.policy !== undefined ? { policy: k.policy } : {}),
    ...(k.name !== undefined ? { name: k.name } : {}),
    ...(k.description !== undefined ? { description: k.description } : {}),
    ...(k.expiresAt !== undefined ? { expiresAt: k.expiresAt } : {}),
    createdAt: c.now,
    updatedAt: c.now,
  };
}

export function accessKey(d: IamDoc, ak: string): AccessKeyRecord {
  const k = d.accessKeys[ak];
  if (k === undefined) throw new SvcError('XSvcAdminNoSuchAccessKey', `the access key "${ak}" does not exist`);
  return k;
}

export interface AccessKeyUpdate {
  secret?: Secret;
  status?: Status;
  /** JSON text; '' removes the inline policy. */
  policy?: string;
  name?: string;
  description?: string;
  /** Unix ms; 0 removes the expiry. */
  expiresAt?: number;
}

export function updateAccessKey(d: IamDoc, c: Ctx, ak: string, u: AccessKeyUpdate): void {
  const k = accessKey(d, ak);
  if (u.policy !== undefined && u.policy !== '') parseIdentityPolicy(u.policy);
  if (u.expiresAt !== undefined && u.expiresAt !== 0 && u.expiresAt <= c.now) throw new SvcError('InvalidArgument', 'the expiry must be in the future');
  if (u.secret) k.secret = u.secret;
  if (u.status) {
    k.status = u.status;
    delete k.disabledReason;
  }
  if (u.policy !== undefined) {
    if (u.policy === '') delete k.policy;
    else k.policy = u.policy;
  }
  if (u.name !== undefined) k.name = u.name;
  if (u.description !== undefined) k.description = u.description;
  if (u.expiresAt !== undefined) {
    if (u.expiresAt === 0) delete k.expiresAt;
    else k.expiresAt = u.expiresAt;
  }
  k.updatedAt = c.now;
}

export function removeAccessKey(d: IamDoc, ak: string): void {
  accessKey(d, ak);
  delete d.accessKeys[ak];
}

/** Attaches policies to an LDAP DN (user or group), or detaches them. */
export function mapLdapPolicies(d: IamDoc, dn: string, policies: string[], detach: boolean, kind?: 'user' | 'group'): string[] {
  const key = dn.toLowerCase();
  if (!detach) checkPoliciesExist(d, policies);
  const cur = d.ldapPolicies[key] ?? [];
  const changed = detach ? policies.filter((p) => cur.includes(p)) : policies.filter((p) => !cur.includes(p));
  if (changed.length === 0) throw new SvcError('InvalidArgument', detach ? `none of ${policies.join(', ')} is attached to ${dn}` : `${policies.join(', ')} already attached to ${dn}`);
  const next = detach ? cur.filter((p) => !policies.includes(p)) : uniq([...cur, ...policies]);
  if (next.length === 0) {
    delete d.ldapPolicies[key];
    if (d.ldapKinds) delete d.ldapKinds[key];
  } else {
    d.ldapPolicies[key] = next;
    if (kind) d.ldapKinds = { ...d.ldapKinds, [key]: kind };
  }
  return changed;
}

// ---- reading

/** The groups a user belongs to. */
export function groupsOf(d: IamDoc, name: string): string[] {
  return Object.entries(d.groups)
    .filter(([, g]) => g.members.includes(name))
    .map(([n]) => n)
    .sort();
}

/** The policy names in force for a user: its own and its enabled groups'. */
export function effectivePolicyNames(d: IamDoc, name: string): string[] {
  const u = d.users[name];
  if (u === undefined) return [];
  const out = [...u.policies];
  for (const g of Object.values(d.groups)) if (g.status === 'enabled' && g.members.includes(name)) out.push(...g.policies);
  return uniq(out);
}

/** The policy names `mappings` (the store's `ldapPolicies`) give an LDAP user's DN and its groups' DNs: the one rule for sign-in and access keys. */
export function ldapPolicyNames(mappings: Readonly<Record<string, readonly string[]>>, dn: string, groups: readonly string[]): string[] {
  return uniq([dn, ...groups].flatMap((x) => mappings[x.toLowerCase()] ?? []));
}

/** What a re-check of an LDAP key's user found: the user with its groups now, or no user (and why). */
export type LdapOwnerCheck = { readonly groups: readonly string[] } | { readonly gone: string };

/**
 * Applies re-checks (by lower-cased DN) to the LDAP users' access keys: a
 * user gone disables its enabled keys, never removes them, keeping the
 * reason; a user found has its keys' groups replaced by the ones found.
 * Returns the keys disabled and the keys whose groups changed.
 */
export function applyLdapOwnerChecks(d: IamDoc, c: Ctx, checks: ReadonlyMap<string, LdapOwnerCheck>): { disabled: string[]; regrouped: string[] } {
  const out = { disabled: [] as string[], regrouped: [] as string[] };
  for (const [ak, k] of Object.entries(d.accessKeys)) {
    const r = k.ldap === undefined ? undefined : checks.get(k.ldap.dn.toLowerCase());
    if (r === undefined) continue;
    if ('gone' in r) {
      if (k.status !== 'enabled') continue;
      k.status = 'disabled';
      k.disabledReason = r.gone;
    } else {
      const now = [...r.groups].sort();
      if (JSON.stringify(now) === JSON.stringify([...k.ldap!.groups].sort())) continue;
      k.ldap!.groups = now;
    }
    k.updatedAt = c.now;
    ('gone' in r ? out.disabled : out.regrouped).push(ak);
  }
  return out;
}
