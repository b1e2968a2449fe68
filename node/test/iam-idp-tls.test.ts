/**
 * Identity providers behind TLS, verified against the node's CAs. LDAP
 * over TLS for AssumeRoleWithLDAPIdentity, against real `slapd`s
 * serving certificates of CAs made here with openssl: slapd A (a CA the
 * node trusts through its certificate directory's `CAs/`; LDAPS, and
 * StartTLS on its plain port, which refuses everything in clear) and
 * slapd B (a CA the node does not know). LDAPS and StartTLS work with the
 * trusted CA; an untrusted CA or a host name the certificate does not
 * carry is a clear IDPCommunicationError and never a fall-back to plain;
 * `tls_skip_verify=on` is the explicit opt-out. An OpenID provider on HTTPS
 * (npm `oidc-provider`): its discovery document and keys are fetched
 * trusting the same CAs; one under an unknown CA is refused with the
 * reason when it is configured. Configured with the client.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GetObjectCommand, PutObjectCommand, CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { Agent, fetch as undiciFetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueLeaf, makeCa, type TestCa } from './helpers/certs.ts';
import { LDAP_GROUP, LDAP_USER, ldapConfigPairs, populate, type Slapd, startSlapd } from './helpers/slapd.ts';
import { startClientCredentialsProvider, type TestOidc } from './helpers/oidc.ts';
import { stsCall } from './helpers/sts.ts';
import { runSvc, runSvcCommand, type SvcRun, tempDir } from './svc-process.ts';
import { keepAliveHandler } from './helpers/s3-client.ts';

const ROOT = { accessKey: 'ldaptlsroot', secretKey: 'ldaptlsroot-secret' };
let work: string;
let srv: SvcRun;
let endpoint: string;
let caA: TestCa;
let trusted: Slapd;
let untrusted: Slapd;
let oidcTrusted: TestOidc;
let oidcUntrusted: TestOidc;
/** The test's own calls to the HTTPS providers (it trusts both CAs). */
let testFetch: typeof fetch;

const svcRun = (args: string[]) => runSvcCommand([...args, '--json'], { SVC_ENDPOINT: endpoint, SVC_ACCESS_KEY: ROOT.accessKey, SVC_SECRET_KEY: ROOT.secretKey, HOME: join(work, 'home') });

async function svc(args: string[]): Promise<void> {
  const r = await svcRun(args);
  if (r.code !== 0) throw new Error(`svc ${args.join(' ')} exited ${r.code}: ${r.out}${r.err}`);
}

const signIn = () => stsCall(endpoint, { Action: 'AssumeRoleWithLDAPIdentity', LDAPUsername: LDAP_USER.name, LDAPPassword: LDAP_USER.password });

beforeAll(async () => {
  work = tempDir('ldaptls');
  caA = await makeCa(join(work, 'ca-a'), 'svc LDAP test CA');
  const caB = await makeCa(join(work, 'ca-b'), 'unknown CA');
  const leafA = await issueLeaf(caA, join(work, 'leaf-a'), { ips: ['127.0.0.1'] });
  const leafB = await issueLeaf(caB, join(work, 'leaf-b'), { ips: ['127.0.0.1'] });
  trusted = await startSlapd(join(work, 'slapd-a'), { tls: leafA, requireTls: true });
  await populate(trusted, { ca: [caA.pem], host: '127.0.0.1' });
  untrusted = await startSlapd(join(work, 'slapd-b'), { tls: leafB });
  oidcTrusted = await startClientCredentialsProvider({ 'tls-app': 'readonly' }, leafA);
  oidcUntrusted = await startClientCredentialsProvider({ 'tls-app': 'readonly' }, leafB);
  const agent = new Agent({ connect: { ca: [caA.pem, caB.pem] } });
  testFetch = ((input: string, init?: RequestInit) => undiciFetch(input, { ...(init as object), dispatcher: agent })) as unknown as typeof fetch;
  // the node trusts CA A through its certificate directory (no pair of its own: it serves plain HTTP)
  mkdirSync(join(work, 'certs', 'CAs'), { recursive: true });
  writeFileSync(join(work, 'certs', 'CAs', 'ldap-ca.crt'), caA.pem);
  for (let i = 1; i <= 4; i++) mkdirSync(join(work, `d${i}`));
  srv = await runSvc(['server', join(work, 'd{1...4}')], { ...{ SVC_ACCESS_KEY: ROOT.accessKey, SVC_SECRET_KEY: ROOT.secretKey }, SVC_CERTS_DIR: join(work, 'certs') });
  expect(await srv.started).toBe(true);
  endpoint = `http://127.0.0.1:${srv.port}`;
  for (let i = 0; i < 200 && (await fetch(`${endpoint}/health/ready`).catch(() => undefined))?.status !== 200; i++) await new Promise((r) => setTimeout(r, 100));
  const root = new S3Client({ requestHandler: keepAliveHandler(), endpoint, region: 'us-east-1', forcePathStyle: true, maxAttempts: 1, credentials: { accessKeyId: ROOT.accessKey, secretAccessKey: ROOT.secretKey } });
  await root.send(new CreateBucketCommand({ Bucket: 'tls-data' }));
  await root.send(new PutObjectCommand({ Bucket: 'tls-data', Key: 'k', Body: 'data' }));
  await svc(['admin', 'idp', 'ldap', 'policy', 'attach', 'readonly', '--group', LDAP_GROUP]);
}, 90_000);

