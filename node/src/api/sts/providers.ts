/**
 * The external identity providers behind STS: an OpenID Connect provider
 * (ID tokens, or JWT access tokens, verified with `jose` against the keys its
 * discovery document names) and an LDAP server (a user name and password
 * checked by binding as the user with `ldapts`). Both are well-kept
 * libraries for protocols not worth writing again: `jose` handles JWS
 * algorithms, key rotation and caching of the provider's JWKS; `ldapts` is
 * a maintained, dependency-light LDAP v3 client with LDAPS and StartTLS.
 *
 * Their configuration lives in the identity store (`idp` of the document,
 * set through the admin API's `idp-config` routes), so every node uses the
 * same provider.
 */
// jose and ldapts are loaded on the first web-identity or LDAP call: a node without an identity
// provider never loads them (idle memory; node/test/lazy-libraries.test.ts checks the server's idle module set).
import type { ConnectionOptions } from 'node:tls';
import type { createRemoteJWKSet, JWTPayload } from 'jose';
import { ldapConnection } from '../../iam/idp-config.ts';
import { type LdapConfig, ldapPolicyNames, type OpenIdConfig } from '../../iam/state.ts';
import { type ClientTrust, tlsFailureReason, trustedFetch } from '../../tls/trust.ts';
import { SvcError } from '../../util/errors.ts';

/** An identity an external provider vouched for. */
export interface ExternalIdentity {
  /** The user name the session acts as (`aws:username`). */
  readonly subject: string;
  /** Policy names the provider maps the identity to. */
  readonly policies: readonly string[];
  /** Condition keys (`jwt:sub`, `ldap:username`, ...). */
  readonly claims: Record<string, string[]>;
  /** The longest the session may last (the ID token's own expiry), Unix ms. */
  readonly notAfter?: number;
}

interface Discovered {
  issuer: string;
  jwks: ReturnType<typeof createRemoteJWKSet>;
}

const discovery = new Map<string, Promise<Discovered>>();

/** A failed call to a provider, with the TLS reason when that was it (and the remedy). */
export function providerUnreachable(what: string, err: unknown): SvcError {
  const tls = tlsFailureReason(err);
  if (tls !== undefined) return new SvcError('IDPCommunicationError', `${what} failed the TLS check: ${tls}; trust its CA by adding it to the certificate directory's CAs/`);
  return new SvcError('IDPCommunicationError', `${what} could not be reached: ${(err as Error).message}`);
}

async function discover(configUrl: string, fetchImpl: typeof fetch): Promise<Discovered> {
  let d = discovery.get(configUrl);
  if (d === undefined) {
    d = (async () => {
      let res: Response;
      try {
        res = await fetchImpl(configUrl, { signal: AbortSignal.timeout(10_000) });
      } catch (err) {
        throw providerUnreachable(`the OpenID provider's discovery document ${configUrl}`, err);
      }
      if (!res.ok) throw new SvcError('IDPCommunicationError', `the OpenID provider's discovery document answered ${res.status}`);
      let doc: { issuer?: unknown; jwks_uri?: unknown };
      try {
        doc = (await res.json()) as typeof doc;
      } catch {
        throw new SvcError('IDPCommunicationError', `the OpenID provider's discovery document ${configUrl} is not JSON`);
      }
      if (typeof doc.issuer !== 'string' || typeof doc.jwks_uri !== 'string') throw new SvcError('IDPCommunicationError', 'the discovery document names no issuer or jwks_uri');
      const { createRemoteJWKSet, customFetch } = await import('jose');
      return { issuer: doc.issuer, jwks: createRemoteJWKSet(new URL(doc.jwks_uri), { timeoutDuration: 10_000, [customFetch]: fetchImpl }) };
    })();
    discovery.set(configUrl, d);
    d.catch(() => discovery.delete(configUrl));
  }
  return d;
}

/**
 * Whether `configUrl` is an OpenID provider this node can use: its discovery
 * document reached (TLS verified against the node's trusted CAs), answering,
 * naming an issuer and a key set. Checked when the provider is configured,
 * so a mistyped URL or an untrusted certificate is refused there and then
 * rather than at the first sign-in.
 */
