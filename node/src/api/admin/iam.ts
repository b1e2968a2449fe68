/**
 * The identity routes of the admin API, at the paths and with the bodies
 * `mc admin user|group|policy|accesskey` (madmin-go) sends: under
 * `/svc/admin/v3/`, `/compat/admin/v3/` and MinIO's own prefix
 * `/minio/admin/v3/`. Bodies that carry secrets are encrypted with the
 * caller's secret key both ways (`iam/madmin-crypto.ts`), as madmin does.
 *
 * Each route names the admin action it needs (MinIO's names); the decision
 * is the one of every request (`iam/decide.ts`). A user may manage its own
 * access keys and read its own user info without any admin permission.
 */
import { randomBytes } from 'node:crypto';
import { CANNED_POLICY_NAMES, cannedPolicy } from '../../iam/canned.ts';
import { decryptData, encryptData } from '../../iam/madmin-crypto.ts';
import { parseIdentityPolicy } from '../../iam/policy.ts';
import type { SignedPrincipal } from '../../iam/principal.ts';
import {
  accessKey as accessKeyRecord,
  addAccessKey,
  attachPolicies,
  checkAccessKey,
  checkSecretKey,
  checkStatus,
  type Ctx,
  effectivePolicyNames,
  groupsOf,
  type IamDoc,
  type LdapConfig,
  ldapKindOf,
  ldapPolicyNames,
  type NewAccessKey,
  type OpenIdConfig,
  policyList,
  putPolicy,
  removeAccessKey,
  removePolicy,
  removeUser,
  type Secret,
  setGroupStatus,
  setPolicies,
  setUser,
  setUserStatus,
  type Target,
  updateAccessKey,
  updateGroupMembers,
  mapLdapPolicies,
} from '../../iam/state.ts';
import { changesReach, configInfo, type IdpKind, ldapConfigFrom, openIdConfigFrom } from '../../iam/idp-config.ts';
import { type LdapUser, parseConfigText } from '../sts/providers.ts';
import { SvcError } from '../../util/errors.ts';

/** What the routes need of the identity store (`server/iam-service.ts`). */
export interface IamAdminStore {
  doc(): IamDoc;
  seal(plain: string): Secret;
  open(s: Secret): string;
  mutate<R>(op: string, actor: { accessKey: string; requestId?: string; clientAddress?: string }, target: Record<string, unknown>, fn: (d: IamDoc, c: Ctx) => R): Promise<R>;
}

export interface IamCall {
  readonly method: string;
  readonly query: ReadonlyMap<string, string>;
  readonly body: Buffer;
  readonly principal: SignedPrincipal;
  /** The caller's secret key: the key of encrypted bodies. */
  readonly secretKey: string;
  readonly requestId: string;
  readonly clientAddress: string;
}

export interface IamAdminDeps {
  readonly store: IamAdminStore;
  /** The one decision: may this principal perform this admin action? */
  readonly allowed: (p: SignedPrincipal, action: string, clientAddress?: string) => boolean;
  /** The same decision for an S3 action on a resource (`arn:aws:s3:::bucket[/*]`; '' for deployment-wide). */
  readonly allowedOn?: (p: SignedPrincipal, action: string, resource: string, bucketOwner?: string) => boolean;
  /** The canonical id of a bucket's owner (undefined when unknown). */
  readonly bucketOwner?: (bucket: string) => Promise<string | undefined>;
  readonly now: () => number;
  /** Refuses an OpenID provider this node cannot use (`checkOpenIdProvider`); default: not checked. */
  readonly checkOpenIdProvider?: (configUrl: string) => Promise<void>;
  /** Refuses an LDAP server this node cannot use (`checkLdapServer`: reached, trusted, the lookup bind accepted, the search bases there, the user filter taken); default: not checked. */
  readonly checkLdapServer?: (cfg: LdapConfig, bindPassword: string) => Promise<void>;
  /** Finds an LDAP user by name or DN with the lookup bind (`lookupLdapUser`: its DN and groups); without it, LDAP users' access keys cannot be created. */
  readonly lookupLdapUser?: (cfg: LdapConfig, bindPassword: string, user: string) => Promise<LdapUser>;
}

export interface IamReply {
  readonly status: number;
  readonly contentType?: string;
  readonly headers?: Record<string, string>;
  readonly body: Buffer;
}

type Handler = (c: IamCall, d: IamAdminDeps) => Promise<IamReply>;

export interface IamRoute {
  readonly op: string;
  readonly method: 'GET' | 'PUT' | 'POST' | 'DELETE';
  readonly path: string;
  readonly summary: string;
  readonly handler: Handler;
}

// ---- helpers

const ZERO_TIME = '0001-01-01T00:00:00Z';
const iso = (ms: number | undefined) => (ms === undefined || ms === 0 ? ZERO_TIME : new Date(ms).toISOString());

function json(v: unknown, status = 200): IamReply {
  return { status, contentType: 'application/json', body: Buffer.from(JSON.stringify(v)) };
}

const EMPTY: IamReply = { status: 200, body: Buffer.alloc(0) };
/** A configuration change in force at once (madmin reads the header as "no restart needed"). */
const APPLIED: IamReply = { status: 200, headers: { 'x-minio-config-applied': 'true' }, body: Buffer.alloc(0) };

async function encrypted(c: IamCall, v: unknown): Promise<IamReply> {
  return { status: 200, contentType: 'application/octet-stream', body: await encryptData(c.secretKey, Buffer.from(JSON.stringify(v))) };
}

function q(c: IamCall, name: string, required = true): string {
  const v = c.query.get(name);
  if (v === undefined || v === '') {
    if (required) throw new SvcError('InvalidArgument', `the ${name} parameter is required`);
    return '';
  }
  return v;
}

