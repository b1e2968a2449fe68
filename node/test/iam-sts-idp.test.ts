/**
 * STS against real identity providers: `AssumeRoleWithWebIdentity` with a
 * token issued by a running OpenID Connect provider (npm `oidc-provider`,
 * started here on a loopback port: client-credentials JWTs signed with its
 * keys, discovered through its `.well-known` document), and
 * `AssumeRoleWithLDAPIdentity` against a running `slapd` (Debian's,
 * started here in a temp directory on its own port). Each yields
 * credentials that work, are narrowed to the mapped policies, and fail past
 * their expiry; forged or wrong inputs are refused.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { join } from 'node:path';
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { AssumeRoleWithWebIdentityCommand, STSClient } from '@aws-sdk/client-sts';
import Provider from 'oidc-provider';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminClient } from '../src/cli/admin/client.ts';
import { freePort, runSvc, type SvcRun, tempDir } from './svc-process.ts';

const ROOT = { accessKey: 'idproot', secretKey: 'idproot-secret-key' };
let srv: SvcRun;
let work: string;
let endpoint: string;
let admin: AdminClient;

const s3 = (ak: string, sk: string, token?: string, offsetMs = 0) =>
  new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, maxAttempts: 1, systemClockOffset: offsetMs, credentials: { accessKeyId: ak, secretAccessKey: sk, ...(token ? { sessionToken: token } : {}) } });

async function errorCode(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    if (err instanceof Error && '$metadata' in err) return err.name;
    throw err;
  }
  return 'OK';
}

/** An unsigned STS form POST (web identity, LDAP); the XML answer. */
async function sts(form: Record<string, string>): Promise<{ status: number; text: string; code: string | undefined; cred?: { ak: string; sk: string; token: string; expiration: Date } }> {
  const r = await fetch(endpoint, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ Version: '2011-06-15', ...form }).toString() });
  const text = await r.text();
  const pick = (tag: string) => new RegExp(`<${tag}>([^<]*)</${tag}>`).exec(text)?.[1];
  const ak = pick('AccessKeyId');
  return {
    status: r.status,
    text,
    code: pick('Code'),
    ...(ak ? { cred: { ak, sk: pick('SecretAccessKey')!, token: pick('SessionToken')!, expiration: new Date(pick('Expiration')!) } } : {}),
  };
}

beforeAll(async () => {
  work = tempDir('idp');
  for (let i = 1; i <= 4; i++) mkdirSync(join(work, `d${i}`));
  srv = await runSvc(['server', join(work, 'd{1...4}')], { SVC_ACCESS_KEY: ROOT.accessKey, SVC_SECRET_KEY: ROOT.secretKey });
  expect(await srv.started).toBe(true);
  endpoint = `http://127.0.0.1:${srv.port}`;
  for (let i = 0; i < 200 && (await fetch(`${endpoint}/health/ready`).catch(() => undefined))?.status !== 200; i++) await new Promise((r) => setTimeout(r, 100));
  admin = new AdminClient({ name: 'idp', url: endpoint, ...ROOT });
  const root = s3(ROOT.accessKey, ROOT.secretKey);
  for (const b of ['idp-data', 'idp-other']) await root.send(new CreateBucketCommand({ Bucket: b }));
  await root.send(new PutObjectCommand({ Bucket: 'idp-data', Key: 'k', Body: 'data' }));
  await root.send(new PutObjectCommand({ Bucket: 'idp-other', Key: 'k', Body: 'other' }));
  await admin.request('PUT', 'v3/add-canned-policy', { name: 'read-idp-data' }, JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: ['s3:GetObject'], Resource: ['arn:aws:s3:::idp-data/*'] }] }));
}, 60_000);

afterAll(async () => {
  await srv?.stop();
});

