import { describe, expect, it } from 'vitest';
import { parseConfigText } from '../api/sts/providers.ts';
import { changesReach, configInfo, ldapConfigFrom, ldapConnection, openIdConfigFrom } from './idp-config.ts';
import type { SvcError } from '../util/errors.ts';
import type { LdapConfig, Secret } from './state.ts';

const seal = (s: string): Secret => ({ v: 'plain', s });
const LDAP = 'lookup_bind_dn="cn=admin,dc=x" lookup_bind_password=pw user_dn_search_base_dn="dc=x" user_dn_search_filter="(uid=%s)"';

describe('LDAP connection modes', () => {
  it.each([
    ['ldaps://ldap.example:6636', {}, { url: 'ldaps://ldap.example:6636', mode: 'tls' }],
    ['ldaps://ldap.example', {}, { url: 'ldaps://ldap.example:636', mode: 'tls' }],
    ['ldap://ldap.example', {}, { url: 'ldap://ldap.example:389', mode: 'plain' }],
    ['ldap://ldap.example:1389', { startTls: true }, { url: 'ldap://ldap.example:1389', mode: 'starttls' }],
    // MinIO's host:port form: TLS unless told otherwise
    ['ldap.example:636', {}, { url: 'ldaps://ldap.example:636', mode: 'tls' }],
    ['ldap.example', {}, { url: 'ldaps://ldap.example:636', mode: 'tls' }],
    ['ldap.example:389', { startTls: true }, { url: 'ldap://ldap.example:389', mode: 'starttls' }],
    ['ldap.example', { serverInsecure: true }, { url: 'ldap://ldap.example:389', mode: 'plain' }],
    ['127.0.0.1:1636', {}, { url: 'ldaps://127.0.0.1:1636', mode: 'tls', host: '127.0.0.1' }],
    ['[::1]:1636', {}, { url: 'ldaps://[::1]:1636', mode: 'tls', host: '::1' }],
  ] as const)('%s %o', (serverAddr, flags, want) => {
    expect(ldapConnection({ serverAddr, ...flags })).toMatchObject(want);
  });

  it.each([
    ['ldaps://ldap.example', { startTls: true }, /TLS already/],
    ['ldap.example', { startTls: true, serverInsecure: true }, /contradict/],
    ['http://ldap.example', {}, /not http/],
    ['ldap://ldap.example/dc=x', {}, /not host/],
  ] as const)('%s %o is refused', (serverAddr, flags, msg) => {
    expect(() => ldapConnection({ serverAddr, ...flags })).toThrow(msg);
  });
});

