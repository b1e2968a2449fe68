/**
 * Signing in to the console with an LDAP account against a running `slapd`
 * (Debian's; CI installs it): the sign-in page offers "LDAP account" once an
 * LDAP server is configured, the console turns the user name and password into
 * temporary credentials with the node's AssumeRoleWithLDAPIdentity, and the
 * session may do exactly what the policies mapped to the user's LDAP groups
 * allow. Wrong passwords are refused and count against the sign-in limiter
 * like wrong keys. Through the console API and in a real headless Chromium.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionInfo, SignInOptions } from '../src/api/console/wire.ts';
import type { AdminClient } from '../src/cli/admin/client.ts';
import { encryptData } from '../src/iam/madmin-crypto.ts';
import { type Browser, expectReadOnlyBucket, HAVE_CHROMIUM, launchBrowser } from './helpers/browser.ts';
import { CONSOLE_ACCESS_KEY, CONSOLE_SECRET_KEY, ConsoleClient, type ConsoleNode, seedReports, startConsoleNode } from './helpers/console.ts';
import { LDAP_GROUP, LDAP_USER, ldapConfigPairs, populate, type Slapd, startSlapd } from './helpers/slapd.ts';
import { tempDir } from './svc-process.ts';

let node: ConsoleNode;
let slapd: Slapd;
let browser: Browser;
let admin: AdminClient;

beforeAll(async () => {
  if (!HAVE_CHROMIUM) throw new Error("no Chromium: the console browser tests need Debian's chromium (apt-get install chromium; CI does this in .ci/run)");
  slapd = await startSlapd(tempDir('console-ldap'));
  await populate(slapd);
  node = await startConsoleNode(1);
  admin = await seedReports(node);
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await node?.stop();
  slapd?.stop();
});

const options = async (c: ConsoleClient) => (await c.call('GET', 'api/sso')).json<SignInOptions>();
const ldapSignIn = (c: ConsoleClient, ldapUsername: string, ldapPassword: string) => c.call('POST', 'api/session', { body: { ldapUsername, ldapPassword } });

describe('console sign-in with an LDAP account (slapd)', () => {
  it('without an LDAP server: not offered, and refused with the reason', async () => {
    const c = new ConsoleClient(`${node.console}/svc/console/`);
    expect(await options(c)).toMatchObject({ ldap: false });
    const r = await ldapSignIn(c, LDAP_USER.name, LDAP_USER.password);
    expect(r.status).toBe(400);
    expect(r.json()).toMatchObject({ code: 'XSvcStsNotConfigured' });
    expect(c.cookie).toBe('');
  });

  it('configured: offered; a wrong password is refused, the right one opens a session with the group policy only', async () => {
    await admin.request('PUT', 'v3/idp-config/ldap/_', {}, await encryptData(CONSOLE_SECRET_KEY, Buffer.from(ldapConfigPairs(`ldap://127.0.0.1:${slapd.ldapPort}`).join(' '))), 'application/octet-stream');
    await admin.encrypted('POST', 'v3/idp/ldap/policy/attach', {}, { policies: ['read-reports'], group: LDAP_GROUP }, true);
    const c = new ConsoleClient(`${node.console}/svc/console/`);
    expect(await options(c)).toMatchObject({ ldap: true });

    const wrong = await ldapSignIn(c, LDAP_USER.name, 'not-her-password');
    expect(wrong.status).toBe(401);
    expect(wrong.json()).toMatchObject({ code: 'XSvcConsoleInvalidCredentials' });
    expect(wrong.text).not.toContain('not-her-password');
    expect((await ldapSignIn(c, '', 'x')).status).toBe(400);
    expect(c.cookie).toBe('');

    const ok = await ldapSignIn(c, LDAP_USER.name, LDAP_USER.password);
    expect(ok.status).toBe(200);
    const who = ok.json<SessionInfo>();
    c.csrf = who.csrfToken;
    // temporary credentials of the LDAP user, not an admin, ending when they do
    expect(who.accessKey).not.toBe(CONSOLE_ACCESS_KEY);
    expect(who.admin).toBe(false);
    expect(Date.parse(who.expiresAt) - Date.now()).toBeLessThanOrEqual(3_600_000 + 5_000);
    expect((await c.call('GET', 'api/buckets/reports/object?key=q3.csv')).status).toBe(200);
    expect((await c.call('GET', 'api/buckets/private/object?key=q3.csv')).status).toBe(403);
    expect(ok.text).not.toContain(LDAP_USER.password);
  });

  it('in Chromium: "LDAP account", user name and password, then the bucket pages the group may read', async () => {
    const page = browser.page;
    await browser.ctx.clearCookies();
    await page.goto(`${node.console}/svc/console/`);
    await page.click('#sign-in-with-ldap');
    expect(await page.locator('label[for=access-key]').textContent()).toBe('LDAP user name');
    await page.fill('#access-key', 'lena');
    await page.fill('#secret-key', LDAP_USER.password);
    await page.click('#sign-in');
    await page.locator('#sign-out').waitFor();
    await page.waitForSelector('#buckets-table >> text=reports');
    expect(await page.$('#buckets-table >> text=private')).toBeNull();
    await expectReadOnlyBucket(page, 'reports', 'q3.csv');
  });

  it('failed LDAP sign-ins from one address are limited like wrong keys', async () => {
    const c = new ConsoleClient(`${node.console}/svc/console/`);
    let last = 0;
    for (let i = 0; i < 12 && last !== 429; i++) last = (await ldapSignIn(c, 'lena', `guess-${i}`)).status;
    expect(last).toBe(429);
    // the right password now waits too
    const r = await ldapSignIn(c, LDAP_USER.name, LDAP_USER.password);
    expect(r.status).toBe(429);
    expect(r.json()).toMatchObject({ code: 'XSvcConsoleTooManySignIns' });
  });
});
