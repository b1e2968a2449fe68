/**
 * Identity-provider configurations as madmin's `key=value` text (what
 * `mc admin idp openid|ldap add|update` and `svc admin idp ...` send) and
 * back: parsing with validation (unknown keys and bad values refused, so a
 * mistyped `server_starttls` never leaves a connection in clear), the merge
 * of an update into the configuration in force, the `info` listing with
 * secrets hidden, and how an LDAP configuration connects. Pure.
 */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { SvcError } from '../util/errors.ts';
import type { LdapConfig, OpenIdConfig, Secret } from './state.ts';

export type IdpKind = 'openid' | 'ldap';

/**
 * The keys each kind takes; `secret` ones are sealed at rest and never shown,
 * `reach` ones decide whether the node can use the provider (where it is,
 * how it is trusted, the lookup bind, where and how LDAP users and groups are
 * searched, whether it is on): an update of one is checked against the
 * provider before it is kept.
 */
const KEYS: Record<IdpKind, Record<string, { secret?: true; reach?: true }>> = {
  openid: { config_url: { reach: true }, client_id: {}, client_secret: { secret: true }, claim_name: {}, role_policy: {}, scopes: {}, redirect_uri: {}, display_name: {}, enable: { reach: true } },
  ldap: {
    server_addr: { reach: true },
    lookup_bind_dn: { reach: true },
    lookup_bind_password: { secret: true, reach: true },
    user_dn_search_base_dn: { reach: true },
    user_dn_search_filter: { reach: true },
    group_search_base_dn: { reach: true },
    group_search_filter: { reach: true },
    server_starttls: { reach: true },
    server_insecure: { reach: true },
    tls_skip_verify: { reach: true },
    enable: { reach: true },
  },
};

/** Whether an update sets a key that decides whether the node can use the provider (see `KEYS`). */
export function changesReach(kind: IdpKind, kv: ReadonlyMap<string, string>): boolean {
  return [...kv.keys()].some((k) => KEYS[kind][k]?.reach === true);
}

/** What `info` shows in place of a secret that is set. */
export const HIDDEN_SECRET = '*redacted*';

/** One line of madmin's `IDPConfig.info`. */
export interface IdpInfoLine {
  key: string;
  value: string;
  isCfg: boolean;
  isEnv: boolean;
}

function flag(kv: ReadonlyMap<string, string>, key: string): boolean {
  const v = kv.get(key);
  if (v === undefined || v === '' || v === 'off' || v === 'false') return false;
  if (v === 'on' || v === 'true') return true;
  throw new SvcError('InvalidArgument', `${key} is "on" or "off", not "${v}"`);
}

/** `enable=off` keeps a configuration but turns its provider off (on when absent). */
function disabled(kv: ReadonlyMap<string, string>): boolean {
  return kv.has('enable') && kv.get('enable') !== '' && !flag(kv, 'enable');
}

function checkKeys(kind: IdpKind, kv: ReadonlyMap<string, string>): void {
  const unknown = [...kv.keys()].filter((k) => !(k in KEYS[kind]));
  if (unknown.length > 0) throw new SvcError('InvalidArgument', `unknown ${kind} configuration key${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}; the keys are ${Object.keys(KEYS[kind]).join(', ')}`);
}

/** The non-secret keys of a configuration in force, as text values (the base an update merges into). */
export function configKv(kind: IdpKind, cfg: OpenIdConfig | LdapConfig): Map<string, string> {
  const out = new Map<string, string>([['enable', cfg.disabled ? 'off' : 'on']]);
  if (kind === 'openid') {
    const c = cfg as OpenIdConfig;
    out.set('config_url', c.issuer);
    out.set('client_id', c.clientIds.join(','));
    out.set('claim_name', c.claimName);
    if (c.rolePolicy) out.set('role_policy', c.rolePolicy);
    if (c.scopes) out.set('scopes', c.scopes.join(','));
    if (c.redirectUri) out.set('redirect_uri', c.redirectUri);
    if (c.displayName) out.set('display_name', c.displayName);
  } else {
    const c = cfg as LdapConfig;
    out.set('server_addr', c.serverAddr);
    out.set('lookup_bind_dn', c.lookupBindDn);
    out.set('user_dn_search_base_dn', c.userDnSearchBaseDn);
    out.set('user_dn_search_filter', c.userDnSearchFilter);
    if (c.groupSearchBaseDn) out.set('group_search_base_dn', c.groupSearchBaseDn);
    if (c.groupSearchFilter) out.set('group_search_filter', c.groupSearchFilter);
    out.set('server_starttls', c.startTls ? 'on' : 'off');
    out.set('server_insecure', c.serverInsecure ? 'on' : 'off');
    out.set('tls_skip_verify', c.tlsSkipVerify ? 'on' : 'off');
  }
  return out;
}