function parseJson<T>(buf: Buffer, what: string): T {
  try {
    return JSON.parse(buf.toString('utf8')) as T;
  } catch {
    throw new SvcError('XSvcAdminConfigBadJson', `the ${what} is not valid JSON`);
  }
}

async function decryptedJson<T>(c: IamCall, what: string): Promise<T> {
  return parseJson<T>(await decryptData(c.secretKey, c.body), what);
}

function need(c: IamCall, d: IamAdminDeps, action: string): void {
  if (!d.allowed(c.principal, action, c.clientAddress)) throw new SvcError('AccessDenied', `access denied: the credential lacks the ${action} permission`);
}

/** The user the caller acts as (its own name; access keys and sessions act as their parent). */
const selfUser = (p: SignedPrincipal) => (p.root ? undefined : (p.userName ?? p.canonicalId));

/** An identity of an external provider (an LDAP or OpenID session, an LDAP user's access key): its canonical id names the provider. */
const external = (p: SignedPrincipal) => /^(ldap|oidc):/.test(p.canonicalId);

/** The svc user the caller acts as: none for the root and for external identities (an LDAP "lena" is not the svc user "lena"). */
const builtinSelf = (p: SignedPrincipal) => (external(p) ? undefined : selfUser(p));

/** The LDAP user (DN and name) the caller acts as: an LDAP session's or an LDAP user's access key's. */
function ldapSelf(p: SignedPrincipal): { dn: string; username: string } | undefined {
  const dn = p.claims?.['ldap:user']?.[0];
  const username = p.claims?.['ldap:username']?.[0];
  return p.canonicalId.startsWith('ldap:') && dn !== undefined && username !== undefined ? { dn, username } : undefined;
}

/** Whether `name` (a user name or a DN) is the LDAP user `self`. */
const sameLdapUser = (self: { dn: string; username: string }, name: string) => name === self.username || name.toLowerCase() === self.dn.toLowerCase();

const actor = (c: IamCall) => ({ accessKey: c.principal.accessKey, requestId: c.requestId, clientAddress: c.clientAddress });

function userInfo(doc: IamDoc, name: string) {
  const u = doc.users[name]!;
  return { policyName: u.policies.join(','), status: u.status, memberOf: groupsOf(doc, name), updatedAt: iso(u.updatedAt) };
}

/** Random access and secret keys shaped like MinIO's (20 and 40 characters). */
export function generateKeys(): { accessKey: string; secretKey: string } {
  const A = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
  const ak = [...randomBytes(20)].map((b) => A[b % A.length]).join('');
  const sk = randomBytes(30).toString('base64').replace(/[+/]/g, (ch) => (ch === '+' ? 'x' : 'y'));
  return { accessKey: ak, secretKey: sk };
}

function expiryOf(v: unknown, now: number): number | undefined {
  if (v === undefined || v === null || v === '' || v === ZERO_TIME) return undefined;
  const t = typeof v === 'string' ? Date.parse(v) : Number.NaN;
  if (!Number.isFinite(t)) throw new SvcError('InvalidArgument', `the expiration "${String(v)}" is not an RFC 3339 time`);
  if (t <= now) throw new SvcError('InvalidArgument', 'the expiration must be in the future');
  return t;
}

function policyText(v: unknown): string | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  const text = typeof v === 'string' ? v : JSON.stringify(v);
  parseIdentityPolicy(text);
  return text;
}

function accessKeyView(doc: IamDoc, ak: string) {
  const k = doc.accessKeys[ak]!;
  return {
    parentUser: k.parent ?? '',
    accountStatus: k.status === 'enabled' ? 'on' : 'off',
    impliedPolicy: k.policy === undefined,
    accessKey: ak,
    name: k.name ?? '',
    description: k.description ?? '',
    expiration: k.expiresAt === undefined ? null : iso(k.expiresAt),
  };
}

/**
 * Whether the caller may manage its own access keys without an admin
 * permission: not through an access key (an access key cannot make further
 * keys), and not from a session narrowed by a session policy (a key made there
 * would carry the user's whole rights, more than the session has).
 */
const selfServe = (c: IamCall) => c.principal.credential !== 'accesskey' && (c.principal.restrictions ?? []).length === 0;

/**
 * Access-key routes: admins, or a user for its own keys (an svc user's by
 * name, an LDAP user's by DN) when `selfServe`.
 */
function ownsOrMay(c: IamCall, d: IamAdminDeps, parent: string | null, action: string, ldapKey = false): void {
  if (selfServe(c) && parent !== null) {
    const ldap = ldapSelf(c.principal);
    if (ldapKey ? ldap !== undefined && parent.toLowerCase() === ldap.dn.toLowerCase() : builtinSelf(c.principal) === parent) return;
  }
  need(c, d, action);
}

// ---- handlers

const addUser: Handler = async (c, d) => {
  need(c, d, 'admin:CreateUser');
  const name = q(c, 'accessKey');
  checkAccessKey(name);
  const body = await decryptedJson<{ secretKey?: unknown; status?: unknown; policy?: unknown }>(c, 'user');
  if (typeof body.secretKey !== 'string') throw new SvcError('XSvcAdminInvalidSecretKey');
  checkSecretKey(body.secretKey);
  const status = checkStatus(typeof body.status === 'string' && body.status !== '' ? body.status : 'enabled');
  const policies = typeof body.policy === 'string' && body.policy !== '' ? policyList(body.policy) : undefined;
  const secret = d.store.seal(body.secretKey);
  await d.store.mutate('user.add', actor(c), { user: name, status }, (doc, ctx) => setUser(doc, ctx, name, secret, status, policies));
  return EMPTY;
};

const removeUserH: Handler = async (c, d) => {
  need(c, d, 'admin:DeleteUser');
  const name = q(c, 'accessKey');
  await d.store.mutate('user.remove', actor(c), { user: name }, (doc) => removeUser(doc, name));
  return EMPTY;
};

