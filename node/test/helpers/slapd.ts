/**
 * A real `slapd` (Debian's; CI installs it in `.ci/run`) for the LDAP
 * tests: started in a temp directory on ports of its own, plain LDAP and,
 * with a certificate pair, LDAPS and StartTLS too (`requireTls`: every
 * operation but StartTLS itself needs TLS, so a client that stays in clear
 * is refused). `populate` adds the directory the tests sign in against:
 * user `lena` (password `lena-pw`) in group `readers`.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ConnectionOptions } from 'node:tls';
import { freePort } from '../svc-process.ts';

export const LDAP_BASE = 'dc=svc,dc=test';
export const LDAP_ADMIN = { dn: `cn=admin,${LDAP_BASE}`, password: 'admin-pw' };
export const LDAP_USER = { name: 'lena', password: 'lena-pw', dn: `uid=lena,ou=people,${LDAP_BASE}` };
export const LDAP_GROUP = `cn=readers,ou=groups,${LDAP_BASE}`;

export interface Slapd {
  /** Plain LDAP (StartTLS offered when TLS is configured). */
  readonly ldapPort: number;
  /** LDAPS, when TLS is configured. */
  readonly ldapsPort: number | undefined;
  stop(): void;
}

/** The configuration keys (madmin's text) of a server for this directory, lookup bind and searches included. */
export function ldapConfigPairs(serverAddr: string): string[] {
  return [
    `server_addr=${serverAddr}`,
    `lookup_bind_dn=${LDAP_ADMIN.dn}`,
    `lookup_bind_password=${LDAP_ADMIN.password}`,
    `user_dn_search_base_dn=ou=people,${LDAP_BASE}`,
    'user_dn_search_filter=(uid=%s)',
    `group_search_base_dn=ou=groups,${LDAP_BASE}`,
    'group_search_filter=(&(objectClass=groupOfNames)(member=%d))',
  ];
}

export async function startSlapd(dir: string, o: { tls?: { certFile: string; keyFile: string }; requireTls?: boolean } = {}): Promise<Slapd> {
  if (!existsSync('/usr/sbin/slapd')) throw new Error("slapd is not installed: the LDAP tests need Debian's slapd (apt-get install slapd; CI does this in .ci/run)");
  const ldapPort = await freePort();
  const ldapsPort = o.tls ? await freePort() : undefined;
  mkdirSync(join(dir, 'db'), { recursive: true });
  const hash = execFileSync('/usr/sbin/slappasswd', ['-s', LDAP_ADMIN.password]).toString().trim();
  writeFileSync(
    join(dir, 'slapd.conf'),
    [
      'include /etc/ldap/schema/core.schema',
      'include /etc/ldap/schema/cosine.schema',
      'include /etc/ldap/schema/inetorgperson.schema',
      'modulepath /usr/lib/ldap',
      'moduleload back_mdb',
      `pidfile ${join(dir, 'slapd.pid')}`,
      ...(o.tls ? [`TLSCertificateFile ${o.tls.certFile}`, `TLSCertificateKeyFile ${o.tls.keyFile}`] : []),
      ...(o.requireTls ? ['security tls=1'] : []),
      'database mdb',
      `suffix "${LDAP_BASE}"`,
      `rootdn "${LDAP_ADMIN.dn}"`,
      `rootpw ${hash}`,
      `directory ${join(dir, 'db')}`,
      'access to attrs=userPassword by self read by anonymous auth by * none',
      'access to * by * read',
      '',
    ].join('\n'),
  );
  const urls = [`ldap://127.0.0.1:${ldapPort}/`, ...(ldapsPort ? [`ldaps://127.0.0.1:${ldapsPort}/`] : [])].join(' ');
  const child = spawn('/usr/sbin/slapd', ['-d', '0', '-f', join(dir, 'slapd.conf'), '-h', urls], { stdio: 'ignore' });
  const s: Slapd = { ldapPort, ldapsPort, stop: () => void child.kill('SIGTERM') };
  // up when a (StartTLS-upgraded, when TLS is required) admin bind succeeds
  const { Client } = await import('ldapts');
  for (let i = 0; ; i++) {
    const client = new Client({ url: `ldap://127.0.0.1:${ldapPort}` });
    try {
      if (o.requireTls) await client.startTLS({ rejectUnauthorized: false });
      await client.bind(LDAP_ADMIN.dn, LDAP_ADMIN.password);
      await client.unbind();
      return s;
    } catch (err) {
      await client.unbind().catch(() => undefined);
      if (i >= 100 || child.exitCode !== null) {
        s.stop();
        throw new Error(`slapd did not start: ${(err as Error).message}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** Adds the base, `ou=people`, `ou=groups`, user lena and group readers (over StartTLS when `tls` is given). */
export async function populate(s: Slapd, tls?: ConnectionOptions): Promise<void> {
  const { Client } = await import('ldapts');
  const client = new Client({ url: `ldap://127.0.0.1:${s.ldapPort}` });
  if (tls) await client.startTLS(tls);
  await client.bind(LDAP_ADMIN.dn, LDAP_ADMIN.password);
  await client.add(LDAP_BASE, { objectClass: ['top', 'dcObject', 'organization'], o: 'svc', dc: 'svc' });
  await client.add(`ou=people,${LDAP_BASE}`, { objectClass: ['organizationalUnit'], ou: 'people' });
  await client.add(`ou=groups,${LDAP_BASE}`, { objectClass: ['organizationalUnit'], ou: 'groups' });
  await client.add(LDAP_USER.dn, { objectClass: ['inetOrgPerson'], uid: LDAP_USER.name, cn: 'Lena', sn: 'L', userPassword: LDAP_USER.password });
  await client.add(LDAP_GROUP, { objectClass: ['groupOfNames'], cn: 'readers', member: [LDAP_USER.dn] });
  await client.unbind();
}