afterAll(async () => {
  await srv?.stop();
  trusted?.stop();
  untrusted?.stop();
  await oidcTrusted?.close();
  await oidcUntrusted?.close();
});

describe('AssumeRoleWithLDAPIdentity over TLS', () => {
  it('LDAPS (MinIO\'s host:port form) and StartTLS work against a server whose CA the node trusts', async () => {
    await svc(['admin', 'idp', 'ldap', 'add', ...ldapConfigPairs(`127.0.0.1:${trusted.ldapsPort}`)]);
    const r = await signIn();
    expect(r.status, r.text).toBe(200);
    const session = new S3Client({ requestHandler: keepAliveHandler(), endpoint, region: 'us-east-1', forcePathStyle: true, maxAttempts: 1, credentials: { accessKeyId: r.cred!.ak, secretAccessKey: r.cred!.sk, sessionToken: r.cred!.token } });
    expect(await (await session.send(new GetObjectCommand({ Bucket: 'tls-data', Key: 'k' }))).Body!.transformToString()).toBe('data');

    await svc(['admin', 'idp', 'ldap', 'update', `server_addr=ldap://127.0.0.1:${trusted.ldapPort}`, 'server_starttls=on']);
    const st = await signIn();
    expect(st.status, st.text).toBe(200);
    // the same port in clear: this slapd refuses binds without TLS, so the StartTLS success above was encrypted
    await svc(['admin', 'idp', 'ldap', 'update', 'server_starttls=off']);
    const plain = await signIn();
    expect([plain.status, plain.code]).toEqual([400, 'IDPCommunicationError']);
    expect(plain.message).toMatch(/lookup bind failed/);
  });

  it('a host name the certificate does not carry is refused; tls_skip_verify=on is the explicit opt-out', async () => {
    await svc(['admin', 'idp', 'ldap', 'update', `server_addr=ldaps://localhost:${trusted.ldapsPort}`]);
    const r = await signIn();
    expect([r.status, r.code]).toEqual([400, 'IDPCommunicationError']);
    expect(r.message).toMatch(/failed the TLS check: ERR_TLS_CERT_ALTNAME_INVALID/);
    await svc(['admin', 'idp', 'ldap', 'update', 'tls_skip_verify=on']);
    expect((await signIn()).status).toBe(200);
  });

  it('a server certificate of a CA the node does not trust is a clear error, over LDAPS and StartTLS, with no fall-back to plain', async () => {
    await svc(['admin', 'idp', 'ldap', 'update', `server_addr=ldaps://127.0.0.1:${untrusted.ldapsPort}`, 'tls_skip_verify=off']);
    const r = await signIn();
    expect([r.status, r.code]).toEqual([400, 'IDPCommunicationError']);
    expect(r.message).toMatch(/failed the TLS check: (UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT_LOCALLY|SELF_SIGNED_CERT_IN_CHAIN)/);
    expect(r.message).toMatch(/CAs\//);
    // StartTLS on its plain port (which would accept a bind in clear): the failed upgrade ends the attempt
    await svc(['admin', 'idp', 'ldap', 'update', `server_addr=ldap://127.0.0.1:${untrusted.ldapPort}`, 'server_starttls=on']);
    const st = await signIn();
    expect([st.status, st.code]).toEqual([400, 'IDPCommunicationError']);
    expect(st.message).toMatch(/failed the TLS check \(StartTLS\)/);
  });
});

describe('AssumeRoleWithWebIdentity against a provider on HTTPS', () => {
  const webIdentity = async (o: TestOidc) => stsCall(endpoint, { Action: 'AssumeRoleWithWebIdentity', WebIdentityToken: await o.token('tls-app', testFetch) });

  it("a provider whose certificate the node's CAs/ vouch for works; one under an unknown CA is refused with the reason", async () => {
    // Refused when it is configured (the node fetches the discovery document then), with the reason and the remedy.
    const refused = await svcRun(['admin', 'idp', 'openid', 'add', `config_url=${oidcUntrusted.issuer}/.well-known/openid-configuration`, 'client_id=tls-app']);
    const err = JSON.parse(refused.out) as { Code: string; Message: string };
    expect([refused.code, err.Code]).toEqual([1, 'IDPCommunicationError']);
    expect(err.Message).toMatch(/discovery document .* failed the TLS check: (UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT_LOCALLY|SELF_SIGNED_CERT_IN_CHAIN)/);
    expect(err.Message).toContain("adding it to the certificate directory's CAs/");
    const none = await webIdentity(oidcUntrusted);
    expect([none.status, none.code]).toEqual([400, 'XSvcStsNotConfigured']);
    await svc(['admin', 'idp', 'openid', 'add', `config_url=${oidcTrusted.issuer}/.well-known/openid-configuration`, 'client_id=tls-app']);
    const r = await webIdentity(oidcTrusted);
    expect(r.status, r.text).toBe(200);
    const session = new S3Client({ requestHandler: keepAliveHandler(), endpoint, region: 'us-east-1', forcePathStyle: true, maxAttempts: 1, credentials: { accessKeyId: r.cred!.ak, secretAccessKey: r.cred!.sk, sessionToken: r.cred!.token } });
    expect(await (await session.send(new GetObjectCommand({ Bucket: 'tls-data', Key: 'k' }))).Body!.transformToString()).toBe('data');
  });
});
