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
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { AssumeRoleCommand, AssumeRoleWithWebIdentityCommand, STSClient } from '@aws-sdk/client-sts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startClientCredentialsProvider, type TestOidc } from './helpers/oidc.ts';
import { stsCall } from './helpers/sts.ts';
import { LDAP_ADMIN, LDAP_BASE, LDAP_GROUP, LDAP_USER, ldapConfigPairs, populate, type Slapd, startSlapd } from './helpers/slapd.ts';
import { freePort, refusedWith, runSvc, runSvcCommand, type SvcRun, tempDir } from './svc-process.ts';
import { keepAliveHandler } from './helpers/s3-client.ts';
import { signHeaders } from './helpers/sigv4-signer.ts';
import { decryptData, encryptData } from '../src/iam/madmin-crypto.ts';

const ROOT = { accessKey: 'idproot', secretKey: 'idproot-secret-key' };
let srv: SvcRun;
let work: string;
let endpoint: string;

const s3 = (ak: string, sk: string, token?: string, offsetMs = 0) =>
  new S3Client({ requestHandler: keepAliveHandler(), endpoint, region: 'us-east-1', forcePathStyle: true, maxAttempts: 1, systemClockOffset: offsetMs, credentials: { accessKeyId: ak, secretAccessKey: sk, ...(token ? { sessionToken: token } : {}) } });

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
const sts = (form: Record<string, string>) => stsCall(endpoint, form);

/** The `svc` client as root (`--json`), expected to succeed; its JSON answer. */
async function svc(args: string[]): Promise<unknown> {
  const r = await svcRun(args);
  if (r.code !== 0) throw new Error(`svc ${args.join(' ')} exited ${r.code}: ${r.out}${r.err}`);
  return r.out.trim() === '' ? undefined : JSON.parse(r.out);
}

function svcRun(args: string[]) {
  return runSvcCommand([...args, '--json'], { SVC_ENDPOINT: endpoint, SVC_ACCESS_KEY: ROOT.accessKey, SVC_SECRET_KEY: ROOT.secretKey, HOME: join(work, 'home') });
}

/**
 * An admin request (MinIO's prefix) signed with a credential, a session's
 * token included, its body encrypted with the credential's secret as madmin
 * does; the status and the answer (decrypted when it is encrypted).
 */
async function adminAs(c: { ak: string; sk: string; token?: string }, method: 'GET' | 'PUT', path: string, query: Record<string, string> = {}, body?: unknown): Promise<{ status: number; value: unknown }> {
  const payload = body === undefined ? Buffer.alloc(0) : await encryptData(c.sk, Buffer.from(JSON.stringify(body)));
  const raw = { method, path: `/minio/admin/${path}`, query, headers: { 'x-amz-content-sha256': createHash('sha256').update(payload).digest('hex'), ...(c.token ? { 'x-amz-security-token': c.token } : {}) } };
  const headers = await signHeaders(endpoint, { accessKey: c.ak, secretKey: c.sk }, raw);
  const qs = new URLSearchParams(query).toString();
  const u = new URL(endpoint);
  const res = await new Promise<{ status: number; type: string; data: Buffer }>((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, method, path: qs ? `${raw.path}?${qs}` : raw.path, headers, agent: false }, (r) => {
      const chunks: Buffer[] = [];
      r.on('data', (d: Buffer) => chunks.push(d));
      r.on('end', () => resolve({ status: r.statusCode ?? 0, type: String(r.headers['content-type'] ?? ''), data: Buffer.concat(chunks) }));
      r.on('error', reject);
    });
    req.on('error', reject);
    req.end(payload);
  });
  if (res.status === 200 && res.type === 'application/octet-stream') return { status: 200, value: JSON.parse((await decryptData(c.sk, res.data)).toString('utf8')) };
  return { status: res.status, value: res.data.length === 0 ? undefined : JSON.parse(res.data.toString('utf8')) };
}

beforeAll(async () => {
  work = tempDir('idp');
  for (let i = 1; i <= 4; i++) mkdirSync(join(work, `d${i}`));
  // LDAP users' access keys are re-checked against the directory every second (default 5 min)
  srv = await runSvc(['server', join(work, 'd{1...4}')], { SVC_ACCESS_KEY: ROOT.accessKey, SVC_SECRET_KEY: ROOT.secretKey, SVC_LDAP_KEY_RECHECK_INTERVAL: '1s' });
  expect(await srv.started).toBe(true);
  endpoint = `http://127.0.0.1:${srv.port}`;
  for (let i = 0; i < 200 && (await fetch(`${endpoint}/health/ready`).catch(() => undefined))?.status !== 200; i++) await new Promise((r) => setTimeout(r, 100));
  const root = s3(ROOT.accessKey, ROOT.secretKey);
  for (const b of ['idp-data', 'idp-other']) await root.send(new CreateBucketCommand({ Bucket: b }));
  await root.send(new PutObjectCommand({ Bucket: 'idp-data', Key: 'k', Body: 'data' }));
  await root.send(new PutObjectCommand({ Bucket: 'idp-other', Key: 'k', Body: 'other' }));
  const policyFile = join(work, 'read-idp-data.json');
  writeFileSync(policyFile, JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: ['s3:GetObject'], Resource: ['arn:aws:s3:::idp-data/*'] }] }));
  await svc(['admin', 'policy', 'create', 'read-idp-data', policyFile]);
}, 60_000);