const listUsers: Handler = async (c, d) => {
  need(c, d, 'admin:ListUsers');
  const doc = d.store.doc();
  const out: Record<string, unknown> = {};
  for (const name of Object.keys(doc.users).sort()) out[name] = userInfo(doc, name);
  return encrypted(c, out);
};

const userInfoH: Handler = async (c, d) => {
  const name = q(c, 'accessKey');
  if (builtinSelf(c.principal) !== name) need(c, d, 'admin:GetUser');
  const doc = d.store.doc();
  if (doc.users[name] === undefined) throw new SvcError('XSvcAdminNoSuchUser', `the user "${name}" does not exist`);
  return json(userInfo(doc, name));
};

const setUserStatusH: Handler = async (c, d) => {
  const name = q(c, 'accessKey');
  const status = checkStatus(q(c, 'status'));
  need(c, d, status === 'enabled' ? 'admin:EnableUser' : 'admin:DisableUser');
  await d.store.mutate('user.status', actor(c), { user: name, status }, (doc, ctx) => setUserStatus(doc, ctx, name, status));
  return EMPTY;
};

const updateGroupMembersH: Handler = async (c, d) => {
  const body = parseJson<{ group?: unknown; members?: unknown; isRemove?: unknown; groupStatus?: unknown }>(c.body, 'group update');
  if (typeof body.group !== 'string' || body.group === '') throw new SvcError('InvalidArgument', 'name the group');
  const members = Array.isArray(body.members) ? body.members.filter((m): m is string => typeof m === 'string') : [];
  const remove = body.isRemove === true;
  need(c, d, remove ? 'admin:RemoveUserFromGroup' : 'admin:AddUserToGroup');
  const status = typeof body.groupStatus === 'string' && body.groupStatus !== '' ? checkStatus(body.groupStatus) : undefined;
  const group = body.group;
  await d.store.mutate(remove ? 'group.remove' : 'group.add', actor(c), { group, members }, (doc, ctx) => updateGroupMembers(doc, ctx, group, members, remove, status));
  return EMPTY;
};

const groupInfo: Handler = async (c, d) => {
  need(c, d, 'admin:GetGroup');
  const name = q(c, 'group');
  const g = d.store.doc().groups[name];
  if (g === undefined) throw new SvcError('XSvcAdminNoSuchGroup', `the group "${name}" does not exist`);
  return json({ name, status: g.status, members: g.members, policy: g.policies.join(','), updatedAt: iso(g.updatedAt) });
};

const listGroups: Handler = async (c, d) => {
  need(c, d, 'admin:ListGroups');
  return json(Object.keys(d.store.doc().groups).sort());
};

const setGroupStatusH: Handler = async (c, d) => {
  const name = q(c, 'group');
  const status = checkStatus(q(c, 'status'));
  need(c, d, status === 'enabled' ? 'admin:EnableGroup' : 'admin:DisableGroup');
  await d.store.mutate('group.status', actor(c), { group: name, status }, (doc, ctx) => setGroupStatus(doc, ctx, name, status));
  return EMPTY;
};

const addPolicy: Handler = async (c, d) => {
  need(c, d, 'admin:CreatePolicy');
  const name = q(c, 'name');
  const text = c.body.toString('utf8');
  await d.store.mutate('policy.create', actor(c), { policy: name }, (doc, ctx) => putPolicy(doc, ctx, name, text));
  return EMPTY;
};

const removePolicyH: Handler = async (c, d) => {
  need(c, d, 'admin:DeletePolicy');
  const name = q(c, 'name');
  await d.store.mutate('policy.remove', actor(c), { policy: name }, (doc) => removePolicy(doc, name));
  return EMPTY;
};

function policyEntry(doc: IamDoc, name: string): { text: string; createdAt: number; updatedAt: number } | undefined {
  const canned = cannedPolicy(name);
  if (canned) return { text: canned.text, createdAt: 0, updatedAt: 0 };
  const p = doc.policies[name];
  return p && { text: p.text, createdAt: p.createdAt, updatedAt: p.updatedAt };
}

const listPolicies: Handler = async (c, d) => {
  need(c, d, 'admin:ListUserPolicies');
  const doc = d.store.doc();
  const out: Record<string, unknown> = {};
  for (const name of [...CANNED_POLICY_NAMES, ...Object.keys(doc.policies).sort()]) out[name] = JSON.parse(policyEntry(doc, name)!.text);
  return json(out);
};

const policyInfo: Handler = async (c, d) => {
  need(c, d, 'admin:GetPolicy');
  const name = q(c, 'name');
  const p = policyEntry(d.store.doc(), name);
  if (p === undefined) throw new SvcError('XSvcAdminNoSuchPolicy', `the policy "${name}" does not exist`);
  if (c.query.get('v') === '2') return json({ PolicyName: name, Policy: JSON.parse(p.text), CreateDate: iso(p.createdAt), UpdateDate: iso(p.updatedAt) });
  return { status: 200, contentType: 'application/json', body: Buffer.from(p.text) };
};

function target(user: unknown, group: unknown): Target {
  const u = typeof user === 'string' ? user : '';
  const g = typeof group === 'string' ? group : '';
  if ((u === '') === (g === '')) throw new SvcError('InvalidArgument', 'name either a user or a group');
  return u !== '' ? { user: u } : { group: g };
}

const setPolicy: Handler = async (c, d) => {
  need(c, d, 'admin:AttachUserOrGroupPolicy');
  const name = q(c, 'userOrGroup');
  const policies = policyList(c.query.get('policyName') ?? '');
  const t: Target = c.query.get('isGroup') === 'true' ? { group: name } : { user: name };
  await d.store.mutate('policy.set', actor(c), { ...t, policies }, (doc, ctx) => setPolicies(doc, ctx, t, policies));
  return EMPTY;
};

