import { describe, expect, it } from 'vitest';
import type { LdapUser } from '../api/sts/providers.ts';
import { addAccessKey, decodeDoc, emptyDoc, encodeDoc, type IamDoc, mapLdapPolicies, type Secret } from '../iam/state.ts';
import { ManualClock } from '../util/clock.ts';
import { SvcError } from '../util/errors.ts';
import { createLogger } from '../util/logger.ts';
import { recheckLdapKeys } from './ldap-key-recheck.ts';

const plain = (s: string): Secret => ({ v: 'plain', s });
const LENA = 'uid=lena,ou=people,dc=x';
const OTTO = 'uid=otto,ou=people,dc=x';
const READERS = 'cn=readers,ou=groups,dc=x';

/** A store over one document: `mutate` applies to a copy and installs it, as the identity service does. */
function store() {
  let doc: IamDoc = emptyDoc(plain(Buffer.alloc(32).toString('base64')), 0);
  doc.idp.ldap = { serverAddr: 'ldap://x', lookupBindDn: 'cn=svc,dc=x', lookupBindPassword: plain('pw'), userDnSearchBaseDn: 'ou=people,dc=x', userDnSearchFilter: '(uid=%s)' };
  const ctx = { now: 1_000, rootAccessKey: 'root' };
  mapLdapPolicies(doc, READERS, ['readonly'], false, 'group');
  addAccessKey(doc, ctx, { accessKey: 'AKLENA', secret: plain('lena-secret'), parent: LENA, ldap: { dn: LENA, username: 'lena', groups: [READERS] } });
  addAccessKey(doc, ctx, { accessKey: 'AKOTTO', secret: plain('otto-secret'), parent: OTTO, ldap: { dn: OTTO, username: 'otto', groups: [READERS] } });
  let writes = 0;
  return {
    writes: () => writes,
    iam: {
      loaded: true,
      doc: () => doc,
      open: (s: Secret) => s.s,
      mutate: async <R>(_op: string, _actor: unknown, _target: unknown, fn: (d: IamDoc, c: { now: number; rootAccessKey: string }) => R): Promise<R> => {
        const d = decodeDoc(encodeDoc(doc), 'test');
        const r = fn(d, { now: 2_000, rootAccessKey: 'root' });
        doc = d;
        writes++;
        return r;
      },
    },
  };
}

const logger = createLogger('silent');
const found = (dn: string, groups: string[]): LdapUser => ({ dn, username: dn.slice(4, dn.indexOf(',')), groups });

describe('re-check of LDAP users’ access keys', () => {
  it('a user gone: its keys disabled with the reason, never removed; groups refreshed; nothing written when nothing changed', async () => {
    const s = store();
    const dir = new Map<string, LdapUser>([[LENA, found(LENA, [READERS])], [OTTO, found(OTTO, [READERS])]]);
    const lookup = async (_cfg: unknown, pw: string, user: string) => {
      expect(pw).toBe('pw');
      const u = dir.get(user);
      if (u === undefined) throw new SvcError('XSvcAdminNoSuchUser', 'not found');
      return u;
    };
    const o = { iam: s.iam as never, lookup, clock: new ManualClock(5_000), logger };
    expect(await recheckLdapKeys(o)).toEqual({ disabled: [], regrouped: [] });
    expect(s.writes()).toBe(0);
    dir.delete(OTTO);
    dir.set(LENA, found(LENA, []));
    expect(await recheckLdapKeys(o)).toEqual({ disabled: ['AKOTTO'], regrouped: ['AKLENA'] });
    const d = s.iam.doc();
    expect(d.accessKeys['AKOTTO']).toMatchObject({ status: 'disabled', disabledReason: expect.stringContaining(`the LDAP user ${OTTO} was no longer found`) });
    expect(d.accessKeys['AKLENA']).toMatchObject({ status: 'enabled', ldap: { groups: [] } });
    // the next round finds nothing to change
    expect(await recheckLdapKeys(o)).toEqual({ disabled: [], regrouped: [] });
    expect(s.writes()).toBe(1);
  });

  it('a directory that cannot be asked changes nothing (the round fails); no LDAP provider in force: nothing asked', async () => {
    const s = store();
    let asked = 0;
    const down = async (): Promise<LdapUser> => {
      asked++;
      throw new SvcError('IDPCommunicationError', 'the LDAP server could not be reached');
    };
    const o = { iam: s.iam as never, lookup: down, clock: new ManualClock(5_000), logger };
    await expect(recheckLdapKeys(o)).rejects.toThrow(/could not be reached/);
    expect(s.writes()).toBe(0);
    expect(Object.values(s.iam.doc().accessKeys).map((k) => k.status)).toEqual(['enabled', 'enabled']);
    s.iam.doc().idp.ldap!.disabled = true;
    asked = 0;
    expect(await recheckLdapKeys(o)).toEqual({ disabled: [], regrouped: [] });
    expect(asked).toBe(0);
  });
});
