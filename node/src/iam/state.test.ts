import { describe, expect, it } from 'vitest';
import { code } from '../../test/helpers/error-code.ts';
import { IamIndex } from './resolve.ts';
import { sealSessionToken } from './session-token.ts';
import {
  addAccessKey,
  attachPolicies,
  decodeDoc,
  emptyDoc,
  encodeDoc,
  type IamDoc,
  ldapKindOf,
  mapLdapPolicies,
  putPolicy,
  removePolicy,
  removeUser,
  type Secret,
  setGroupStatus,
  setUser,
  setUserStatus,
  updateGroupMembers,
} from './state.ts';

const plain = (s: string): Secret => ({ v: 'plain', s });
const KEY = Buffer.alloc(32, 7);
const ctx = { now: 1_000_000, rootAccessKey: 'root' };
const ROOT = { accessKey: 'root', secretKey: 'root-secret' };

function fresh(): IamDoc {
  return emptyDoc(plain(KEY.toString('base64')), 0);
}

const index = (d: IamDoc) => new IamIndex({ doc: decodeDoc(encodeDoc(d), 'test'), open: (s) => s.s, root: () => ROOT });

describe('identity store document', () => {
  it("an LDAP user's access key: needs a mapped policy when created, takes the mappings in force at each request, outlives svc users of the same name", () => {
    const d = fresh();
    d.idp.ldap = { serverAddr: 'ldap://x', lookupBindDn: 'cn=svc,dc=x', lookupBindPassword: plain('p'), userDnSearchBaseDn: 'ou=people,dc=x', userDnSearchFilter: '(uid=%s)' };
    const dn = 'uid=lena,ou=people,dc=x';
    const owner = { dn, username: 'lena', groups: ['cn=Readers,ou=groups,dc=x'] };
    expect(code(() => addAccessKey(d, ctx, { accessKey: 'AKLENA1', secret: plain('lena-key-secret'), parent: dn, ldap: owner }))).toBe('XSvcAdminLdapUserNoPolicy');
    expect(code(() => addAccessKey(d, ctx, { accessKey: 'AKLENA1', secret: plain('lena-key-secret'), parent: 'lena', ldap: owner }))).toBe('InvalidArgument');
    expect(d.accessKeys).toEqual({});
    mapLdapPolicies(d, 'cn=readers,ou=groups,dc=x', ['readonly'], false, 'group');
    addAccessKey(d, ctx, { accessKey: 'AKLENA1', secret: plain('lena-key-secret'), parent: dn, ldap: owner });
    expect(index(d).lookup('AKLENA1')).toMatchObject({ secretKey: 'lena-key-secret', principal: { canonicalId: 'ldap:lena', userName: 'lena', credential: 'accesskey', claims: { 'ldap:user': [dn] } } });
    expect(index(d).lookup('AKLENA1')!.principal.policies).toHaveLength(1);
    // detached from the group: no policy, without the key changing; mapped to the user's DN: back
    mapLdapPolicies(d, 'cn=readers,ou=groups,dc=x', ['readonly'], true);
    expect(index(d).lookup('AKLENA1')!.principal.policies).toHaveLength(0);
    mapLdapPolicies(d, dn, ['readonly', 'writeonly'], false, 'user');
    expect(index(d).lookup('AKLENA1')!.principal.policies).toHaveLength(2);
    // an svc user removed takes its keys, never an LDAP user's key whose DN is spelled like its name
    setUser(d, ctx, dn, plain('same-name-secret'), 'enabled');
    removeUser(d, dn);
    expect(Object.keys(d.accessKeys)).toEqual(['AKLENA1']);
    // the LDAP provider off or removed: the key does not resolve
    d.idp.ldap = { ...d.idp.ldap, disabled: true };
    expect(index(d).lookup('AKLENA1')).toBeUndefined();
    delete d.idp.ldap;
    expect(index(d).lookup('AKLENA1')).toBeUndefined();
    // a stored owner that is not whole is refused as corrupt
    const bad = JSON.parse(Buffer.from(encodeDoc(d)).toString()) as IamDoc;
    bad.accessKeys['AKLENA1']!.ldap = { dn: 'uid=other,dc=x', username: 'lena', groups: [] };
    expect(code(() => decodeDoc(Buffer.from(JSON.stringify(bad)), 'test'))).toBe('FileCorrupt');
  });

  it('mutations refuse what would break it and change nothing then', () => {
    const d = fresh();
    putPolicy(d, ctx, 'p1', JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: 's3:GetObject', Resource: '*' }] }));
    setUser(d, ctx, 'alice', plain('alice-secret'), 'enabled', ['p1']);
    expect(code(() => setUser(d, ctx, 'root', plain('x'), 'enabled'))).toBe('XSvcAdminAccessKeyExists');
    expect(code(() => setUser(d, ctx, 'bob', plain('x'), 'enabled', ['nope']))).toBe('XSvcAdminNoSuchPolicy');
    expect(code(() => putPolicy(d, ctx, 'readonly', '{}'))).toBe('XSvcAdminCannedPolicy');
    expect(code(() => putPolicy(d, ctx, 'bad', '{"Statement":'))).toBe('MalformedPolicy');
    expect(code(() => removePolicy(d, 'p1'))).toBe('XSvcAdminPolicyInUse');
    // an LDAP mapping holds it too
    putPolicy(d, ctx, 'p2', JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: 's3:GetObject', Resource: '*' }] }));
    mapLdapPolicies(d, 'CN=Readers,DC=x', ['p2'], false, 'group');
    expect(() => removePolicy(d, 'p2')).toThrow(/LDAP group cn=readers,dc=x/);
    mapLdapPolicies(d, 'cn=readers,dc=x', ['p2'], true);
    expect(d.ldapKinds).toEqual({});
    // a mapping an earlier release stored without its kind: a group when it lies below the group search base only
    d.ldapPolicies['cn=old-readers,ou=groups,dc=x'] = ['p2'];
    d.ldapPolicies['uid=old-user,ou=people,dc=x'] = ['p2'];
    expect(ldapKindOf(d, 'cn=old-readers,ou=groups,dc=x')).toBe('user'); // no LDAP configured: as before
    d.idp.ldap = { serverAddr: 'ldap://x', lookupBindDn: 'cn=svc,dc=x', lookupBindPassword: plain('p'), userDnSearchBaseDn: 'ou=People,dc=x', userDnSearchFilter: '(uid=%s)', groupSearchBaseDn: 'ou=Groups,dc=x', groupSearchFilter: '(member=%d)' };
    expect(ldapKindOf(d, 'cn=old-readers,ou=groups,dc=x')).toBe('group');
    expect(ldapKindOf(d, 'uid=old-user,ou=people,dc=x')).toBe('user');
    expect(() => removePolicy(d, 'p2')).toThrow(/LDAP group cn=old-readers,ou=groups,dc=x, LDAP user uid=old-user,ou=people,dc=x/);
    d.idp.ldap = { ...d.idp.ldap, groupSearchBaseDn: 'dc=x', userDnSearchBaseDn: 'dc=x' };
    expect(ldapKindOf(d, 'cn=old-readers,ou=groups,dc=x')).toBe('user'); // both bases the same: cannot tell, as before
    // recorded kinds win
    d.ldapKinds = { ...d.ldapKinds, 'cn=old-readers,ou=groups,dc=x': 'group' };
    expect(ldapKindOf(d, 'cn=old-readers,ou=groups,dc=x')).toBe('group');
    delete d.ldapPolicies['cn=old-readers,ou=groups,dc=x'];
    delete d.ldapPolicies['uid=old-user,ou=people,dc=x'];
    delete d.ldapKinds!['cn=old-readers,ou=groups,dc=x'];
    delete d.idp.ldap;
    removePolicy(d, 'p2');
    updateGroupMembers(d, ctx, 'devs', ['alice'], false);
    expect(code(() => updateGroupMembers(d, ctx, 'devs', [], true))).toBe('XSvcAdminGroupNotEmpty');
    expect(code(() => updateGroupMembers(d, ctx, 'devs', ['ghost'], false))).toBe('XSvcAdminNoSuchUser');
    expect(code(() => attachPolicies(d, ctx, { user: 'alice' }, ['p1'], false))).toBe('InvalidArgument');
    addAccessKey(d, ctx, { accessKey: 'AKALICE1', secret: plain('ak-secret-1'), parent: 'alice' });
    expect(code(() => addAccessKey(d, ctx, { accessKey: 'alice', secret: plain('x'), parent: 'alice' }))).toBe('XSvcAdminAccessKeyExists');
    expect(code(() => addAccessKey(d, ctx, { accessKey: 'AKOLD123', secret: plain('x'), parent: 'alice', expiresAt: ctx.now - 1 }))).toBe('InvalidArgument');
    // removing a user takes its access keys and memberships with it
    removeUser(d, 'alice');
    expect(d.accessKeys['AKALICE1']).toBeUndefined();
    expect(d.groups['devs']!.members).toEqual([]);
  });

  it('resolution: group policies apply while the group is enabled; disabled users, their keys and sessions do not resolve', () => {
    const d = fresh();
    putPolicy(d, ctx, 'gp', JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: 's3:PutObject', Resource: '*' }] }));
    setUser(d, ctx, 'alice', plain('alice-secret'), 'enabled', ['readonly']);
    updateGroupMembers(d, ctx, 'writers', ['alice'], false);
    attachPolicies(d, ctx, { group: 'writers' }, ['gp'], false);
    addAccessKey(d, ctx, { accessKey: 'AKALICE1', secret: plain('ak-secret-1'), parent: 'alice', expiresAt: ctx.now + 60_000 });
    const token = sealSessionToken(KEY, { ak: 'ASIATEMP', sk: 'temp-secret', iat: ctx.now, exp: ctx.now + 900_000, kind: 'assume-role', parent: 'alice' });
    let ix = index(d);
    expect(ix.lookup('alice')!.principal.policies).toHaveLength(2);
    expect(ix.lookup('AKALICE1')).toMatchObject({ secretKey: 'ak-secret-1', expiresAt: ctx.now + 60_000, principal: { canonicalId: 'alice', credential: 'accesskey' } });
    expect(ix.lookup('ASIATEMP', token)).toMatchObject({ secretKey: 'temp-secret', sessionToken: token, principal: { canonicalId: 'alice', credential: 'sts' } });
    // a token for another access key, a forged token: unknown
    expect(ix.lookup('ASIAOTHER', token)).toBeUndefined();
    expect(ix.lookup('ASIATEMP', `${token.slice(0, -2)}AA`)).toBeUndefined();
    setGroupStatus(d, ctx, 'writers', 'disabled');
    ix = index(d);
    expect(ix.lookup('alice')!.principal.policies).toHaveLength(1);
    setUserStatus(d, ctx, 'alice', 'disabled');
    ix = index(d);
    expect([ix.lookup('alice'), ix.lookup('AKALICE1'), ix.lookup('ASIATEMP', token)]).toEqual([undefined, undefined, undefined]);
    // the root resolves from its own source; a token on the root's key is refused
    expect(ix.lookup('root')!.principal.root).toBe(true);
    expect(ix.lookup('root', token)).toBeUndefined();
  });

  it('a policy naming an unknown action is refused when written; one stored before that check still loads and is listed', () => {
    const d = fresh();
    const typo = JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: ['s3:GetObject', 's3:ListBuckets'], Resource: '*' }] });
    expect(code(() => putPolicy(d, ctx, 'typo', typo))).toBe('MalformedPolicy');
    expect(d.policies['typo']).toBeUndefined();
    setUser(d, ctx, 'alice', plain('alice-secret'), 'enabled');
    expect(code(() => addAccessKey(d, ctx, { accessKey: 'AKALICE1', secret: plain('s'), parent: 'alice', policy: typo }))).toBe('MalformedPolicy');
    expect(d.accessKeys['AKALICE1']).toBeUndefined();
    // as an older version would have stored them
    d.policies['typo'] = { text: typo, createdAt: ctx.now, updatedAt: ctx.now };
    d.users['alice']!.policies = ['typo'];
    d.accessKeys['AKALICE1'] = { secret: plain('ak-secret-1'), parent: 'alice', status: 'enabled', createdAt: ctx.now, updatedAt: ctx.now, policy: typo };
    const ix = index(d);
    expect(ix.lookup('alice')!.principal.policies![0]!.statements[0]!.action).toEqual(['s3:GetObject', 's3:ListBuckets']);
    expect(ix.lookup('AKALICE1')).toMatchObject({ secretKey: 'ak-secret-1' });
    expect(ix.unknownActions()).toEqual([
      { policy: 'typo', actions: ['s3:ListBuckets'] },
      { accessKey: 'AKALICE1', actions: ['s3:ListBuckets'] },
    ]);
  });

  it('a document of another version is refused, not guessed', () => {
    expect(code(() => decodeDoc(Buffer.from('{"version":2,"generation":1,"stsKey":{}}'), 'p'))).toBe('FileCorrupt');
    expect(code(() => decodeDoc(Buffer.from('not json'), 'p'))).toBe('FileCorrupt');
  });
});