function attach(detach: boolean): Handler {
  return async (c, d) => {
    need(c, d, 'admin:AttachUserOrGroupPolicy');
    const body = await decryptedJson<{ policies?: unknown; user?: unknown; group?: unknown }>(c, 'policy association');
    const policies = Array.isArray(body.policies) ? policyList(body.policies.filter((p): p is string => typeof p === 'string').join(',')) : [];
    const t = target(body.user, body.group);
    const changed = await d.store.mutate(detach ? 'policy.detach' : 'policy.attach', actor(c), { ...t, policies }, (doc, ctx) => attachPolicies(doc, ctx, t, policies, detach));
    return encrypted(c, { ...(detach ? { policiesDetached: changed } : { policiesAttached: changed }), updatedAt: new Date(d.now()).toISOString() });
  };
}

/** What `add-service-account` (and its LDAP form) is sent. */
interface AccessKeyBody {
  policy?: unknown;
  targetUser?: unknown;
  accessKey?: unknown;
  secretKey?: unknown;
  name?: unknown;
  description?: unknown;
  expiration?: unknown;
}

/** The new key a body asks for: its pair (given, else generated; checked), the secret sealed for the store, and the optional fields of its record. */
function newAccessKey(body: AccessKeyBody, d: IamAdminDeps): { accessKey: string; secretKey: string; secret: Secret; expiresAt: number | undefined; optional: Pick<NewAccessKey, 'policy' | 'name' | 'description' | 'expiresAt'> } {
  const gen = generateKeys();
  const accessKey = typeof body.accessKey === 'string' && body.accessKey !== '' ? body.accessKey : gen.accessKey;
  const secretKey = typeof body.secretKey === 'string' && body.secretKey !== '' ? body.secretKey : gen.secretKey;
  checkAccessKey(accessKey);
  checkSecretKey(secretKey);
  const policy = policyText(body.policy);
  const expiresAt = expiryOf(body.expiration, d.now());
  return {
    accessKey,
    secretKey,
    secret: d.store.seal(secretKey),
    expiresAt,
    optional: {
      ...(policy !== undefined ? { policy } : {}),
      ...(typeof body.name === 'string' && body.name !== '' ? { name: body.name } : {}),
      ...(typeof body.description === 'string' && body.description !== '' ? { description: body.description } : {}),
      ...(expiresAt !== undefined ? { expiresAt } : {}),
    },
  };
}

/** madmin's answer to a created key: its pair (the secret shown this once) and expiry. */
function keyCreated(c: IamCall, key: { accessKey: string; secretKey: string; expiresAt: number | undefined }): Promise<IamReply> {
  return encrypted(c, { credentials: { accessKey: key.accessKey, secretKey: key.secretKey, expiration: key.expiresAt === undefined ? ZERO_TIME : iso(key.expiresAt) } });
}

const addServiceAccount: Handler = async (c, d) => {
  const body = await decryptedJson<AccessKeyBody>(c, 'access key');
  if (external(c.principal) && (typeof body.targetUser !== 'string' || body.targetUser === '')) {
    throw new SvcError('InvalidArgument', 'an LDAP or OpenID identity is no svc user: an LDAP user creates its access keys through idp/ldap/add-service-account (svc admin idp ldap accesskey create)');
  }
  const self = builtinSelf(c.principal);
  const targetUser = typeof body.targetUser === 'string' && body.targetUser !== '' ? body.targetUser : (self ?? null);
  ownsOrMay(c, d, targetUser, 'admin:CreateServiceAccount');
  const key = newAccessKey(body, d);
  await d.store.mutate('accesskey.create', actor(c), { accessKeyId: key.accessKey, parent: targetUser ?? 'root' }, (doc, ctx) =>
    addAccessKey(doc, ctx, {
      accessKey: key.accessKey,
      secret: key.secret,
      parent: targetUser,
      ...key.optional,
    }),
  );
  return keyCreated(c, key);
};

const listServiceAccounts: Handler = async (c, d) => {
  const self = builtinSelf(c.principal);
  const userParam = c.query.get('user');
  const user = userParam !== undefined && userParam !== '' ? userParam : (self ?? null);
  ownsOrMay(c, d, user, 'admin:ListServiceAccounts');
  const doc = d.store.doc();
  const accounts = Object.keys(doc.accessKeys)
    .filter((ak) => doc.accessKeys[ak]!.parent === user)
    .sort()
    .map((ak) => accessKeyView(doc, ak));
  return encrypted(c, { accounts });
};

const infoServiceAccount: Handler = async (c, d) => {
  const ak = q(c, 'accessKey');
  const doc = d.store.doc();
  const k = accessKeyRecord(doc, ak);
  ownsOrMay(c, d, k.parent, 'admin:ListServiceAccounts', k.ldap !== undefined);
  const v = accessKeyView(doc, ak);
  const names = k.ldap !== undefined ? ldapPolicyNames(doc.ldapPolicies, k.ldap.dn, k.ldap.groups) : k.parent === null ? [] : effectivePolicyNames(doc, k.parent);
  const implied = k.parent === null ? '' : JSON.stringify({ Version: '2012-10-17', Statement: names.flatMap((n) => (JSON.parse(policyEntry(doc, n)?.text ?? '{"Statement":[]}') as { Statement: unknown[] }).Statement) });
  return encrypted(c, { parentUser: v.parentUser, accountStatus: v.accountStatus, impliedPolicy: v.impliedPolicy, policy: k.policy ?? implied, name: v.name, description: v.description, expiration: v.expiration, ...(k.disabledReason !== undefined ? { disabledReason: k.disabledReason } : {}) });
};