afterAll(async () => {
  await srv?.stop();
});

describe('AssumeRoleWithWebIdentity against a running OpenID Connect provider', () => {
  let oidc: TestOidc;
  let issuer: string;

  beforeAll(async () => {
    oidc = await startClientCredentialsProvider({ 'svc-app': 'read-idp-data', 'other-app': '' });
    issuer = oidc.issuer;
  });

  afterAll(async () => {
    await oidc?.close();
  });

  const tokenFor = (client: string) => oidc.token(client);

  it('configured with svc admin idp openid; a token from the provider yields credentials narrowed to its policy claim, that expire', async () => {
    const before = await sts({ Action: 'AssumeRoleWithWebIdentity', WebIdentityToken: await tokenFor('svc-app') });
    expect([before.status, before.code]).toEqual([400, 'XSvcStsNotConfigured']);
    // A provider this node cannot use is refused when it is configured, and nothing is kept.
    const closed = `http://127.0.0.1:${await freePort()}/.well-known/openid-configuration`;
    const down = await svcRun(['admin', 'idp', 'openid', 'add', `config_url=${closed}`, 'client_id=svc-app']);
    expect([down.code, JSON.parse(down.out).Code]).toEqual([1, 'IDPCommunicationError']);
    expect(JSON.parse(down.out).Message).toContain(`discovery document ${closed} could not be reached`);
    const notFound = await svcRun(['admin', 'idp', 'openid', 'add', `config_url=${issuer}/no-such-document`, 'client_id=svc-app']);
    expect([notFound.code, JSON.parse(notFound.out).Code]).toEqual([1, 'IDPCommunicationError']);
    expect(JSON.parse(notFound.out).Message).toContain('answered 404');
    expect(await svc(['admin', 'idp', 'openid', 'list'])).toEqual([]);
    // configured with the client (madmin's encrypted key=value text); the secret is kept, never shown
    expect(await svc(['admin', 'idp', 'openid', 'add', `config_url=${issuer}/.well-known/openid-configuration`, 'client_id=svc-app', 'client_secret=oidc-client-secret-xyz', 'claim_name=policy'])).toMatchObject({ status: 'success', type: 'openid', name: '_' });
    const again = await svcRun(['admin', 'idp', 'openid', 'add', `config_url=${issuer}/.well-known/openid-configuration`, 'client_id=svc-app']);
    expect([again.code, JSON.parse(again.out).Code]).toEqual([1, 'XSvcAdminIdpConfigExists']);
    const typo = await svcRun(['admin', 'idp', 'openid', 'update', 'claim_nmae=groups']);
    expect([typo.code, JSON.parse(typo.out).Code]).toEqual([1, 'InvalidArgument']);
    const moved = await svcRun(['admin', 'idp', 'openid', 'update', `config_url=${closed}`]);
    expect([moved.code, JSON.parse(moved.out).Code]).toEqual([1, 'IDPCommunicationError']);
    expect(await svc(['admin', 'idp', 'openid', 'list'])).toEqual([{ type: 'openid', name: '_', enabled: true }]);
    const info = (await svc(['admin', 'idp', 'openid', 'info'])) as { info: { key: string; value: string }[] };
    expect(Object.fromEntries(info.info.map((l) => [l.key, l.value]))).toEqual({ config_url: `${issuer}/.well-known/openid-configuration`, client_id: 'svc-app', client_secret: '*redacted*', claim_name: 'policy', enable: 'on' });
    const text = await runSvcCommand(['admin', 'idp', 'openid', 'info'], { SVC_ENDPOINT: endpoint, SVC_ACCESS_KEY: ROOT.accessKey, SVC_SECRET_KEY: ROOT.secretKey, HOME: join(work, 'home') });
    expect(text.out).toContain('client_id');
    expect(text.out + JSON.stringify(info)).not.toContain('oidc-client-secret-xyz');
    const token = await tokenFor('svc-app');
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
    expect((await sts({ Action: 'AssumeRoleWithWebIdentity', WebIdentityToken: await tokenFor('other-app') })).code).toBe('InvalidIdentityToken');
    const parts = token.split('.');
    const forged = `${parts[0]}.${Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(parts[1]!, 'base64url').toString()), policy: 'consoleAdmin' })).toString('base64url')}.${parts[2]}`;
    expect((await sts({ Action: 'AssumeRoleWithWebIdentity', WebIdentityToken: forged })).code).toBe('InvalidIdentityToken');
    expect((await sts({ Action: 'AssumeRoleWithWebIdentity', WebIdentityToken: 'not-a-jwt' })).code).toBe('InvalidIdentityToken');
    // update keeps what it does not name (the client secret, the client id); a named configuration is refused
    await svc(['admin', 'idp', 'openid', 'update', 'role_policy=readonly']);
    const updated = (await svc(['admin', 'idp', 'openid', 'info'])) as { info: { key: string; value: string }[] };
    expect(Object.fromEntries(updated.info.map((l) => [l.key, l.value]))).toMatchObject({ client_id: 'svc-app', client_secret: '*redacted*', role_policy: 'readonly' });
    const named = await svcRun(['admin', 'idp', 'openid', 'info', 'corp']);
    expect([named.code, JSON.parse(named.out).Code]).toEqual([1, 'InvalidArgument']);
    // disabled: kept, but its tokens are refused until it is enabled again
    await svc(['admin', 'idp', 'openid', 'disable']);
    expect(await svc(['admin', 'idp', 'openid', 'list'])).toEqual([{ type: 'openid', name: '_', enabled: false }]);
    expect((await sts({ Action: 'AssumeRoleWithWebIdentity', WebIdentityToken: await tokenFor('svc-app') })).code).toBe('XSvcStsNotConfigured');
    await svc(['admin', 'idp', 'openid', 'enable']);
    expect((await sts({ Action: 'AssumeRoleWithWebIdentity', WebIdentityToken: await tokenFor('svc-app') })).status).toBe(200);
    // removed: the provider's tokens are refused from then on
    expect(await svc(['admin', 'idp', 'openid', 'remove'])).toMatchObject({ status: 'success' });
    expect(await svc(['admin', 'idp', 'openid', 'list'])).toEqual([]);
    const after = await sts({ Action: 'AssumeRoleWithWebIdentity', WebIdentityToken: await tokenFor('svc-app') });
    expect([after.status, after.code]).toEqual([400, 'XSvcStsNotConfigured']);
  }, 180_000);
});