export async function checkOpenIdProvider(configUrl: string, trust: ClientTrust): Promise<void> {
  await discover(configUrl, trustedFetch(trust));
}

function strings(v: unknown): string[] {
  if (typeof v === 'string') return v.split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (Array.isArray(v)) return v.filter((s): s is string => typeof s === 'string' && s !== '');
  return [];
}

/** Verifies a token of the configured provider: signature, issuer, expiry, audience (or authorized party) one of the client ids. */
export async function verifyWebIdentity(cfg: OpenIdConfig, token: string, now: number, trust: ClientTrust): Promise<ExternalIdentity> {
  const d = await discover(cfg.issuer, trustedFetch(trust));
  const { jwtVerify } = await import('jose');
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(token, d.jwks, { issuer: d.issuer, currentDate: new Date(now), clockTolerance: 60 }));
  } catch (err) {
    if (err instanceof SvcError) throw err;
    if (tlsFailureReason(err) !== undefined) throw providerUnreachable("the OpenID provider's key set", err);
    throw new SvcError('InvalidIdentityToken', `the web identity token is not valid: ${(err as Error).message}`);
  }
  const audiences = [...strings(payload.aud), ...strings(payload['azp']), ...strings(payload['client_id'])];
  if (!cfg.clientIds.some((c) => audiences.includes(c))) throw new SvcError('InvalidIdentityToken', `the token was not issued for a configured client id (${cfg.clientIds.join(', ')})`);
  const policies = [...strings(payload[cfg.claimName]), ...(cfg.rolePolicy ? strings(cfg.rolePolicy) : [])];
  if (policies.length === 0) throw new SvcError('AccessDenied', `the token's "${cfg.claimName}" claim names no policy, and no role policy is configured`);
  const sub = typeof payload.sub === 'string' ? payload.sub : '';
  const subject = typeof payload['preferred_username'] === 'string' ? (payload['preferred_username'] as string) : sub;
  if (subject === '') throw new SvcError('InvalidIdentityToken', 'the token has no subject');
  const claims: Record<string, string[]> = {};
  for (const [k, v] of Object.entries(payload)) {
    const vals = typeof v === 'number' ? [String(v)] : strings(v);
    if (vals.length > 0) claims[`jwt:${k}`] = vals;
  }
  return { subject, policies, claims, ...(typeof payload.exp === 'number' ? { notAfter: payload.exp * 1000 } : {}) };
}

/** RFC 4515 escaping of a value placed in a search filter. */
export function ldapEscape(s: string): string {
  return s.replace(/[\\*()\0]/g, (c) => `\\${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

type LdapClient = InstanceType<typeof import('ldapts').Client>;

/**
 * A connection to the configured server, encrypted as the configuration says
 * before anything is sent: LDAPS, or StartTLS (a refused upgrade is an error,
 * never a fall-back to plain). The certificate is verified against the node's
 * trusted CAs (system roots plus the certificate directory's `CAs/`), host
 * name included, unless `tls_skip_verify=on`.
 */
async function ldapConnect(cfg: LdapConfig, trust: ClientTrust): Promise<LdapClient> {
  const conn = ldapConnection(cfg);
  const tlsOptions: ConnectionOptions = cfg.tlsSkipVerify ? { rejectUnauthorized: false } : { ...trust.connectOptions(), host: conn.host };
  const { Client } = await import('ldapts');
  // ldapts opens TLS from the first byte whenever tlsOptions are given: only LDAPS gets them here
  const client = new Client({ url: conn.url, timeout: 10_000, connectTimeout: 10_000, ...(conn.mode === 'tls' ? { tlsOptions } : {}) });
  try {
    if (conn.mode === 'starttls') await client.startTLS({ ...tlsOptions });
    return client;
  } catch (err) {
    await client.unbind().catch(() => undefined);
    throw ldapTransportError(conn.url, conn.mode, err);
  }
}

/** A failed connection or TLS handshake, said plainly (a refused certificate names the remedy). */
function ldapTransportError(url: string, mode: string, err: unknown): SvcError {
  if (err instanceof SvcError) return err;
  const tls = tlsFailureReason(err);
  if (tls !== undefined) {
    return new SvcError('IDPCommunicationError', `the LDAP server ${url} failed the TLS check${mode === 'starttls' ? ' (StartTLS)' : ''}: ${tls}; trust its CA by adding it to the certificate directory's CAs/ (or set tls_skip_verify=on to skip verification)`);
  }
  return new SvcError('IDPCommunicationError', `the LDAP server ${url} could not be reached${mode === 'starttls' ? ' with StartTLS' : ''}: ${(err as Error).message}`);
}

