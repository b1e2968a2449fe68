/**
 * Identity providers behind TLS, verified against the node's CAs. LDAP
 * over TLS for AssumeRoleWithLDAPIdentity, against real `slapd`s
 * serving certificates of CAs made here with openssl: slapd A (a CA the
 * node trusts through its certificate directory's `CAs/`; LDAPS, and
 * StartTLS on its plain port, which refuses everything in clear) and
 * slapd B (a CA the node does not know). LDAPS and StartTLS work with the
 * trusted CA; an untrusted CA, a host name the certificate does not carry
 * or a bind in clear is a clear IDPCommunicationError when the server is
 * configured (nothing is kept) and at sign-in (a CA taken out of `CAs/`
 * later), never a fall-back to plain; `tls_skip_verify=on` is the explicit
 * opt-out. An OpenID provider on HTTPS
 * (npm `oidc-provider`): its discovery document and keys are fetched
 * trusting the same CAs; one under an unknown CA is refused with the
 * reason when it is configured. Configured with the client.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GetObjectCommand, PutObjectCommand, CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { Agent, fetch as undiciFetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueLeaf, makeCa, type TestCa } from './helpers/certs.ts';
import { LDAP_GROUP, LDAP_USER, ldapConfigPairs, populate, type Slapd, startSlapd } from './helpers/slapd.ts';
import { startClientCredentialsProvider, type TestOidc } from './helpers/oidc.ts';
import { stsCall } from './helpers/sts.ts';
import { refusedWith, runSvc, runSvcCommand, type SvcRun, tempDir } from './svc-process.ts';
import { keepAliveHandler } from './helpers/s3-client.ts';
import { verifyLdapUser } from '../src/api/sts/providers.ts';
import { ldapConfigFrom } from '../src/iam/idp-config.ts';
import { staticTrust } from '../src/tls/trust.ts';

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

const svcEnv = () => ({ SVC_ENDPOINT: endpoint, SVC_ACCESS_KEY: ROOT.accessKey, SVC_SECRET_KEY: ROOT.secretKey, HOME: join(work, 'home') });
const svcRun = (args: string[]) => runSvcCommand([...args, '--json'], svcEnv());

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
  /** An `svc admin idp ldap` call the node refuses after asking the server: its message. */
  const refused = async (args: string[]) => refusedWith(await svcRun(['admin', 'idp', 'ldap', ...args]), 'IDPCommunicationError');
  const info = async () => Object.fromEntries((JSON.parse((await svcRun(['admin', 'idp', 'ldap', 'info'])).out) as { info: { key: string; value: string }[] }).info.map((l) => [l.key, l.value]));
  const untrustedCa = /failed the TLS check: (UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT_LOCALLY|SELF_SIGNED_CERT_IN_CHAIN)/;

  it("LDAPS (MinIO's host:port form) and StartTLS work against a server whose CA the node trusts; a change to binding in clear is refused", async () => {
    await svc(['admin', 'idp', 'ldap', 'add', ...ldapConfigPairs(`127.0.0.1:${trusted.ldapsPort}`)]);
    const r = await signIn();
    expect(r.status, r.text).toBe(200);
    const session = new S3Client({ requestHandler: keepAliveHandler(), endpoint, region: 'us-east-1', forcePathStyle: true, maxAttempts: 1, credentials: { accessKeyId: r.cred!.ak, secretAccessKey: r.cred!.sk, sessionToken: r.cred!.token } });
    expect(await (await session.send(new GetObjectCommand({ Bucket: 'tls-data', Key: 'k' }))).Body!.transformToString()).toBe('data');

    await svc(['admin', 'idp', 'ldap', 'update', `server_addr=ldap://127.0.0.1:${trusted.ldapPort}`, 'server_starttls=on']);
    const st = await signIn();
    expect(st.status, st.text).toBe(200);
    // the same port in clear: this slapd refuses binds without TLS (so the StartTLS success above was
    // encrypted); the node's lookup bind when it is configured meets that, and StartTLS stays
    expect(await refused(['update', 'server_starttls=off'])).toMatch(/^the LDAP lookup bind failed: .* confidentiality required \(the server takes binds over TLS only/);
    expect(await info()).toMatchObject({ server_addr: `ldap://127.0.0.1:${trusted.ldapPort}`, server_starttls: 'on' });
    expect((await signIn()).status).toBe(200);
  });

  it('a host name the certificate does not carry is refused; tls_skip_verify=on is the explicit opt-out', async () => {
    expect(await refused(['update', `server_addr=ldaps://localhost:${trusted.ldapsPort}`, 'server_starttls=off'])).toMatch(/failed the TLS check: ERR_TLS_CERT_ALTNAME_INVALID/);
    expect(await info()).toMatchObject({ server_addr: `ldap://127.0.0.1:${trusted.ldapPort}`, server_starttls: 'on', tls_skip_verify: 'off' });
    await svc(['admin', 'idp', 'ldap', 'update', `server_addr=ldaps://localhost:${trusted.ldapsPort}`, 'server_starttls=off', 'tls_skip_verify=on']);
    expect((await signIn()).status).toBe(200);
  });

  it('a server certificate of a CA the node does not trust is refused when it is configured, over LDAPS and StartTLS, with no fall-back to plain', async () => {
    expect(await refused(['update', `server_addr=ldaps://127.0.0.1:${untrusted.ldapsPort}`, 'tls_skip_verify=off'])).toMatch(untrustedCa);
    await svc(['admin', 'idp', 'ldap', 'remove']);
    const ldaps = await refused(['add', ...ldapConfigPairs(`ldaps://127.0.0.1:${untrusted.ldapsPort}`)]);
    expect(ldaps).toMatch(new RegExp(`^the LDAP server ldaps://127\\.0\\.0\\.1:${untrusted.ldapsPort} ${untrustedCa.source}`));
    expect(ldaps).toContain("trust its CA by adding it to the certificate directory's CAs/");
    // StartTLS on its plain port (which would accept a bind in clear): the failed upgrade ends the attempt
    expect(await refused(['add', ...ldapConfigPairs(`ldap://127.0.0.1:${untrusted.ldapPort}`), 'server_starttls=on'])).toMatch(/failed the TLS check \(StartTLS\)/);
    expect(JSON.parse((await svcRun(['admin', 'idp', 'ldap', 'list'])).out)).toEqual([]);
    expect((await signIn()).code).toBe('XSvcStsNotConfigured');
    // as a person reads it: the reason, and that nothing changed
    const text = await runSvcCommand(['admin', 'idp', 'ldap', 'add', ...ldapConfigPairs(`ldaps://127.0.0.1:${untrusted.ldapsPort}`)], svcEnv());
    expect(text.code).toBe(1);
    expect(text.err).toMatch(new RegExp(`^svc: IDPCommunicationError: the LDAP server ldaps://\\S+ ${untrustedCa.source}`));
    expect(text.err).toMatch(/\nnext: the identity provider configuration was left as it was/);
  });

  it('sign-in checks the certificate too: with its CA taken out of CAs/ after the server was configured, the sign-in is refused with the reason', async () => {
    await svc(['admin', 'idp', 'ldap', 'add', ...ldapConfigPairs(`ldaps://127.0.0.1:${trusted.ldapsPort}`)]);
    expect((await signIn()).status).toBe(200);
    const caFile = join(work, 'certs', 'CAs', 'ldap-ca.crt');
    rmSync(caFile);
    // the node follows its certificate directory (a watch, and a poll every 5 s)
    let r = await signIn();
    for (let i = 0; i < 100 && r.status === 200; i++) r = await new Promise((res) => setTimeout(res, 200)).then(signIn);
    expect([r.status, r.code]).toEqual([400, 'IDPCommunicationError']);
    expect(r.message).toMatch(untrustedCa);
    writeFileSync(caFile, caA.pem);
    for (let i = 0; i < 100 && r.status !== 200; i++) r = await new Promise((res) => setTimeout(res, 200)).then(signIn);
    expect(r.status, r.text).toBe(200);
  });
});