const updateServiceAccount: Handler = async (c, d) => {
  const ak = q(c, 'accessKey');
  const k = accessKeyRecord(d.store.doc(), ak);
  ownsOrMay(c, d, k.parent, 'admin:UpdateServiceAccount', k.ldap !== undefined);
  const body = await decryptedJson<{ newPolicy?: unknown; newSecretKey?: unknown; newStatus?: unknown; newName?: unknown; newDescription?: unknown; newExpiration?: unknown }>(c, 'access key update');
  let secret: Secret | undefined;
  if (typeof body.newSecretKey === 'string' && body.newSecretKey !== '') {
    checkSecretKey(body.newSecretKey);
    secret = d.store.seal(body.newSecretKey);
  }
  const status = body.newStatus === 'on' || body.newStatus === 'enabled' ? 'enabled' : body.newStatus === 'off' || body.newStatus === 'disabled' ? 'disabled' : undefined;
  if (body.newStatus !== undefined && body.newStatus !== '' && status === undefined) throw new SvcError('InvalidArgument', 'the status is "on" or "off"');
  const policy = body.newPolicy === undefined || body.newPolicy === null ? undefined : policyText(body.newPolicy) ?? '';
  const expiresAt = body.newExpiration === undefined || body.newExpiration === null ? undefined : (expiryOf(body.newExpiration, d.now()) ?? 0);
  await d.store.mutate('accesskey.update', actor(c), { accessKeyId: ak, ...(status ? { status } : {}), ...(secret ? { secretChanged: true } : {}) }, (doc, ctx) =>
    updateAccessKey(doc, ctx, ak, {
      ...(secret ? { secret } : {}),
      ...(status ? { status } : {}),
      ...(policy !== undefined ? { policy } : {}),
      ...(typeof body.newName === 'string' ? { name: body.newName } : {}),
      ...(typeof body.newDescription === 'string' ? { description: body.newDescription } : {}),
      ...(expiresAt !== undefined ? { expiresAt } : {}),
    }),
  );
  return { status: 204, body: Buffer.alloc(0) };
};

const deleteServiceAccount: Handler = async (c, d) => {
  const ak = q(c, 'accessKey');
  const k = accessKeyRecord(d.store.doc(), ak);
  ownsOrMay(c, d, k.parent, 'admin:RemoveServiceAccount', k.ldap !== undefined);
  await d.store.mutate('accesskey.remove', actor(c), { accessKeyId: ak }, (doc) => removeAccessKey(doc, ak));
  return { status: 204, body: Buffer.alloc(0) };
};

// ---- access keys of LDAP users

/** The LDAP provider in force, with its lookup password; refused when none is, or it is turned off. */
function ldapInForce(d: IamAdminDeps): { cfg: LdapConfig; bindPassword: string; lookup: NonNullable<IamAdminDeps['lookupLdapUser']> } {
  const cfg = d.store.doc().idp.ldap;
  if (cfg === undefined || cfg.disabled === true || d.lookupLdapUser === undefined) throw new SvcError('XSvcStsNotConfigured', 'no LDAP provider is configured (or it is turned off)');
  return { cfg, bindPassword: d.store.open(cfg.lookupBindPassword), lookup: d.lookupLdapUser };
}

/**
 * madmin's `AddServiceAccountLDAP`: an access key for an LDAP user (`targetUser`,
 * a user name or DN; none: the caller's own LDAP user). The user is resolved
 * with the lookup bind now (DN, groups); it must hold a policy through its DN
 * or a group. An LDAP session may create one for its own user without
 * `admin:CreateServiceAccount`; for anyone else, and through an access key,
 * the permission is needed.
 */
const addLdapServiceAccount: Handler = async (c, d) => {
  const body = await decryptedJson<AccessKeyBody>(c, 'access key');
  const requested = typeof body.targetUser === 'string' ? body.targetUser.trim() : '';
  const self = ldapSelf(c.principal);
  const name = requested !== '' ? requested : self?.dn;
  if (name === undefined) throw new SvcError('InvalidArgument', 'name the LDAP user (targetUser: a user name or DN)');
  const own = self !== undefined && selfServe(c) && sameLdapUser(self, name);
  if (!own) need(c, d, 'admin:CreateServiceAccount');
  const key = newAccessKey(body, d);
  const ldap = ldapInForce(d);
  const user = await ldap.lookup(ldap.cfg, ldap.bindPassword, name);
  // a session's own user is the DN it signed in as: a user renamed or moved since is refused rather than guessed
  if (own && user.dn.toLowerCase() !== self.dn.toLowerCase()) throw new SvcError('XSvcAdminNoSuchUser', `the LDAP user ${self.dn} is no longer found by the user search`);
  await d.store.mutate('accesskey.create', actor(c), { accessKeyId: key.accessKey, parent: user.dn, ldap: true }, (doc, ctx) =>
    addAccessKey(doc, ctx, {
      accessKey: key.accessKey,
      secret: key.secret,
      parent: user.dn,
      ldap: { dn: user.dn, username: user.username, groups: [...user.groups] },
      ...key.optional,
    }),
  );
  return keyCreated(c, key);
};

const LDAP_LIST_TYPES = ['sts-only', 'svcacc-only', 'all'] as const;

/**
 * madmin's `ListAccessKeysLDAP`: `{serviceAccounts, stsKeys}` of one LDAP user
 * (`userDN`, a DN or user name; none: the caller's own, or, for an admin that
 * is no LDAP user, every LDAP user's). Temporary credentials are sealed
 * tokens svc does not keep, so `stsKeys` is always empty.
 */
const listLdapAccessKeys: Handler = async (c, d) => {
  const listType = c.query.get('listType') || 'all';
  if (!(LDAP_LIST_TYPES as readonly string[]).includes(listType)) throw new SvcError('InvalidArgument', `listType is one of ${LDAP_LIST_TYPES.join(', ')}, not "${listType}"`);
  const requested = c.query.get('userDN') ?? '';
  const self = ldapSelf(c.principal);
  const who = requested !== '' ? requested : self?.dn;
  if (!(self !== undefined && who !== undefined && selfServe(c) && sameLdapUser(self, who))) need(c, d, 'admin:ListServiceAccounts');
  const doc = d.store.doc();
  const matches = (dn: string, username: string) => who === undefined || who.toLowerCase() === dn.toLowerCase() || who === username;
  const serviceAccounts =
    listType === 'sts-only'
      ? []
      : Object.keys(doc.accessKeys)
          .filter((ak) => {
            const o = doc.accessKeys[ak]!.ldap;
            return o !== undefined && matches(o.dn, o.username);
          })
          .sort()
          .map((ak) => accessKeyView(doc, ak));
  return encrypted(c, { serviceAccounts, stsKeys: [] });
};