/**
 * A connection bound as the configured lookup user. A server that cannot be
 * reached or trusted, and one that answers the bind with an LDAP error (a
 * wrong DN or password, TLS required), are IDPCommunicationError saying which.
 */
async function ldapLookupBind(cfg: LdapConfig, bindPassword: string, trust: ClientTrust): Promise<LdapClient> {
  const { url, mode } = ldapConnection(cfg);
  const lookup = await ldapConnect(cfg, trust);
  try {
    await lookup.bind(cfg.lookupBindDn, bindPassword);
    return lookup;
  } catch (err) {
    await lookup.unbind().catch(() => undefined);
    // an LDAP result is the server's answer; anything else (refused connection, timeout, TLS) is the way there
    const { ResultCodeError } = await import('ldapts');
    if (err instanceof ResultCodeError) throw new SvcError('IDPCommunicationError', `the LDAP lookup bind failed: the server ${url} refused ${cfg.lookupBindDn}: ${ldapResultText(err)}`);
    throw ldapTransportError(url, mode, err);
  }
}

/** What the results a lookup bind most often meets mean for the configuration. */
const BIND_RESULTS: Record<number, string> = {
  13: 'confidentiality required (the server takes binds over TLS only: use ldaps:// or server_starttls=on)',
  49: 'invalid credentials (check lookup_bind_dn and lookup_bind_password)',
};

/** An LDAP result said plainly: what it means, or its name and code, and the server's own words when it gave any. */
function ldapResultText(err: Error & { code: number }): string {
  const said = err.message.replace(/\s*Code: 0x[0-9a-f]+$/i, '').trim();
  const what = BIND_RESULTS[err.code] ?? `${err.name} (result code ${err.code})`;
  return said === '' ? what : `${what}; the server said: ${said}`;
}

/**
 * Whether the LDAP server `cfg` names is one this node can use: reached
 * (LDAPS or StartTLS as configured, the certificate verified against the
 * node's trusted CAs unless `tls_skip_verify=on`), accepting the lookup
 * bind, holding the user and group search bases (seen by the lookup bind)
 * and taking the user search filter, as sign-in needs all of these. Checked
 * when the server is configured, so a wrong address, an untrusted
 * certificate, a wrong lookup password or a mistyped base is refused there
 * and then rather than at every sign-in after.
 */
export async function checkLdapServer(cfg: LdapConfig, bindPassword: string, trust: ClientTrust): Promise<void> {
  const { url, mode } = ldapConnection(cfg);
  const lookup = await ldapLookupBind(cfg, bindPassword, trust);
  const { NoSuchObjectError, InvalidDNSyntaxError, ResultCodeError } = await import('ldapts');
  let step = '';
  try {
    const bases: [string, string | undefined][] = [['user_dn_search_base_dn', cfg.userDnSearchBaseDn], ['group_search_base_dn', cfg.groupSearchBaseDn]];
    for (const [key, base] of bases) {
      if (base === undefined) continue;
      step = `the LDAP ${key} "${base}"`;
      const missing = `${step} does not exist on the server ${url} (or the lookup bind cannot see it)`;
      try {
        const found = await lookup.search(base, { scope: 'base', filter: '(objectClass=*)', attributes: ['1.1'] });
        if (found.searchEntries.length === 0) throw new SvcError('IDPCommunicationError', missing);
      } catch (err) {
        if (err instanceof NoSuchObjectError) throw new SvcError('IDPCommunicationError', missing);
        if (err instanceof InvalidDNSyntaxError) throw new SvcError('IDPCommunicationError', `${step} is not a DN the server ${url} takes: ${ldapResultText(err)}`);
        throw err;
      }
    }
    // the user search once, for a name no one has: the server refusing the filter is said now; finding no one is fine
    step = `the LDAP user_dn_search_filter "${cfg.userDnSearchFilter}" (searched under "${cfg.userDnSearchBaseDn}")`;
    await lookup.search(cfg.userDnSearchBaseDn, { scope: 'sub', filter: cfg.userDnSearchFilter.replaceAll('%s', ldapEscape(LDAP_PROBE_USER)), sizeLimit: 1, attributes: ['1.1'] });
  } catch (err) {
    if (err instanceof SvcError) throw err;
    if (err instanceof ResultCodeError) throw new SvcError('IDPCommunicationError', `${step} was refused by the server ${url}: ${ldapResultText(err)}`);
    throw ldapTransportError(url, mode, err);
  } finally {
    await lookup.unbind().catch(() => undefined);
  }
}