describe('configuration text', () => {
  it('an LDAP configuration: flags on/off, unknown keys and bad values refused', () => {
    const cfg = ldapConfigFrom(parseConfigText(`server_addr=ldap.example:389 server_starttls=on ${LDAP}`), seal);
    expect(cfg).toMatchObject({ serverAddr: 'ldap.example:389', startTls: true, lookupBindPassword: { v: 'plain', s: 'pw' } });
    expect(cfg.tlsSkipVerify).toBeUndefined();
    expect(() => ldapConfigFrom(parseConfigText(`server_addr=x server_startls=on ${LDAP}`), seal)).toThrow(/unknown ldap configuration key server_startls/);
    expect(() => ldapConfigFrom(parseConfigText(`server_addr=x tls_skip_verify=yes ${LDAP}`), seal)).toThrow(/"on" or "off"/);
    expect(() => ldapConfigFrom(parseConfigText('server_addr=x'), seal)).toThrow(/required/);
  });

  it('an update keeps the keys it does not name, secrets included; an empty value clears an optional key', () => {
    const prev = ldapConfigFrom(parseConfigText(`server_addr=ldaps://a group_search_base_dn=dc=g group_search_filter=(member=%d) ${LDAP}`), seal);
    const next = ldapConfigFrom(parseConfigText('server_addr=ldap://b server_starttls=on group_search_filter=(uniqueMember=%d)'), seal, prev);
    expect(next).toMatchObject({ serverAddr: 'ldap://b', startTls: true, lookupBindDn: 'cn=admin,dc=x', lookupBindPassword: { s: 'pw' }, groupSearchBaseDn: 'dc=g', groupSearchFilter: '(uniqueMember=%d)' });
    const noGroups = ldapConfigFrom(parseConfigText('group_search_base_dn= group_search_filter='), seal, next);
    expect(noGroups.groupSearchBaseDn).toBeUndefined();
    expect(noGroups.groupSearchFilter).toBeUndefined();
    const oidc = openIdConfigFrom(parseConfigText('config_url=https://idp/.well-known/openid-configuration client_id=a,b client_secret=s3cret'), seal);
    const oidc2 = openIdConfigFrom(parseConfigText('role_policy=readonly'), seal, oidc);
    expect(oidc2).toEqual({ issuer: 'https://idp/.well-known/openid-configuration', clientIds: ['a', 'b'], claimName: 'policy', rolePolicy: 'readonly', clientSecret: { v: 'plain', s: 's3cret' } });
  });

  it('an update is checked against the provider when it sets a key the connection depends on', () => {
    for (const k of ['server_addr', 'lookup_bind_dn', 'lookup_bind_password', 'server_starttls', 'server_insecure', 'tls_skip_verify', 'enable']) expect(changesReach('ldap', new Map([[k, 'x']])), k).toBe(true);
    // where and how users and groups are searched: the server says whether the bases exist and takes the user filter
    for (const k of ['user_dn_search_base_dn', 'user_dn_search_filter', 'group_search_base_dn', 'group_search_filter']) expect(changesReach('ldap', new Map([[k, 'x']])), k).toBe(true);
    expect(changesReach('openid', parseConfigText('config_url=https://idp/x'))).toBe(true);
    expect(changesReach('openid', parseConfigText('enable=on'))).toBe(true);
    expect(changesReach('openid', parseConfigText('client_id=a role_policy=readonly'))).toBe(false);
  });

  it('LDAP searches no sign-in could run are refused, naming the key', () => {
    const ldap = (text: string, prev?: LdapConfig) => ldapConfigFrom(parseConfigText(`server_addr=ldaps://a ${LDAP} ${text}`), seal, prev);
    const refused = (text: string, prev?: LdapConfig) => {
      try {
        ldap(text, prev);
      } catch (err) {
        expect((err as SvcError).code).toBe('InvalidArgument');
        return (err as Error).message;
      }
      throw new Error(`${text}: accepted`);
    };
    // a filter without its placeholder
    expect(refused('user_dn_search_filter=(uid=lena)')).toMatch(/^user_dn_search_filter "\(uid=lena\)" has no %s/);
    expect(refused('group_search_base_dn=dc=g group_search_filter=(objectClass=groupOfNames)')).toMatch(/^group_search_filter "\(objectClass=groupOfNames\)" has neither %d nor %s/);
    // not a filter, by ldapts's own parser
    expect(refused('user_dn_search_filter=(uid=%s')).toMatch(/^user_dn_search_filter "\(uid=%s" is not an LDAP filter .*Unbalanced parens/);
    expect(refused('user_dn_search_filter="(uid=%s))"')).toMatch(/^user_dn_search_filter .* is not an LDAP filter/);
    expect(refused('user_dn_search_filter="(uid=%s)(cn=%s)"')).toMatch(/^user_dn_search_filter .* is not an LDAP filter/);
    // one ldapts would close itself: the text kept is the filter sent, so it is refused here
    expect(refused('user_dn_search_filter="(&(objectClass=person)(uid=%s)"')).toMatch(/^user_dn_search_filter .* is not an LDAP filter .*unbalanced parentheses: 3 "\(" and 2 "\)"/);
    expect(refused('group_search_base_dn=dc=g group_search_filter="(|(member=%d)(memberUid=%s)))"')).toMatch(/^group_search_filter .* is not an LDAP filter/);
    // the group search takes both keys or neither, on an update too
    expect(refused('group_search_base_dn=dc=g')).toMatch(/^group_search_base_dn is set but group_search_filter is not: .*together/);
    expect(refused('group_search_filter=(member=%d)')).toMatch(/^group_search_filter is set but group_search_base_dn is not/);
    const withGroups = ldap('group_search_base_dn=dc=g group_search_filter=(member=%d)');
    expect(() => ldapConfigFrom(parseConfigText('group_search_filter='), seal, withGroups)).toThrow(/group_search_base_dn is set but group_search_filter is not/);
    // what sign-in can run is taken, %s and %d anywhere in the filter
    expect(ldap('user_dn_search_filter="(&(objectClass=inetOrgPerson)(|(uid=%s)(mail=%s)))" group_search_base_dn=dc=g group_search_filter="(|(member=%d)(memberUid=%s))"')).toMatchObject({
      userDnSearchFilter: '(&(objectClass=inetOrgPerson)(|(uid=%s)(mail=%s)))',
      groupSearchFilter: '(|(member=%d)(memberUid=%s))',
    });
    expect(ldap('user_dn_search_filter=uid=%s').userDnSearchFilter).toBe('uid=%s'); // ldapts puts the parentheses around a bare item
  });

  it('info shows every key but never a secret', () => {
    const cfg = ldapConfigFrom(parseConfigText(`server_addr=ldaps://a ${LDAP}`), seal);
    const info = configInfo('ldap', cfg);
    expect(info.find((l) => l.key === 'lookup_bind_password')?.value).toBe('*redacted*');
    expect(JSON.stringify(info)).not.toContain('"pw"');
    expect(info.map((l) => l.key)).toContain('tls_skip_verify');
    const oidc = configInfo('openid', openIdConfigFrom(parseConfigText('config_url=https://idp/x client_id=a'), seal));
    expect(oidc.map((l) => l.key)).toEqual(['config_url', 'client_id', 'claim_name', 'enable']);
    // the console's sign-in keys; a redirect that is not the console's callback is refused
    const sso = openIdConfigFrom(parseConfigText('config_url=https://idp/x client_id=a scopes=profile,email redirect_uri=https://s3.example/svc/console/sso/callback display_name="Corp SSO"'), seal);
    expect(sso).toMatchObject({ scopes: ['profile', 'email'], redirectUri: 'https://s3.example/svc/console/sso/callback', displayName: 'Corp SSO' });
    expect(() => openIdConfigFrom(parseConfigText('config_url=https://idp/x client_id=a redirect_uri=https://evil.example/'), seal)).toThrow(/console/);
  });
});