/** `info`: every key with its value; a secret that is set shows as `*redacted*`. */
export function configInfo(kind: IdpKind, cfg: OpenIdConfig | LdapConfig): IdpInfoLine[] {
  const kv = configKv(kind, cfg);
  const secretSet = kind === 'openid' ? (cfg as OpenIdConfig).clientSecret !== undefined : true;
  const secretKey = kind === 'openid' ? 'client_secret' : 'lookup_bind_password';
  if (secretSet) kv.set(secretKey, HIDDEN_SECRET);
  return Object.keys(KEYS[kind])
    .filter((k) => kv.has(k))
    .map((key) => ({ key, value: kv.get(key)!, isCfg: true, isEnv: false }));
}

/**
 * The configuration `text` describes. With `prev` (an update), keys not in
 * `text` keep their values, secrets included; an empty value clears an
 * optional key.
 */
export function openIdConfigFrom(kv: ReadonlyMap<string, string>, seal: (s: string) => Secret, prev?: OpenIdConfig): OpenIdConfig {
  checkKeys('openid', kv);
  const all = new Map([...(prev ? configKv('openid', prev) : []), ...kv]);
  const issuer = all.get('config_url') ?? '';
  if (!/^https?:\/\//.test(issuer)) throw new SvcError('InvalidArgument', "config_url must be the provider's http(s) discovery URL (…/.well-known/openid-configuration)");
  const clientIds = (all.get('client_id') ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (clientIds.length === 0) throw new SvcError('InvalidArgument', 'client_id is required (the audience its tokens carry)');
  const secretText = kv.get('client_secret');
  const clientSecret = secretText === undefined ? prev?.clientSecret : secretText === '' ? undefined : seal(secretText);
  return {
    issuer,
    clientIds,
    claimName: all.get('claim_name') || 'policy',
    ...(all.get('role_policy') ? { rolePolicy: all.get('role_policy')! } : {}),
    ...(clientSecret ? { clientSecret } : {}),
    ...(all.get('scopes') ? { scopes: all.get('scopes')!.split(',').map((x) => x.trim()).filter((x) => x !== '') } : {}),
    ...(all.get('redirect_uri') ? { redirectUri: checkRedirect(all.get('redirect_uri')!) } : {}),
    ...(all.get('display_name') ? { displayName: all.get('display_name')! } : {}),
    ...(disabled(all) ? { disabled: true } : {}),
  };
}

function checkRedirect(uri: string): string {
  if (!/^https?:\/\/[^/]+\/.*sso\/callback$/.test(uri)) throw new SvcError('InvalidArgument', 'redirect_uri is the console\'s https://HOST[/PREFIX]/svc/console/sso/callback');
  return uri;
}

export function ldapConfigFrom(kv: ReadonlyMap<string, string>, seal: (s: string) => Secret, prev?: LdapConfig): LdapConfig {
  checkKeys('ldap', kv);
  const all = new Map([...(prev ? configKv('ldap', prev) : []), ...kv]);
  const need = (k: string) => {
    const v = all.get(k);
    if (v === undefined || v === '') throw new SvcError('InvalidArgument', `${k} is required`);
    return v;
  };
  const passwordText = kv.get('lookup_bind_password');
  const lookupBindPassword = passwordText !== undefined && passwordText !== '' ? seal(passwordText) : prev?.lookupBindPassword;
  if (lookupBindPassword === undefined) throw new SvcError('InvalidArgument', 'lookup_bind_password is required');
  const cfg: LdapConfig = {
    serverAddr: need('server_addr'),
    lookupBindDn: need('lookup_bind_dn'),
    lookupBindPassword,
    userDnSearchBaseDn: need('user_dn_search_base_dn'),
    userDnSearchFilter: need('user_dn_search_filter'),
    ...(all.get('group_search_base_dn') ? { groupSearchBaseDn: all.get('group_search_base_dn')! } : {}),
    ...(all.get('group_search_filter') ? { groupSearchFilter: all.get('group_search_filter')! } : {}),
    ...(flag(all, 'server_starttls') ? { startTls: true } : {}),
    ...(flag(all, 'server_insecure') ? { serverInsecure: true } : {}),
    ...(flag(all, 'tls_skip_verify') ? { tlsSkipVerify: true } : {}),
    ...(disabled(all) ? { disabled: true } : {}),
  };
  ldapConnection(cfg); // refuses contradictions now rather than at the first sign-in
  checkLdapSearches(cfg);
  return cfg;
}

/**
 * Refuses searches no sign-in could run: a user filter without the user name
 * (`%s`), a group filter without the user's DN or name (`%d`, `%s`), a group
 * base without a group filter or the other way round, and a filter that is
 * not one (`ldapts`'s own parser, the one sign-in sends it with, given the
 * filter with its placeholders filled in; its parentheses paired as well,
 * where ldapts is lenient). Whether the bases exist is the server's to say
 * (`checkLdapServer`).
 */
function checkLdapSearches(cfg: LdapConfig): void {
  if (!cfg.userDnSearchFilter.includes('%s')) throw new SvcError('InvalidArgument', `user_dn_search_filter "${cfg.userDnSearchFilter}" has no %s: it must put the user name (%s) in the filter, as in (uid=%s)`);
  checkLdapFilter('user_dn_search_filter', cfg.userDnSearchFilter);
  if ((cfg.groupSearchBaseDn === undefined) !== (cfg.groupSearchFilter === undefined)) {
    const [set, unset] = cfg.groupSearchBaseDn === undefined ? ['group_search_filter', 'group_search_base_dn'] : ['group_search_base_dn', 'group_search_filter'];
    throw new SvcError('InvalidArgument', `${set} is set but ${unset} is not: group_search_base_dn and group_search_filter are set together (groups are searched for) or not at all`);
  }
  if (cfg.groupSearchFilter !== undefined) {
    if (!/%[ds]/.test(cfg.groupSearchFilter)) throw new SvcError('InvalidArgument', `group_search_filter "${cfg.groupSearchFilter}" has neither %d nor %s: it must put the user's DN (%d) or name (%s) in the filter, as in (member=%d)`);
    checkLdapFilter('group_search_filter', cfg.groupSearchFilter);
  }
}

function checkLdapFilter(key: string, filter: string): void {
  try {
    ldapFilterParser().parseString(filter.replaceAll('%d', 'cn=x').replaceAll('%s', 'x'));
    // ldapts closes an unclosed (& or (| itself; RFC 4515 escapes a parenthesis in a value (\28, \29), so the raw ones pair up
    const opened = filter.split('(').length - 1;
    const closed = filter.split(')').length - 1;
    if (opened !== closed) throw new Error(`unbalanced parentheses: ${opened} "(" and ${closed} ")"`);
  } catch (err) {
    throw new SvcError('InvalidArgument', `${key} "${filter}" is not an LDAP filter (RFC 4515), checked with %s and %d filled in: ${(err as Error).message}`);
  }
}

let filterParser: typeof import('ldapts').FilterParser | undefined;

/**
 * `ldapts`'s filter parser, loaded on the first LDAP configuration rather than
 * with this module (a node without an identity provider never loads ldapts:
 * node/test/lazy-libraries.test.ts). Required synchronously from the ES module
 * build `import('ldapts')` loads too, so the process holds one copy.
 */
function ldapFilterParser(): typeof import('ldapts').FilterParser {
  filterParser ??= (createRequire(import.meta.url)(fileURLToPath(import.meta.resolve('ldapts'))) as typeof import('ldapts')).FilterParser;
  return filterParser;
}

/** How an LDAP configuration connects. */
export interface LdapConnection {
  /** `ldap://` or `ldaps://` URL for the client. */
  readonly url: string;
  /** The host name (or address) the server's certificate must name. */
  readonly host: string;
  /** `tls`: TLS from the first byte (LDAPS); `starttls`: plain, upgraded before any bind; `plain`: never encrypted. */
  readonly mode: 'tls' | 'starttls' | 'plain';
}

/**
 * `server_addr` as a URL (`ldaps://` TLS, `ldap://` plain or StartTLS with
 * `server_starttls=on`) or, as MinIO takes it, `host[:port]`: TLS unless
 * `server_starttls=on` (StartTLS on 389) or `server_insecure=on` (plain on 389).
 */
export function ldapConnection(cfg: Pick<LdapConfig, 'serverAddr' | 'startTls' | 'serverInsecure'>): LdapConnection {
  const addr = cfg.serverAddr.trim();
  if (cfg.startTls && cfg.serverInsecure) throw new SvcError('InvalidArgument', 'server_starttls=on and server_insecure=on contradict each other: choose one');
  const scheme = /^([a-z]+):\/\//i.exec(addr)?.[1]?.toLowerCase();
  let url: URL;
  try {
    url = new URL(scheme === undefined ? `ldap://${addr}` : addr);
  } catch {
    throw new SvcError('InvalidArgument', `server_addr "${addr}" is not host[:port], ldap://host[:port] or ldaps://host[:port]`);
  }
  if (scheme !== undefined && scheme !== 'ldap' && scheme !== 'ldaps') throw new SvcError('InvalidArgument', `server_addr is host[:port], ldap:// or ldaps://, not ${scheme}://`);
  if (url.hostname === '' || (url.pathname !== '' && url.pathname !== '/')) throw new SvcError('InvalidArgument', `server_addr "${addr}" is not host[:port], ldap://host[:port] or ldaps://host[:port]`);
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const hostPort = (port: string) => `${url.hostname}:${url.port || port}`;
  if (scheme === 'ldaps') {
    if (cfg.startTls || cfg.serverInsecure) throw new SvcError('InvalidArgument', 'an ldaps:// server_addr is TLS already: server_starttls and server_insecure do not apply');
    return { url: `ldaps://${hostPort('636')}`, host, mode: 'tls' };
  }
  if (scheme === 'ldap') return { url: `ldap://${hostPort('389')}`, host, mode: cfg.startTls ? 'starttls' : 'plain' };
  if (cfg.startTls) return { url: `ldap://${hostPort('389')}`, host, mode: 'starttls' };
  if (cfg.serverInsecure) return { url: `ldap://${hostPort('389')}`, host, mode: 'plain' };
  return { url: `ldaps://${hostPort('636')}`, host, mode: 'tls' };
}