/** The user name `checkLdapServer` searches for: one no directory is expected to hold, with characters the filter must escape. */
const LDAP_PROBE_USER = 'svc-configuration-check*()';

/** An LDAP user as the lookup bind finds it: its DN, the name the user search found it by, and its groups' DNs. */
export interface LdapUser {
  readonly dn: string;
  readonly username: string;
  readonly groups: readonly string[];
}

/**
 * The user search and the group search, as the lookup bind `lookup` sees
 * them: the one entry the user filter finds for `user` (undefined when none,
 * or more than one), and the groups the group filter finds for it. The one
 * resolution behind LDAP sign-in and LDAP users' access keys.
 */
async function findLdapUser(lookup: LdapClient, cfg: LdapConfig, user: string): Promise<LdapUser | undefined> {
  const found = await lookup.search(cfg.userDnSearchBaseDn, { scope: 'sub', filter: cfg.userDnSearchFilter.replaceAll('%s', ldapEscape(user)), attributes: ['dn'] });
  if (found.searchEntries.length !== 1) return undefined;
  const dn = found.searchEntries[0]!.dn;
  const groups: string[] = [];
  if (cfg.groupSearchBaseDn && cfg.groupSearchFilter) {
    const filter = cfg.groupSearchFilter.replaceAll('%d', ldapEscape(dn)).replaceAll('%s', ldapEscape(user));
    const g = await lookup.search(cfg.groupSearchBaseDn, { scope: 'sub', filter, attributes: ['dn'] });
    groups.push(...g.searchEntries.map((e) => e.dn));
  }
  return { dn, username: user, groups };
}

/** Whether a name given for an LDAP user is a DN (`uid=lena,ou=people,...`) rather than a user name. */
const looksLikeDn = (s: string) => /^[A-Za-z][A-Za-z0-9-]*=[^,]+(,|$)/.test(s);

/**
 * The user name behind a DN: the attribute the user filter matches `%s`
 * against (`(uid=%s)` reads `uid`) read from the entry, else the DN's first
 * value; undefined when the server holds no entry at the DN.
 */
async function usernameOfDn(lookup: LdapClient, cfg: LdapConfig, dn: string): Promise<string | undefined> {
  const { NoSuchObjectError, InvalidDNSyntaxError } = await import('ldapts');
  const attr = /\(([A-Za-z][A-Za-z0-9-]*)=%s\)/.exec(cfg.userDnSearchFilter)?.[1];
  try {
    const r = await lookup.search(dn, { scope: 'base', filter: '(objectClass=*)', attributes: attr ? [attr] : ['1.1'] });
    const entry = r.searchEntries[0];
    if (entry === undefined) return undefined;
    const v = attr === undefined ? undefined : Object.entries(entry).find(([k]) => k.toLowerCase() === attr.toLowerCase())?.[1];
    const first = Array.isArray(v) ? v[0] : v;
    if (typeof first === 'string' && first !== '') return first;
    return /^[^=]+=([^,]+)/.exec(dn)?.[1];
  } catch (err) {
    if (err instanceof NoSuchObjectError || err instanceof InvalidDNSyntaxError) return undefined;
    throw err;
  }
}