// ---- identity providers (STS)

/** One configuration per kind: the default, `_` (madmin's name when none is given). */
const IDP_DEFAULT = '_';

function idpConfig(kind: IdpKind, method: 'PUT' | 'POST' | 'GET' | 'DELETE'): Handler {
  return async (c, d) => {
    need(c, d, 'admin:ConfigUpdate');
    const current = d.store.doc().idp[kind];
    if (method === 'GET') {
      if (current === undefined) throw new SvcError('XSvcStsNotConfigured', `no ${kind} provider is configured`);
      return encrypted(c, { type: kind, name: IDP_DEFAULT, info: configInfo(kind, current) });
    }
    if (method === 'DELETE') {
      if (current === undefined) throw new SvcError('XSvcStsNotConfigured', `no ${kind} provider is configured`);
      await d.store.mutate(`idp.${kind}.remove`, actor(c), {}, (doc) => {
        delete doc.idp[kind];
      });
      return APPLIED;
    }
    // PUT adds (refused over an existing one), POST updates (keys not sent keep their values)
    const kv = parseConfigText((await decryptData(c.secretKey, c.body)).toString('utf8'));
    const update = method === 'POST';
    // A provider that would be in force with a new address, trust, lookup bind or (LDAP) search, or turned on again, must be usable now.
    // (Adding over an existing provider, or updating none, is refused below without asking anyone.)
    if (update ? current !== undefined && changesReach(kind, kv) : current === undefined) await checkProvider(kind, kv, current, d);
    await d.store.mutate(`idp.${kind}.${update ? 'update' : 'add'}`, actor(c), { keys: [...kv.keys()] }, (doc) => {
      const prev = doc.idp[kind];
      if (update && prev === undefined) throw new SvcError('XSvcStsNotConfigured', `no ${kind} provider is configured: add one first`);
      if (!update && prev !== undefined) throw new SvcError('XSvcAdminIdpConfigExists', `an ${kind} provider is configured already: update it, or remove it first`);
      if (kind === 'openid') doc.idp.openid = openIdConfigFrom(kv, (s) => d.store.seal(s), doc.idp.openid);
      else doc.idp.ldap = ldapConfigFrom(kv, (s) => d.store.seal(s), doc.idp.ldap);
    });
    return APPLIED;
  };
}

/** Refuses the provider `kv` would put in force when this node cannot use it (the check throws the reason); one turned off is not asked. */
async function checkProvider(kind: IdpKind, kv: ReadonlyMap<string, string>, current: OpenIdConfig | LdapConfig | undefined, d: IamAdminDeps): Promise<void> {
  const seal = (s: string) => d.store.seal(s);
  if (kind === 'openid' && d.checkOpenIdProvider) {
    const proposed = openIdConfigFrom(kv, seal, current as OpenIdConfig | undefined);
    if (proposed.disabled !== true) await d.checkOpenIdProvider(proposed.issuer);
  } else if (kind === 'ldap' && d.checkLdapServer) {
    const proposed = ldapConfigFrom(kv, seal, current as LdapConfig | undefined);
    if (proposed.disabled !== true) await d.checkLdapServer(proposed, d.store.open(proposed.lookupBindPassword));
  }
}

/** madmin's list: the one configuration of a kind, when there is one. */
function idpList(kind: IdpKind): Handler {
  return async (c, d) => {
    need(c, d, 'admin:ConfigUpdate');
    const cfg = d.store.doc().idp[kind];
    return encrypted(c, cfg === undefined ? [] : [{ type: kind, name: IDP_DEFAULT, enabled: cfg.disabled !== true }]);
  };
}

/** A configuration name other than the default: one provider of each kind is held. */
const idpNamed: Handler = async (c, d) => {
  need(c, d, 'admin:ConfigUpdate');
  throw new SvcError('InvalidArgument', `svc holds one provider of each kind, the default configuration "${IDP_DEFAULT}"; leave the configuration name out`);
};

function ldapAttach(detach: boolean): Handler {
  return async (c, d) => {
    need(c, d, 'admin:AttachUserOrGroupPolicy');
    const body = await decryptedJson<{ policies?: unknown; user?: unknown; group?: unknown }>(c, 'policy association');
    const policies = Array.isArray(body.policies) ? policyList(body.policies.filter((p): p is string => typeof p === 'string').join(',')) : [];
    const t = target(body.user, body.group);
    const dn = 'user' in t ? t.user : t.group;
    const changed = await d.store.mutate(detach ? 'ldap.policy.detach' : 'ldap.policy.attach', actor(c), { dn, policies }, (doc) => mapLdapPolicies(doc, dn, policies, detach, 'user' in t ? 'user' : 'group'));
    return encrypted(c, { ...(detach ? { policiesDetached: changed } : { policiesAttached: changed }), updatedAt: new Date(d.now()).toISOString() });
  };
}

/**
 * madmin's `PolicyEntitiesResult` for LDAP: which DNs (as attached: user or
 * group, lower-cased) hold which policies, and per policy who holds it.
 * `user`, `group`, `policy` narrow it to one DN or policy each.
 */