describe('AssumeRoleWithWebIdentity against a running OpenID Connect provider', () => {
  let oidc: Server;
  let issuer: string;

  beforeAll(async () => {
    const port = await freePort();
    issuer = `http://127.0.0.1:${port}`;
    const provider = new Provider(issuer, {
      clients: [
        { client_id: 'svc-app', client_secret: 'svc-app-secret', grant_types: ['client_credentials'], redirect_uris: [], response_types: [] },
        { client_id: 'other-app', client_secret: 'other-app-secret', grant_types: ['client_credentials'], redirect_uris: [], response_types: [] },
      ],
      features: {
        devInteractions: { enabled: false },
        clientCredentials: { enabled: true },
        resourceIndicators: {
          enabled: true,
          defaultResource: () => 'urn:svc',
          useGrantedResource: () => true,
          // the token's audience is the client it was issued to
          getResourceServerInfo: (_ctx, _resource, client) => ({ scope: 'openid', audience: client.clientId, accessTokenFormat: 'jwt', accessTokenTTL: 600, jwt: { sign: { alg: 'RS256' } } }),
        },
      },
      extraTokenClaims: (ctx) => ({ policy: ctx.oidc.client?.clientId === 'svc-app' ? 'read-idp-data' : '', preferred_username: `${ctx.oidc.client?.clientId ?? 'x'}-user` }),
    });
    oidc = provider.listen(port);
    await new Promise((r) => setTimeout(r, 50));
  });

  afterAll(async () => {
    await new Promise((r) => oidc?.close(r));
  });

  const tokenFor = async (client: string, secret: string): Promise<string> => {
    const r = await fetch(`${issuer}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${client}:${secret}`).toString('base64')}` },
      body: 'grant_type=client_credentials&scope=openid',
    });
    const j = (await r.json()) as { access_token?: string };
    if (!j.access_token) throw new Error(`no token from the provider: ${JSON.stringify(j)}`);
    return j.access_token;
  };

  it('configured through the admin API; a token from the provider yields credentials narrowed to its policy claim, that expire', async () => {
    const before = await sts({ Action: 'AssumeRoleWithWebIdentity', WebIdentityToken: await tokenFor('svc-app', 'svc-app-secret') });
    expect([before.status, before.code]).toEqual([400, 'XSvcStsNotConfigured']);
    // the body is the configuration text itself, encrypted (not JSON)
    const { encryptData } = await import('../src/iam/madmin-crypto.ts');
    await admin.request('PUT', 'v3/idp-config/openid/_', {}, await encryptData(ROOT.secretKey, Buffer.from(`config_url=${issuer}/.well-known/openid-configuration client_id=svc-app claim_name=policy`)), 'application/octet-stream');
    const token = await tokenFor('svc-app', 'svc-app-secret');
    const stsClient = new STSClient({ endpoint, region: 'us-east-1', maxAttempts: 1, credentials: { accessKeyId: 'unused', secretAccessKey: 'unused' } });
    const r = await stsClient.send(new AssumeRoleWithWebIdentityCommand({ RoleArn: 'arn:aws:iam::000000000000:role/web', RoleSessionName: 'web', WebIdentityToken: token }));
    const c = r.Credentials!;
    // the session lasts no longer than the token (600 s)
    expect(c.Expiration!.getTime() - Date.now()).toBeLessThanOrEqual(600_000);
    expect(r.SubjectFromWebIdentityToken).toBe('svc-app');
    const session = s3(c.AccessKeyId!, c.SecretAccessKey!, c.SessionToken!);
    expect(await errorCode(session.send(new GetObjectCommand({ Bucket: 'idp-data', Key: 'k' })))).toBe('OK');
    expect(await errorCode(session.send(new GetObjectCommand({ Bucket: 'idp-other', Key: 'k' })))).toBe('AccessDenied');
    expect(await errorCode(session.send(new PutObjectCommand({ Bucket: 'idp-data', Key: 'w', Body: 'w' })))).toBe('AccessDenied');
    // past the expiry (a client clock 610 s ahead signs after the 600 s session ended) it fails
    await new Promise((res) => setTimeout(res, 1_100));
    expect(await errorCode(s3(c.AccessKeyId!, c.SecretAccessKey!, c.SessionToken!, 610_000).send(new GetObjectCommand({ Bucket: 'idp-data', Key: 'k' })))).toBe('ExpiredToken');
    // a token for another client id, an altered token, garbage: refused
    expect((await sts({ Action: 'AssumeRoleWithWebIdentity', WebIdentityToken: await tokenFor('other-app', 'other-app-secret') })).code).toBe('InvalidIdentityToken');
    const parts = token.split('.');
    const forged = `${parts[0]}.${Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(parts[1]!, 'base64url').toString()), policy: 'consoleAdmin' })).toString('base64url')}.${parts[2]}`;
    expect((await sts({ Action: 'AssumeRoleWithWebIdentity', WebIdentityToken: forged })).code).toBe('InvalidIdentityToken');
    expect((await sts({ Action: 'AssumeRoleWithWebIdentity', WebIdentityToken: 'not-a-jwt' })).code).toBe('InvalidIdentityToken');
  });
});

describe('AssumeRoleWithLDAPIdentity against a running slapd', () => {
  let slapd: ChildProcess;
  let ldapPort: number;
  const BASE = 'dc=svc,dc=test';

  beforeAll(async () => {
    if (!existsSync('/usr/sbin/slapd')) throw new Error("slapd is not installed: the LDAP test needs Debian's slapd (apt-get install slapd; CI does this in .ci/run)");
    ldapPort = await freePort();
    const dir = join(work, 'ldap');
    mkdirSync(join(dir, 'db'), { recursive: true });
    const hash = execFileSync('/usr/sbin/slappasswd', ['-s', 'admin-pw']).toString().trim();
    writeFileSync(
      join(dir, 'slapd.conf'),
      [
        'include /etc/ldap/schema/core.schema',
        'include /etc/ldap/schema/cosine.schema',
        'include /etc/ldap/schema/inetorgperson.schema',
        'modulepath /usr/lib/ldap',
        'moduleload back_mdb',
        `pidfile ${join(dir, 'slapd.pid')}`,
        'database mdb',
        `suffix "${BASE}"`,
        `rootdn "cn=admin,${BASE}"`,
        `rootpw ${hash}`,
        `directory ${join(dir, 'db')}`,
        'access to attrs=userPassword by self read by anonymous auth by * none',
        'access to * by * read',
        '',
      ].join('\n'),
    );
    slapd = spawn('/usr/sbin/slapd', ['-d', '0', '-f', join(dir, 'slapd.conf'), '-h', `ldap://127.0.0.1:${ldapPort}/`], { stdio: 'ignore' });
    const { Client } = await import('ldapts');
    let client: InstanceType<typeof Client> | undefined;
    for (let i = 0; i < 100; i++) {
      try {
        client = new Client({ url: `ldap://127.0.0.1:${ldapPort}` });
        await client.bind(`cn=admin,${BASE}`, 'admin-pw');
        break;
      } catch {
        client = undefined;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    if (!client) throw new Error('slapd did not start');
    await client.add(BASE, { objectClass: ['top', 'dcObject', 'organization'], o: 'svc', dc: 'svc' });
    await client.add(`ou=people,${BASE}`, { objectClass: ['organizationalUnit'], ou: 'people' });
    await client.add(`ou=groups,${BASE}`, { objectClass: ['organizationalUnit'], ou: 'groups' });
    await client.add(`uid=lena,ou=people,${BASE}`, { objectClass: ['inetOrgPerson'], uid: 'lena', cn: 'Lena', sn: 'L', userPassword: 'lena-pw' });
    await client.add(`cn=readers,ou=groups,${BASE}`, { objectClass: ['groupOfNames'], cn: 'readers', member: [`uid=lena,ou=people,${BASE}`] });
    await client.unbind();
  }, 30_000);

  afterAll(() => {
    slapd?.kill('SIGTERM');
  });

  it('a user name and password checked by the LDAP server yield credentials with the policies of its groups', async () => {
    const { encryptData } = await import('../src/iam/madmin-crypto.ts');
    const cfg = [
      `server_addr=ldap://127.0.0.1:${ldapPort}`,
      `lookup_bind_dn="cn=admin,${BASE}"`,
      'lookup_bind_password=admin-pw',
      `user_dn_search_base_dn="ou=people,${BASE}"`,
      'user_dn_search_filter="(uid=%s)"',
      `group_search_base_dn="ou=groups,${BASE}"`,
      'group_search_filter="(&(objectClass=groupOfNames)(member=%d))"',
    ].join(' ');
    await admin.request('PUT', 'v3/idp-config/ldap/_', {}, await encryptData(ROOT.secretKey, Buffer.from(cfg)), 'application/octet-stream');
    // no policy mapped yet: refused
    expect((await sts({ Action: 'AssumeRoleWithLDAPIdentity', LDAPUsername: 'lena', LDAPPassword: 'lena-pw' })).code).toBe('AccessDenied');
    await admin.encrypted('POST', 'v3/idp/ldap/policy/attach', {}, { policies: ['read-idp-data'], group: `cn=readers,ou=groups,${BASE}` }, true);
    const r = await sts({ Action: 'AssumeRoleWithLDAPIdentity', LDAPUsername: 'lena', LDAPPassword: 'lena-pw', DurationSeconds: '900' });
    expect(r.status, r.text).toBe(200);
    const c = r.cred!;
    expect(c.expiration.getTime() - Date.now()).toBeLessThanOrEqual(900_000);
    const session = s3(c.ak, c.sk, c.token);
    expect(await errorCode(session.send(new GetObjectCommand({ Bucket: 'idp-data', Key: 'k' })))).toBe('OK');
    expect(await errorCode(session.send(new GetObjectCommand({ Bucket: 'idp-other', Key: 'k' })))).toBe('AccessDenied');
    await new Promise((res) => setTimeout(res, 1_100));
    expect(await errorCode(s3(c.ak, c.sk, c.token, 900_000).send(new GetObjectCommand({ Bucket: 'idp-data', Key: 'k' })))).toBe('ExpiredToken');
    // wrong password, unknown user, filter injection: refused
    expect((await sts({ Action: 'AssumeRoleWithLDAPIdentity', LDAPUsername: 'lena', LDAPPassword: 'wrong' })).code).toBe('AccessDenied');
    expect((await sts({ Action: 'AssumeRoleWithLDAPIdentity', LDAPUsername: 'nobody', LDAPPassword: 'x' })).code).toBe('AccessDenied');
    expect((await sts({ Action: 'AssumeRoleWithLDAPIdentity', LDAPUsername: '*', LDAPPassword: 'lena-pw' })).code).toBe('AccessDenied');
    // a session policy narrows an LDAP session further
    const narrow = await sts({ Action: 'AssumeRoleWithLDAPIdentity', LDAPUsername: 'lena', LDAPPassword: 'lena-pw', Policy: JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: 's3:GetObject', Resource: 'arn:aws:s3:::idp-data/none/*' }] }) });
    expect(await errorCode(s3(narrow.cred!.ak, narrow.cred!.sk, narrow.cred!.token).send(new GetObjectCommand({ Bucket: 'idp-data', Key: 'k' })))).toBe('AccessDenied');
  });
});