describe('AssumeRoleWithLDAPIdentity against a running slapd', () => {
  let slapd: Slapd;

  beforeAll(async () => {
    slapd = await startSlapd(join(work, 'ldap'));
    await populate(slapd);
  }, 30_000);

  afterAll(() => {
    slapd?.stop();
  });

  it('a user name and password checked by the LDAP server yield credentials with the policies of its groups', async () => {
    // configured with the client: an explicit ldap:// address is plain LDAP (the TLS modes are in iam-idp-tls.test.ts)
    await svc(['admin', 'idp', 'ldap', 'add', ...ldapConfigPairs(`ldap://127.0.0.1:${slapd.ldapPort}`)]);
    const info = (await svc(['admin', 'idp', 'ldap', 'info'])) as { info: { key: string; value: string }[] };
    expect(Object.fromEntries(info.info.map((l) => [l.key, l.value]))).toMatchObject({ lookup_bind_password: '*redacted*', user_dn_search_filter: '(uid=%s)', server_starttls: 'off' });
    expect(JSON.stringify(info)).not.toContain('admin-pw');
    // no policy mapped yet: refused
    expect((await sts({ Action: 'AssumeRoleWithLDAPIdentity', LDAPUsername: LDAP_USER.name, LDAPPassword: LDAP_USER.password })).code).toBe('AccessDenied');
    expect(await svc(['admin', 'idp', 'ldap', 'policy', 'attach', 'read-idp-data', '--group', LDAP_GROUP])).toMatchObject({ policiesAttached: ['read-idp-data'] });
    expect(await svc(['admin', 'idp', 'ldap', 'policy', 'entities'])).toMatchObject({ userMappings: [], groupMappings: [{ group: LDAP_GROUP.toLowerCase(), policies: ['read-idp-data'] }], policyMappings: [{ policy: 'read-idp-data', users: [], groups: [LDAP_GROUP.toLowerCase()] }] });
    // a policy an LDAP group holds cannot be removed
    const inUse = await svcRun(['admin', 'policy', 'remove', 'read-idp-data']);
    expect([inUse.code, JSON.parse(inUse.out).Code]).toEqual([1, 'XSvcAdminPolicyInUse']);
    const r = await sts({ Action: 'AssumeRoleWithLDAPIdentity', LDAPUsername: LDAP_USER.name, LDAPPassword: LDAP_USER.password, DurationSeconds: '900' });
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
    const narrow = await sts({ Action: 'AssumeRoleWithLDAPIdentity', LDAPUsername: LDAP_USER.name, LDAPPassword: LDAP_USER.password, Policy: JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: 's3:GetObject', Resource: 'arn:aws:s3:::idp-data/none/*' }] }) });
    expect(await errorCode(s3(narrow.cred!.ak, narrow.cred!.sk, narrow.cred!.token).send(new GetObjectCommand({ Bucket: 'idp-data', Key: 'k' })))).toBe('AccessDenied');
    // detached: the group's members get nothing
    expect(await svc(['admin', 'idp', 'ldap', 'policy', 'detach', 'read-idp-data', '--group', LDAP_GROUP])).toMatchObject({ policiesDetached: ['read-idp-data'] });
    expect((await sts({ Action: 'AssumeRoleWithLDAPIdentity', LDAPUsername: LDAP_USER.name, LDAPPassword: LDAP_USER.password })).code).toBe('AccessDenied');
    // attached to the user's own DN, then the server removed: LDAP sign-in is refused as not configured
    await svc(['admin', 'idp', 'ldap', 'policy', 'attach', 'read-idp-data', '--user', LDAP_USER.dn]);
    expect((await sts({ Action: 'AssumeRoleWithLDAPIdentity', LDAPUsername: LDAP_USER.name, LDAPPassword: LDAP_USER.password })).status).toBe(200);
    await svc(['admin', 'idp', 'ldap', 'remove']);
    const after = await sts({ Action: 'AssumeRoleWithLDAPIdentity', LDAPUsername: LDAP_USER.name, LDAPPassword: LDAP_USER.password });
    expect([after.status, after.code]).toEqual([400, 'XSvcStsNotConfigured']);
  });

  it("access keys of LDAP users: created by an admin (by name or DN) or by the user's own LDAP session, with the policies mapped to its DN and groups at request time", async () => {
    const url = `ldap://127.0.0.1:${slapd.ldapPort}`;
    const OTTO_DN = `uid=otto,ou=people,${LDAP_BASE}`;
    const { Client } = await import('ldapts');
    const dir = new Client({ url });
    await dir.bind(LDAP_ADMIN.dn, LDAP_ADMIN.password);
    await dir.add(OTTO_DN, { objectClass: ['inetOrgPerson'], uid: 'otto', cn: 'Otto', sn: 'O', userPassword: 'otto-pw' });
    await dir.unbind();
    const create = (args: string[]) => svcRun(['admin', 'idp', 'ldap', 'accesskey', 'create', ...args]);
    const list = async (user?: string) => (await svc(['admin', 'idp', 'ldap', 'accesskey', 'list', ...(user ? ['--ldap-user', user] : [])])) as { serviceAccounts: { accessKey: string; parentUser: string; name: string; accountStatus: string }[]; stsKeys: unknown[] };
    const get = (ak: string, sk: string, bucket = 'idp-data', token?: string) => errorCode(s3(ak, sk, token).send(new GetObjectCommand({ Bucket: bucket, Key: 'k' })));

    // the sign-in test leaves read-idp-data mapped to lena's own DN: start from no mapping (when run alone there is none to detach)
    await svcRun(['admin', 'idp', 'ldap', 'policy', 'detach', 'read-idp-data', '--user', LDAP_USER.dn]);
    // no LDAP provider: refused
    expect(refusedWith(await create(['--ldap-user', LDAP_USER.name]), 'XSvcStsNotConfigured')).toMatch(/no LDAP provider/);
    await svc(['admin', 'idp', 'ldap', 'add', ...ldapConfigPairs(url)]);
    try {
      // an unknown user, by name or DN, and a user no policy is mapped to (by DN or group): refused, nothing stored
      expect(refusedWith(await create(['--ldap-user', 'nobody']), 'XSvcAdminNoSuchUser')).toContain('the LDAP user "nobody" was not found');
      expect(refusedWith(await create(['--ldap-user', `uid=nobody,ou=people,${LDAP_BASE}`]), 'XSvcAdminNoSuchUser')).toContain('was not found');
      expect(refusedWith(await create(['--ldap-user', LDAP_USER.name]), 'XSvcAdminLdapUserNoPolicy')).toContain(LDAP_USER.dn);
      expect(await list()).toEqual({ serviceAccounts: [], stsKeys: [] });

      await svc(['admin', 'idp', 'ldap', 'policy', 'attach', 'read-idp-data', '--group', LDAP_GROUP]);
      const key = (await svc(['admin', 'idp', 'ldap', 'accesskey', 'create', '--ldap-user', LDAP_USER.name, '--name', 'lena-app'])) as { accessKey: string; secretKey: string };
      // its group's policy: GET on idp-data, nothing on idp-other, no PUT
      expect(await get(key.accessKey, key.secretKey)).toBe('OK');
      expect(await get(key.accessKey, key.secretKey, 'idp-other')).toBe('AccessDenied');
      expect(await errorCode(s3(key.accessKey, key.secretKey).send(new PutObjectCommand({ Bucket: 'idp-data', Key: 'w', Body: 'w' })))).toBe('AccessDenied');
      const info = (await svc(['admin', 'accesskey', 'info', key.accessKey])) as { parentUser: string; accountStatus: string; impliedPolicy: boolean; policy: string; name: string };
      expect(info).toMatchObject({ parentUser: LDAP_USER.dn, accountStatus: 'on', impliedPolicy: true, name: 'lena-app' });
      expect(info.policy).toContain('arn:aws:s3:::idp-data/*');
      expect(await list(LDAP_USER.dn)).toEqual({ serviceAccounts: [expect.objectContaining({ accessKey: key.accessKey, parentUser: LDAP_USER.dn, name: 'lena-app', accountStatus: 'on' })], stsKeys: [] });
      expect((await list(LDAP_USER.name)).serviceAccounts.map((a) => a.accessKey)).toEqual([key.accessKey]);
      expect((await list(OTTO_DN)).serviceAccounts).toEqual([]);

      // the group's policy detached: the key is denied, without being created again; mapped to the user's own DN: allowed again
      await svc(['admin', 'idp', 'ldap', 'policy', 'detach', 'read-idp-data', '--group', LDAP_GROUP]);
      expect(await get(key.accessKey, key.secretKey)).toBe('AccessDenied');
      await svc(['admin', 'idp', 'ldap', 'policy', 'attach', 'read-idp-data', '--user', LDAP_USER.dn]);
      expect(await get(key.accessKey, key.secretKey)).toBe('OK');
      await svc(['admin', 'idp', 'ldap', 'policy', 'detach', 'read-idp-data', '--user', LDAP_USER.dn]);
      await svc(['admin', 'idp', 'ldap', 'policy', 'attach', 'read-idp-data', '--group', LDAP_GROUP]);
      // disabled and enabled as any access key
      await svc(['admin', 'accesskey', 'disable', key.accessKey]);
      expect(await get(key.accessKey, key.secretKey)).toBe('InvalidAccessKeyId');
      await svc(['admin', 'accesskey', 'enable', key.accessKey]);
      expect(await get(key.accessKey, key.secretKey)).toBe('OK');
      // an inline policy narrows it
      const narrowFile = join(work, 'narrow.json');
      writeFileSync(narrowFile, JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: ['s3:GetObject'], Resource: ['arn:aws:s3:::idp-data/none/*'] }] }));
      const narrow = (await svc(['admin', 'idp', 'ldap', 'accesskey', 'create', '--ldap-user', LDAP_USER.dn, '--policy', narrowFile])) as { accessKey: string; secretKey: string };
      expect(await get(narrow.accessKey, narrow.secretKey)).toBe('AccessDenied');

      // lena's own LDAP session creates a key for its user with no targetUser, and no admin permission
      const signIn = await sts({ Action: 'AssumeRoleWithLDAPIdentity', LDAPUsername: LDAP_USER.name, LDAPPassword: LDAP_USER.password });
      const session = signIn.cred!;
      const own = await adminAs(session, 'PUT', 'v3/idp/ldap/add-service-account', {}, { name: 'own' });
      expect(own.status, JSON.stringify(own.value)).toBe(200);
      const ownKey = (own.value as { credentials: { accessKey: string; secretKey: string } }).credentials;
      expect(await get(ownKey.accessKey, ownKey.secretKey)).toBe('OK');
      expect(await get(ownKey.accessKey, ownKey.secretKey, 'idp-other')).toBe('AccessDenied');
      // the same through the client, signed with the session's token (SVC_SESSION_TOKEN); without it the session's keys are no credential
      const asSession = (token?: string) => ({ SVC_ENDPOINT: endpoint, SVC_ACCESS_KEY: session.ak, SVC_SECRET_KEY: session.sk, ...(token ? { SVC_SESSION_TOKEN: token } : {}), HOME: join(work, 'home') });
      const viaClient = await runSvcCommand(['admin', 'idp', 'ldap', 'accesskey', 'create', '--name', 'client', '--json'], asSession(session.token));
      expect(viaClient.code, viaClient.out + viaClient.err).toBe(0);
      const clientKey = JSON.parse(viaClient.out) as { accessKey: string; secretKey: string };
      expect(await get(clientKey.accessKey, clientKey.secretKey)).toBe('OK');
      await svc(['admin', 'accesskey', 'remove', clientKey.accessKey]);
      const noToken = await runSvcCommand(['admin', 'idp', 'ldap', 'accesskey', 'create', '--json'], asSession());
      expect([noToken.code, (JSON.parse(noToken.out) as { Code: string }).Code]).toEqual([1, 'InvalidAccessKeyId']);
      // ... but none for another LDAP user, by name or DN (otto holds a policy, so only the permission is missing)
      await svc(['admin', 'idp', 'ldap', 'policy', 'attach', 'read-idp-data', '--user', OTTO_DN]);
      for (const targetUser of ['otto', OTTO_DN]) {
        const other = await adminAs(session, 'PUT', 'v3/idp/ldap/add-service-account', {}, { targetUser });
        expect([other.status, (other.value as { Code?: string }).Code]).toEqual([403, 'AccessDenied']);
      }
      expect((await list(OTTO_DN)).serviceAccounts).toEqual([]);
      // nor through the built-in route, where an LDAP identity is no svc user
      const builtin = await adminAs(session, 'PUT', 'v3/add-service-account', {}, {});
      expect([builtin.status, (builtin.value as { Code?: string }).Code]).toEqual([400, 'InvalidArgument']);
      // a session narrowed by a session policy cannot make itself a key with the user's whole rights
      const narrowed = (await sts({ Action: 'AssumeRoleWithLDAPIdentity', LDAPUsername: LDAP_USER.name, LDAPPassword: LDAP_USER.password, Policy: JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: 's3:GetObject', Resource: 'arn:aws:s3:::idp-data/none/*' }] }) })).cred!;
      const fromNarrowed = await adminAs(narrowed, 'PUT', 'v3/idp/ldap/add-service-account', {}, {});
      expect([fromNarrowed.status, (fromNarrowed.value as { Code?: string }).Code]).toEqual([403, 'AccessDenied']);
      // an access key of lena's cannot create further keys
      const fromKey = await adminAs({ ak: ownKey.accessKey, sk: ownKey.secretKey }, 'PUT', 'v3/idp/ldap/add-service-account', {}, {});
      expect([fromKey.status, (fromKey.value as { Code?: string }).Code]).toEqual([403, 'AccessDenied']);
      // the admin can, for otto by DN
      const ottoKey = (await svc(['admin', 'idp', 'ldap', 'accesskey', 'create', '--ldap-user', OTTO_DN])) as { accessKey: string; secretKey: string };
      expect(await get(ottoKey.accessKey, ottoKey.secretKey)).toBe('OK');
      // the session lists its own user's keys, not otto's; an admin lists every LDAP user's
      const mine = await adminAs(session, 'GET', 'v3/idp/ldap/list-access-keys', { listType: 'all' });
      expect(mine.status).toBe(200);
      expect((mine.value as { serviceAccounts: { accessKey: string }[] }).serviceAccounts.map((a) => a.accessKey).sort()).toEqual([key.accessKey, narrow.accessKey, ownKey.accessKey].sort());
      const others = await adminAs(session, 'GET', 'v3/idp/ldap/list-access-keys', { userDN: OTTO_DN, listType: 'all' });
      expect([others.status, (others.value as { Code?: string }).Code]).toEqual([403, 'AccessDenied']);
      expect((await list()).serviceAccounts.map((a) => a.accessKey).sort()).toEqual([key.accessKey, narrow.accessKey, ownKey.accessKey, ottoKey.accessKey].sort());

      // removed with svc admin accesskey remove: refused from then on, and no longer listed
      await svc(['admin', 'accesskey', 'remove', key.accessKey]);
      expect(await get(key.accessKey, key.secretKey)).toBe('InvalidAccessKeyId');
      expect((await list(LDAP_USER.dn)).serviceAccounts.map((a) => a.accessKey).sort()).toEqual([narrow.accessKey, ownKey.accessKey].sort());
      // the LDAP provider turned off: its users' keys are refused until it is on again
      await svc(['admin', 'idp', 'ldap', 'disable']);
      expect(await get(ownKey.accessKey, ownKey.secretKey)).toBe('InvalidAccessKeyId');
      await svc(['admin', 'idp', 'ldap', 'enable']);
      expect(await get(ownKey.accessKey, ownKey.secretKey)).toBe('OK');

      // the periodic re-check (every second here): lena taken out of her group loses its policy on her keys; back in, has it again
      const { Attribute, Change } = await import('ldapts');
      const member = (operation: 'add' | 'delete', dn: string) => new Change({ operation, modification: new Attribute({ type: 'member', values: [dn] }) });
      const until = async (what: string, check: () => Promise<boolean>) => {
        for (let i = 0; i < 150; i++) {
          if (await check()) return;
          await new Promise((res) => setTimeout(res, 100));
        }
        throw new Error(`not within 15 s: ${what}`);
      };
      await dir.bind(LDAP_ADMIN.dn, LDAP_ADMIN.password);
      try {
        // (a groupOfNames keeps at least one member: otto joins before lena leaves)
        await dir.modify(LDAP_GROUP, [member('add', OTTO_DN)]);
        await dir.modify(LDAP_GROUP, [member('delete', LDAP_USER.dn)]);
        await until('lena out of her group denies her key', async () => (await get(ownKey.accessKey, ownKey.secretKey)) === 'AccessDenied');
        expect((await svc(['admin', 'accesskey', 'info', ownKey.accessKey])) as { accountStatus: string }).toMatchObject({ accountStatus: 'on' });
      } finally {
        await dir.modify(LDAP_GROUP, [member('add', LDAP_USER.dn)]);
      }
      await until('lena back in her group allows her key', async () => (await get(ownKey.accessKey, ownKey.secretKey)) === 'OK');
      // otto removed from the directory: his key is disabled (not removed), the reason shown by info
      await dir.modify(LDAP_GROUP, [member('delete', OTTO_DN)]);
      await dir.del(OTTO_DN);
      await dir.unbind();
      await until("otto's key disabled", async () => ((await svc(['admin', 'accesskey', 'info', ottoKey.accessKey])) as { accountStatus: string }).accountStatus === 'off');
      expect(await svc(['admin', 'accesskey', 'info', ottoKey.accessKey])).toMatchObject({ accountStatus: 'off', disabledReason: expect.stringContaining(`the LDAP user ${OTTO_DN} was no longer found`) });
      expect(await get(ottoKey.accessKey, ottoKey.secretKey)).toBe('InvalidAccessKeyId');
      expect((await list(OTTO_DN)).serviceAccounts).toEqual([expect.objectContaining({ accessKey: ottoKey.accessKey, accountStatus: 'off' })]);
      // lena's keys, still found, stay enabled
      expect(await get(ownKey.accessKey, ownKey.secretKey)).toBe('OK');

      for (const k of [narrow.accessKey, ownKey.accessKey, ottoKey.accessKey]) await svc(['admin', 'accesskey', 'remove', k]);
    } finally {
      // the next tests configure the server afresh, with no mapping: leave none, whatever failed above
      for (const [flag, dn] of [['--user', OTTO_DN], ['--group', LDAP_GROUP]]) await svcRun(['admin', 'idp', 'ldap', 'policy', 'detach', 'read-idp-data', flag!, dn!]);
      await svcRun(['admin', 'idp', 'ldap', 'remove']);
    }
  }, 120_000);

  it('a server this node cannot reach, or whose lookup bind fails, is refused when it is configured, and nothing changes', async () => {
    /** An `svc admin idp ldap` call the node refuses after asking the server: its message. */
    const refused = async (args: string[]) => refusedWith(await svcRun(['admin', 'idp', 'ldap', ...args]), 'IDPCommunicationError');
    const infoOf = async () => Object.fromEntries(((await svc(['admin', 'idp', 'ldap', 'info'])) as { info: { key: string; value: string }[] }).info.map((l) => [l.key, l.value]));
    const signIn = () => sts({ Action: 'AssumeRoleWithLDAPIdentity', LDAPUsername: LDAP_USER.name, LDAPPassword: LDAP_USER.password });
    const closed = `ldap://127.0.0.1:${await freePort()}`;
    const good = ldapConfigPairs(`ldap://127.0.0.1:${slapd.ldapPort}`);
    const withPassword = (pw: string) => good.map((p) => (p.startsWith('lookup_bind_password=') ? `lookup_bind_password=${pw}` : p));

    // add: nothing listening, or a lookup bind the server refuses; nothing is stored
    expect(await refused(['add', ...ldapConfigPairs(closed)])).toMatch(new RegExp(`^the LDAP server ${closed} could not be reached: .*ECONNREFUSED`));
    expect(await refused(['add', ...withPassword('not-the-admin-pw')])).toMatch(/^the LDAP lookup bind failed: the server ldap:\/\/127\.0\.0\.1:\d+ refused cn=admin,dc=svc,dc=test: invalid credentials \(check lookup_bind_dn and lookup_bind_password\)/);
    expect(await svc(['admin', 'idp', 'ldap', 'list'])).toEqual([]);
    const none = await svcRun(['admin', 'idp', 'ldap', 'info']);
    expect([none.code, JSON.parse(none.out).Code]).toEqual([1, 'XSvcStsNotConfigured']);
    expect((await signIn()).code).toBe('XSvcStsNotConfigured');

    await svc(['admin', 'idp', 'ldap', 'add', ...good]);
    await svc(['admin', 'idp', 'ldap', 'policy', 'attach', 'read-idp-data', '--group', LDAP_GROUP]);
    const before = await infoOf();
    // updates that would break it are refused; the configuration in force stays, its password included
    expect(await refused(['update', 'lookup_bind_password=not-the-admin-pw'])).toMatch(/^the LDAP lookup bind failed: .*invalid credentials/);
    expect(await refused(['update', `lookup_bind_dn=cn=nobody,${LDAP_BASE}`])).toMatch(/^the LDAP lookup bind failed: .* refused cn=nobody,dc=svc,dc=test/);
    expect(await refused(['update', `server_addr=${closed}`])).toMatch(/could not be reached/);
    expect(await infoOf()).toEqual(before);
    expect((await signIn()).status).toBe(200);
    // a search key is checked too: this filter is one the server takes, so the update is kept
    await svc(['admin', 'idp', 'ldap', 'update', 'user_dn_search_filter=(&(objectClass=inetOrgPerson)(uid=%s))']);
    expect(await infoOf()).toEqual({ ...before, user_dn_search_filter: '(&(objectClass=inetOrgPerson)(uid=%s))' });
    expect((await signIn()).status).toBe(200);

    // turned off, it is not asked (here: moved to where nothing listens); turned on again, it is
    await svc(['admin', 'idp', 'ldap', 'update', 'enable=off', `server_addr=${closed}`]);
    expect(await svc(['admin', 'idp', 'ldap', 'list'])).toEqual([{ type: 'ldap', name: '_', enabled: false }]);
    expect(await refused(['enable'])).toMatch(/could not be reached/);
    expect(await svc(['admin', 'idp', 'ldap', 'list'])).toEqual([{ type: 'ldap', name: '_', enabled: false }]);
    await svc(['admin', 'idp', 'ldap', 'update', 'enable=on', `server_addr=ldap://127.0.0.1:${slapd.ldapPort}`]);
    expect((await signIn()).status).toBe(200);

    await svc(['admin', 'idp', 'ldap', 'policy', 'detach', 'read-idp-data', '--group', LDAP_GROUP]);
    await svc(['admin', 'idp', 'ldap', 'remove']);
  });

  it('search bases the server does not hold and filters no sign-in could run are refused when configured, and nothing changes', async () => {
    const ldap = (args: string[]) => svcRun(['admin', 'idp', 'ldap', ...args]);
    const infoOf = async () => Object.fromEntries(((await svc(['admin', 'idp', 'ldap', 'info'])) as { info: { key: string; value: string }[] }).info.map((l) => [l.key, l.value]));
    const signIn = () => sts({ Action: 'AssumeRoleWithLDAPIdentity', LDAPUsername: LDAP_USER.name, LDAPPassword: LDAP_USER.password });
    const url = `ldap://127.0.0.1:${slapd.ldapPort}`;
    const good = ldapConfigPairs(url);
    const replacing = (key: string, value: string) => good.map((p) => (p.startsWith(`${key}=`) ? `${key}=${value}` : p));
    const nothingStored = async () => {
      expect(await svc(['admin', 'idp', 'ldap', 'list'])).toEqual([]);
      expect((await signIn()).code).toBe('XSvcStsNotConfigured');
    };

    // add: a user base the server does not hold (a typo) is the server's answer; nothing is stored
    const peple = `ou=peple,${LDAP_BASE}`;
    expect(refusedWith(await ldap(['add', ...replacing('user_dn_search_base_dn', peple)]), 'IDPCommunicationError')).toBe(`the LDAP user_dn_search_base_dn "${peple}" does not exist on the server ${url} (or the lookup bind cannot see it)`);
    expect(refusedWith(await ldap(['add', ...replacing('user_dn_search_base_dn', 'people')]), 'IDPCommunicationError')).toMatch(new RegExp(`^the LDAP user_dn_search_base_dn "people" is not a DN the server ${url} takes: InvalidDNSyntaxError \\(result code 34\\)`));
    await nothingStored();
    // add: searches no sign-in could run are refused before the server is asked, naming the key
    expect(refusedWith(await ldap(['add', ...replacing('user_dn_search_filter', '(uid=lena)')]), 'InvalidArgument')).toMatch(/^user_dn_search_filter "\(uid=lena\)" has no %s/);
    expect(refusedWith(await ldap(['add', ...replacing('user_dn_search_filter', '(uid=%s')]), 'InvalidArgument')).toMatch(/^user_dn_search_filter "\(uid=%s" is not an LDAP filter .*Unbalanced parens/);
    expect(refusedWith(await ldap(['add', ...good.filter((p) => !p.startsWith('group_search_filter='))]), 'InvalidArgument')).toMatch(/^group_search_base_dn is set but group_search_filter is not: .*together/);
    await nothingStored();

    await svc(['admin', 'idp', 'ldap', 'add', ...good]);
    await svc(['admin', 'idp', 'ldap', 'policy', 'attach', 'read-idp-data', '--group', LDAP_GROUP]);
    expect((await signIn()).status).toBe(200);
    const before = await infoOf();
    // update: a group base the server does not hold, the same checks; the configuration in force stays and sign-in works
    const grups = `ou=grups,${LDAP_BASE}`;
    expect(refusedWith(await ldap(['update', `group_search_base_dn=${grups}`]), 'IDPCommunicationError')).toBe(`the LDAP group_search_base_dn "${grups}" does not exist on the server ${url} (or the lookup bind cannot see it)`);
    expect(refusedWith(await ldap(['update', 'user_dn_search_filter=(cn=lena)']), 'InvalidArgument')).toMatch(/^user_dn_search_filter .* has no %s/);
    expect(refusedWith(await ldap(['update', 'group_search_filter=(&(objectClass=groupOfNames)(member=%d)']), 'InvalidArgument')).toMatch(/^group_search_filter .* is not an LDAP filter/);
    expect(refusedWith(await ldap(['update', 'group_search_filter=']), 'InvalidArgument')).toMatch(/^group_search_base_dn is set but group_search_filter is not/);
    expect(await infoOf()).toEqual(before);
    expect((await signIn()).status).toBe(200);
    // both group keys cleared together is taken: no group search
    await svc(['admin', 'idp', 'ldap', 'update', 'group_search_base_dn=', 'group_search_filter=']);
    const { group_search_base_dn: _base, group_search_filter: _filter, ...rest } = before;
    expect(await infoOf()).toEqual(rest);

    await svc(['admin', 'idp', 'ldap', 'policy', 'detach', 'read-idp-data', '--group', LDAP_GROUP]);
    await svc(['admin', 'idp', 'ldap', 'remove']);
  });

  it("a built-in user's session narrowed by a session policy cannot make its user an access key; a session without one can", async () => {
    const NINA = { ak: 'nina', sk: 'nina-secret-123' };
    await svc(['admin', 'user', 'add', NINA.ak, NINA.sk]);
    await svc(['admin', 'policy', 'attach', 'readwrite', '--user', NINA.ak]);
    const stsNina = new STSClient({ endpoint, region: 'us-east-1', maxAttempts: 1, credentials: { accessKeyId: NINA.ak, secretAccessKey: NINA.sk } });
    const assume = async (Policy?: string) => {
      const c = (await stsNina.send(new AssumeRoleCommand({ RoleArn: 'arn:aws:iam::000000000000:role/any', RoleSessionName: 'nina', ...(Policy ? { Policy } : {}) }))).Credentials!;
      return { ak: c.AccessKeyId!, sk: c.SecretAccessKey!, token: c.SessionToken! };
    };
    const narrowed = await assume(JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: 's3:GetObject', Resource: 'arn:aws:s3:::idp-data/none/*' }] }));
    const refused = await adminAs(narrowed, 'PUT', 'v3/add-service-account', {}, {});
    expect([refused.status, (refused.value as { Code?: string }).Code]).toEqual([403, 'AccessDenied']);
    expect(await svc(['admin', 'accesskey', 'list', NINA.ak])).toEqual([]);
    const made = await adminAs(await assume(), 'PUT', 'v3/add-service-account', {}, {});
    expect(made.status, JSON.stringify(made.value)).toBe(200);
    const key = (made.value as { credentials: { accessKey: string } }).credentials;
    expect(await svc(['admin', 'accesskey', 'info', key.accessKey])).toMatchObject({ parentUser: NINA.ak });
    await svc(['admin', 'user', 'remove', NINA.ak]);
  });
});