const ldapPolicyEntities: Handler = async (c, d) => {
  need(c, d, 'admin:ListUserPolicies');
  const doc = d.store.doc();
  const user = c.query.get('user')?.toLowerCase();
  const group = c.query.get('group')?.toLowerCase();
  const policy = c.query.get('policy');
  const all = user === undefined && group === undefined && policy === undefined;
  const entries = Object.entries(doc.ldapPolicies).sort(([a], [b]) => a.localeCompare(b));
  const kind = (dn: string) => ldapKindOf(doc, dn);
  const userMappings = entries.filter(([dn]) => kind(dn) === 'user' && (all || dn === user)).map(([dn, policies]) => ({ user: dn, policies }));
  const groupMappings = entries.filter(([dn]) => kind(dn) === 'group' && (all || dn === group)).map(([dn, policies]) => ({ group: dn, policies }));
  const names = [...new Set(entries.flatMap(([, p]) => p))].sort().filter((p) => all || p === policy);
  const policyMappings = names.map((p) => ({
    policy: p,
    users: entries.filter(([dn, ps]) => ps.includes(p) && kind(dn) === 'user').map(([dn]) => dn),
    groups: entries.filter(([dn, ps]) => ps.includes(p) && kind(dn) === 'group').map(([dn]) => dn),
  }));
  return encrypted(c, { timestamp: new Date(d.now()).toISOString(), userMappings, groupMappings, policyMappings });
};

/** What the console shows or hides: the actions it asks about. */
export const CONSOLE_ACTIONS = [
  's3:ListAllMyBuckets',
  's3:CreateBucket',
  's3:DeleteBucket',
  's3:ListBucket',
  's3:GetObject',
  's3:PutObject',
  's3:DeleteObject',
  's3:PutBucketVersioning',
  'admin:ServerInfo',
  'admin:Heal',
  'admin:Decommission',
  'admin:Rebalance',
  'admin:ListUsers',
  'admin:CreateUser',
  'admin:DeleteUser',
  'admin:EnableUser',
  'admin:DisableUser',
  'admin:ListGroups',
  'admin:AddUserToGroup',
  'admin:ListUserPolicies',
  'admin:CreatePolicy',
  'admin:DeletePolicy',
  'admin:AttachUserOrGroupPolicy',
  'admin:CreateServiceAccount',
  'admin:ListServiceAccounts',
] as const;

/**
 * Who the caller is and what it may do, by its own policies (svc's route, no
 * permission needed): with `bucket`, S3 actions are asked of that bucket and
 * its objects; without, of any bucket. Bucket policies and ACLs can still
 * allow more on a given bucket; the answer is for showing and hiding, the
 * requests themselves are authorized as always.
 */
const whoami: Handler = async (c, d) => {
  const p = c.principal;
  const bucket = c.query.get('bucket');
  const owner = bucket ? await d.bucketOwner?.(bucket).catch(() => undefined) : undefined;
  const permissions: Record<string, boolean> = {};
  for (const action of CONSOLE_ACTIONS) {
    const s3 = action.startsWith('s3:');
    const resource = bucket && s3 ? (/Object$/.test(action) ? `arn:aws:s3:::${bucket}/*` : `arn:aws:s3:::${bucket}`) : s3 ? 'arn:aws:s3:::*' : '';
    permissions[action] = d.allowedOn ? d.allowedOn(p, action, resource, s3 ? owner : undefined) : d.allowed(p, action);
  }
  const self = selfUser(p);
  return json({
    accessKey: p.accessKey,
    user: self ?? '',
    root: p.root,
    credential: p.credential ?? 'user',
    policies: self !== undefined && d.store.doc().users[self] ? effectivePolicyNames(d.store.doc(), self) : [],
    permissions,
  });
};