describe("an LDAP sign-in's own bind", () => {
  it('a connection that fails after the lookup (here: its CA no longer trusted) is said as the way there, never as a wrong password', async () => {
    const kv = new Map(ldapConfigPairs(`ldaps://127.0.0.1:${trusted.ldapsPort}`).map((p) => [p.slice(0, p.indexOf('=')), p.slice(p.indexOf('=') + 1)] as const));
    const cfg = ldapConfigFrom(kv, (s) => ({ v: 'plain', s }));
    const password = kv.get('lookup_bind_password')!;
    const good = staticTrust([caA.pem]);
    const none = staticTrust([]);
    const mappings = { [LDAP_GROUP.toLowerCase()]: ['readonly'] };
    // trusted throughout: signed in; a wrong password: refused as such
    expect(await verifyLdapUser(cfg, password, mappings, LDAP_USER.name, LDAP_USER.password, good)).toMatchObject({ subject: LDAP_USER.name, policies: ['readonly'] });
    await expect(verifyLdapUser(cfg, password, mappings, LDAP_USER.name, 'not-her-password', good)).rejects.toMatchObject({ code: 'AccessDenied', message: 'the LDAP user name or password is wrong' });
    // the lookup connects with the CA trusted, the user's own bind after it was taken out
    let connections = 0;
    const revoked = { version: 0, insecure: false, connectOptions: () => (connections++ === 0 ? good : none).connectOptions() };
    const err = await verifyLdapUser(cfg, password, mappings, LDAP_USER.name, LDAP_USER.password, revoked).catch((e: unknown) => e);
    expect(connections).toBe(2);
    expect(err).toMatchObject({ code: 'IDPCommunicationError' });
    expect((err as Error).message).toMatch(/^the LDAP server ldaps:\/\/127\.0\.0\.1:\d+ failed the TLS check: (UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT_LOCALLY|SELF_SIGNED_CERT_IN_CHAIN)/);
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