/**
 * Resolves an LDAP user by name or DN with the lookup bind, without its
 * password (for an access key created for it): the user search must find
 * exactly one entry, the same DN when a DN was given. An unknown user is
 * XSvcAdminNoSuchUser; a server that cannot be asked, IDPCommunicationError.
 */
export async function lookupLdapUser(cfg: LdapConfig, bindPassword: string, user: string, trust: ClientTrust): Promise<LdapUser> {
  const { url, mode } = ldapConnection(cfg);
  const lookup = await ldapLookupBind(cfg, bindPassword, trust);
  try {
    const name = looksLikeDn(user) ? await usernameOfDn(lookup, cfg, user) : user;
    const found = name === undefined ? undefined : await findLdapUser(lookup, cfg, name);
    if (found === undefined || (looksLikeDn(user) && found.dn.toLowerCase() !== user.toLowerCase())) {
      throw new SvcError('XSvcAdminNoSuchUser', `the LDAP user "${user}" was not found (or not uniquely) by the user search under "${cfg.userDnSearchBaseDn}"`);
    }
    return found;
  } catch (err) {
    if (err instanceof SvcError) throw err;
    const { ResultCodeError } = await import('ldapts');
    if (err instanceof ResultCodeError) throw new SvcError('IDPCommunicationError', `the LDAP search for "${user}" was refused by the server ${url}: ${ldapResultText(err)}`);
    throw ldapTransportError(url, mode, err);
  } finally {
    await lookup.unbind().catch(() => undefined);
  }
}

/** Checks a user name and password against the configured LDAP server; returns the identity and the policies mapped to its DN and groups. */
export async function verifyLdapUser(cfg: LdapConfig, bindPassword: string, mappings: Readonly<Record<string, string[]>>, user: string, password: string, trust: ClientTrust): Promise<ExternalIdentity> {
  if (password === '') throw new SvcError('AccessDenied', 'an empty LDAP password is refused (it would be an anonymous bind)');
  const lookup = await ldapLookupBind(cfg, bindPassword, trust);
  let found: LdapUser | undefined;
  try {
    found = await findLdapUser(lookup, cfg, user);
  } finally {
    await lookup.unbind().catch(() => undefined);
  }
  if (found === undefined) throw new SvcError('AccessDenied', `the LDAP user "${user}" was not found (or not uniquely)`);
  const { dn: userDn, groups } = found;
  const asUser = await ldapConnect(cfg, trust);
  try {
    await asUser.bind(userDn, password);
  } catch (err) {
    // the server's answer to the bind is a refusal of the user; a connection that failed (the
    // server gone, a certificate no longer trusted since the lookup) is the way there, said as such
    const { ResultCodeError } = await import('ldapts');
    if (err instanceof ResultCodeError) throw new SvcError('AccessDenied', 'the LDAP user name or password is wrong');
    const { url, mode } = ldapConnection(cfg);
    throw ldapTransportError(url, mode, err);
  } finally {
    await asUser.unbind().catch(() => undefined);
  }
  const policies = ldapPolicyNames(mappings, userDn, groups);
  if (policies.length === 0) throw new SvcError('AccessDenied', `no policy is attached to the LDAP user ${userDn} or its groups`);
  return { subject: user, policies, claims: { 'ldap:username': [user], 'ldap:user': [userDn], 'ldap:groups': [...groups] } };
}

/** Parses madmin's configuration text: `key=value key="quoted value" ...`. */
export function parseConfigText(text: string): Map<string, string> {
  const out = new Map<string, string>();
  const re = /\s*([A-Za-z0-9_]+)=(?:"((?:[^"\\]|\\.)*)"|(\S*))/gy;
  let m: RegExpExecArray | null;
  let pos = 0;
  while ((m = re.exec(text)) !== null) {
    out.set(m[1]!, m[2] !== undefined ? m[2].replace(/\\(.)/g, '$1') : m[3]!);
    pos = re.lastIndex;
  }
  if (text.slice(pos).trim() !== '') throw new SvcError('InvalidArgument', `cannot read the configuration near "${text.slice(pos, pos + 40)}"; write key=value pairs`);
  return out;
}