export const IAM_ADMIN_ROUTES: readonly IamRoute[] = [
  { op: 'WhoAmI', method: 'GET', path: 'v3/iam/whoami', summary: "the caller's identity and what its policies allow (svc's route; `?bucket=` for one bucket)", handler: whoami },
  { op: 'AddOpenIdConfig', method: 'PUT', path: 'v3/idp-config/openid/_', summary: 'configure the openid provider (encrypted `key=value` text; refused when one is configured)', handler: idpConfig('openid', 'PUT') },
  { op: 'UpdateOpenIdConfig', method: 'POST', path: 'v3/idp-config/openid/_', summary: 'change keys of the openid provider (encrypted `key=value` text; keys not sent keep their values)', handler: idpConfig('openid', 'POST') },
  { op: 'GetOpenIdConfig', method: 'GET', path: 'v3/idp-config/openid/_', summary: 'the openid provider as `{type, name, info: [{key, value}]}` (encrypted answer, secrets hidden)', handler: idpConfig('openid', 'GET') },
  { op: 'DeleteOpenIdConfig', method: 'DELETE', path: 'v3/idp-config/openid/_', summary: 'remove the openid provider', handler: idpConfig('openid', 'DELETE') },
  { op: 'ListOpenIdConfigs', method: 'GET', path: 'v3/idp-config/openid', summary: 'the openid configurations (encrypted `[{type, name, enabled}]`)', handler: idpList('openid') },
  { op: 'AddLdapConfig', method: 'PUT', path: 'v3/idp-config/ldap/_', summary: 'configure the ldap provider (encrypted `key=value` text; refused when one is configured)', handler: idpConfig('ldap', 'PUT') },
  { op: 'UpdateLdapConfig', method: 'POST', path: 'v3/idp-config/ldap/_', summary: 'change keys of the ldap provider (encrypted `key=value` text; keys not sent keep their values)', handler: idpConfig('ldap', 'POST') },
  { op: 'GetLdapConfig', method: 'GET', path: 'v3/idp-config/ldap/_', summary: 'the ldap provider as `{type, name, info: [{key, value}]}` (encrypted answer, secrets hidden)', handler: idpConfig('ldap', 'GET') },
  { op: 'DeleteLdapConfig', method: 'DELETE', path: 'v3/idp-config/ldap/_', summary: 'remove the ldap provider', handler: idpConfig('ldap', 'DELETE') },
  { op: 'ListLdapConfigs', method: 'GET', path: 'v3/idp-config/ldap', summary: 'the ldap configurations (encrypted `[{type, name, enabled}]`)', handler: idpList('ldap') },
  { op: 'LdapPolicyEntities', method: 'GET', path: 'v3/idp/ldap/policy-entities', summary: 'which LDAP DNs hold which policies (encrypted answer; `user`, `group`, `policy` narrow it)', handler: ldapPolicyEntities },
  { op: 'LdapPolicyAttach', method: 'POST', path: 'v3/idp/ldap/policy/attach', summary: 'attach policies to an LDAP user or group DN (encrypted both ways)', handler: ldapAttach(false) },
  { op: 'LdapPolicyDetach', method: 'POST', path: 'v3/idp/ldap/policy/detach', summary: 'detach policies from an LDAP DN (encrypted both ways)', handler: ldapAttach(true) },
  { op: 'AddServiceAccountLDAP', method: 'PUT', path: 'v3/idp/ldap/add-service-account', summary: "create an access key for an LDAP user, by name or DN (encrypted both ways; an LDAP session may create its own user's)", handler: addLdapServiceAccount },
  { op: 'ListAccessKeysLDAP', method: 'GET', path: 'v3/idp/ldap/list-access-keys', summary: "an LDAP user's access keys (`userDN`, `listType`; encrypted `{serviceAccounts, stsKeys}`)", handler: listLdapAccessKeys },
  { op: 'AddUser', method: 'PUT', path: 'v3/add-user', summary: 'create or update a user (encrypted body {secretKey, status})', handler: addUser },
  { op: 'RemoveUser', method: 'DELETE', path: 'v3/remove-user', summary: 'delete a user and its access keys', handler: removeUserH },
  { op: 'ListUsers', method: 'GET', path: 'v3/list-users', summary: 'every user (encrypted answer)', handler: listUsers },
  { op: 'UserInfo', method: 'GET', path: 'v3/user-info', summary: "a user's status, policies and groups", handler: userInfoH },
  { op: 'SetUserStatus', method: 'PUT', path: 'v3/set-user-status', summary: 'enable or disable a user', handler: setUserStatusH },
  { op: 'UpdateGroupMembers', method: 'PUT', path: 'v3/update-group-members', summary: 'add members to a group (creating it) or remove them (an empty removal deletes the group)', handler: updateGroupMembersH },
  { op: 'GroupInfo', method: 'GET', path: 'v3/group', summary: "a group's members, status and policies", handler: groupInfo },
  { op: 'ListGroups', method: 'GET', path: 'v3/groups', summary: 'every group', handler: listGroups },
  { op: 'SetGroupStatus', method: 'PUT', path: 'v3/set-group-status', summary: 'enable or disable a group', handler: setGroupStatusH },
  { op: 'AddCannedPolicy', method: 'PUT', path: 'v3/add-canned-policy', summary: 'create or replace a policy (body: the policy document)', handler: addPolicy },
  { op: 'RemoveCannedPolicy', method: 'DELETE', path: 'v3/remove-canned-policy', summary: 'delete a policy that nothing is attached to', handler: removePolicyH },
  { op: 'ListCannedPolicies', method: 'GET', path: 'v3/list-canned-policies', summary: 'every policy, canned ones first', handler: listPolicies },
  { op: 'InfoCannedPolicy', method: 'GET', path: 'v3/info-canned-policy', summary: 'one policy (v=2: with its dates)', handler: policyInfo },
  { op: 'SetUserOrGroupPolicy', method: 'PUT', path: 'v3/set-user-or-group-policy', summary: "replace a user's or group's policies", handler: setPolicy },
  { op: 'AttachPolicy', method: 'POST', path: 'v3/idp/builtin/policy/attach', summary: 'attach policies to a user or group (encrypted both ways)', handler: attach(false) },
  { op: 'DetachPolicy', method: 'POST', path: 'v3/idp/builtin/policy/detach', summary: 'detach policies (encrypted both ways)', handler: attach(true) },
  { op: 'AddServiceAccount', method: 'PUT', path: 'v3/add-service-account', summary: 'create an access key (encrypted both ways; the secret is shown once)', handler: addServiceAccount },
  { op: 'UpdateServiceAccount', method: 'POST', path: 'v3/update-service-account', summary: "change an access key's secret, status, policy, expiry", handler: updateServiceAccount },
  { op: 'InfoServiceAccount', method: 'GET', path: 'v3/info-service-account', summary: 'one access key (encrypted answer)', handler: infoServiceAccount },
  { op: 'ListServiceAccounts', method: 'GET', path: 'v3/list-service-accounts', summary: "a user's access keys (encrypted answer)", handler: listServiceAccounts },
  { op: 'DeleteServiceAccount', method: 'DELETE', path: 'v3/delete-service-account', summary: 'delete an access key', handler: deleteServiceAccount },
];

/** The identity route at a method and sub-path (after the admin prefix); undefined for other paths. */
export function matchIamRoute(method: string, sub: string): IamRoute | { allowed: string[] } | undefined {
  // every route answers under /v3/ and /v4/ (current madmin-go asks for /v4), as the other admin routes do
  const m = /^(v3|v4)\/(.*)$/s.exec(sub);
  if (m === null) return undefined;
  const hits = IAM_ADMIN_ROUTES.filter((r) => r.path === `v3/${m[2]}`);
  if (hits.length === 0 && /^idp-config\/(openid|ldap)\/[^/]+$/.test(m[2]!)) return { op: 'NamedIdpConfig', method: 'GET', path: `v3/${m[2]}`, summary: 'a named configuration (refused)', handler: idpNamed };
  if (hits.length === 0) return undefined;
  return hits.find((r) => r.method === method) ?? { allowed: hits.map((r) => r.method) };
}
