/**
 * "Sign in with SSO" in a real headless Chromium against a running OpenID
 * Connect provider (npm `oidc-provider`, its development login pages): the
 * console sends the browser to the provider (authorization code + PKCE),
 * exchanges the code, turns the ID token into temporary credentials with
 * the node's AssumeRoleWithWebIdentity, and the session may do only what
 * the token's policy claim allows. A person whose token names no policy
 * comes back to the sign-in page with the reason; without a provider
 * configured there is no button.
 */
import type { Server } from 'node:http';
import Provider from 'oidc-provider';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionInfo } from '../src/api/console/wire.ts';
import type { AdminClient } from '../src/cli/admin/client.ts';
import { encryptData } from '../src/iam/madmin-crypto.ts';
import { type Browser, expectReadOnlyBucket, HAVE_CHROMIUM, launchBrowser } from './helpers/browser.ts';
import { CONSOLE_ACCESS_KEY, CONSOLE_SECRET_KEY, type ConsoleNode, seedReports, startConsoleNode } from './helpers/console.ts';
import { freePort } from './svc-process.ts';

/** The policy claim each person's token carries. */
const POLICY_OF: Record<string, string> = { ana: 'read-reports', bo: '' };

let node: ConsoleNode;
let browser: Browser;
let oidc: Server;
let issuer: string;
let admin: AdminClient;

beforeAll(async () => {
  if (!HAVE_CHROMIUM) throw new Error("no Chromium: the console browser tests need Debian's chromium (apt-get install chromium; CI does this in .ci/run)");
  node = await startConsoleNode(1);
  admin = await seedReports(node);

  const port = await freePort();
  issuer = `http://127.0.0.1:${port}`;
  const provider = new Provider(issuer, {
    clients: [{ client_id: 'svc-console', client_secret: 'svc-console-secret', grant_types: ['authorization_code'], response_types: ['code'], redirect_uris: [`${node.console}/svc/console/sso/callback`] }],
    claims: { openid: ['sub', 'policy', 'preferred_username'] },
    // the claims of the granted scopes go into the ID token itself (the node's STS reads them there)
    conformIdTokenClaims: false,
    findAccount: (_ctx, id) => ({ accountId: id, claims: () => ({ sub: id, preferred_username: id, ...(POLICY_OF[id] ? { policy: POLICY_OF[id] } : {}) }) }),
    features: { devInteractions: { enabled: true } },
    // every authorization request must carry an S256 code challenge, and its token exchange the verifier
    pkce: { required: () => true },
  });
  oidc = provider.listen(port);
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((r) => oidc?.close(r));
  await node?.stop();
});

/** Through the provider's development login and consent pages, back to the console. */
async function ssoAs(page: Page, login: string): Promise<void> {
  await browser.ctx.clearCookies();
  await page.goto(`${node.console}/svc/console/`);
  await page.click('#sign-in-sso');
  await page.waitForURL((u) => u.origin === issuer);
  await page.fill('input[name=login]', login);
  await page.fill('input[name=password]', 'any');
  await page.click('button[type=submit]');
  // consent (the first time for this person)
  await page.waitForURL((u) => u.origin !== issuer || u.pathname.includes('/interaction/'));
  if (new URL(page.url()).origin === issuer) await page.click('button[type=submit]');
  await page.waitForURL((u) => u.origin === node.console);
}

describe('console single sign-on (Chromium, oidc-provider)', () => {
  it('no provider configured: only the keys form', async () => {
    const page = browser.page;
    await browser.ctx.clearCookies();
    await page.goto(`${node.console}/svc/console/`);
    await page.locator('#access-key').waitFor();
    // the page asked and was told no
    await page.waitForLoadState('networkidle');
    expect(await page.$('#sign-in-sso')).toBeNull();
  });

  it('signs in through the provider; the session may do what the policy claim allows and nothing else', async () => {
    await admin.request('PUT', 'v3/idp-config/openid/_', {}, await encryptData(CONSOLE_SECRET_KEY, Buffer.from(`config_url=${issuer}/.well-known/openid-configuration client_id=svc-console client_secret=svc-console-secret display_name="Test SSO"`)), 'application/octet-stream');
    const page = browser.page;
    await browser.ctx.clearCookies();
    await page.goto(`${node.console}/svc/console/`);
    expect(await page.locator('#sign-in-sso').textContent()).toBe('Sign in with Test SSO');
    await ssoAs(page, 'ana');
    await page.locator('#sign-out').waitFor();
    // read-reports: no cluster pages, the bucket browsable, nothing to delete or upload
    await page.waitForSelector('#buckets-table >> text=reports');
    expect(await page.$('#buckets-table >> text=private')).toBeNull();
    await expectReadOnlyBucket(page, 'reports', 'q3.csv');
    // the session's calls are signed with temporary credentials: the console's API answers as that session
    const who = (await page.evaluate(async () => (await fetch('api/session', { headers: { accept: 'application/json' } })).json())) as SessionInfo;
    expect(who.accessKey).not.toBe(CONSOLE_ACCESS_KEY);
    expect(who.admin).toBe(false);
    // (deployment-wide: read-reports names one bucket, so nothing holds everywhere)
    expect(who.permissions['s3:DeleteObject']).toBe(false);
    expect(who.permissions['admin:ListUsers']).toBe(false);
    // while the object itself opens: the console's S3 calls carry the session token
    const status = (path: string) => page.evaluate(async (p) => (await fetch(p, { headers: { accept: 'application/json' } })).status, path);
    expect(await status('api/buckets/reports/object?key=q3.csv')).toBe(200);
    expect(await status('api/buckets/private/object?key=q3.csv')).toBe(403);
    // it ends when the credentials do (the ID token's lifetime here), not later
    expect(Date.parse(who.expiresAt) - Date.now()).toBeLessThanOrEqual(3_600_000);
  });

  it('a token that names no policy returns to the sign-in page with the reason', async () => {
    const page = browser.page;
    await ssoAs(page, 'bo');
    await page.locator('#login-messages >> text=names no policy').waitFor();
    expect(new URL(page.url()).search).toBe('');
    expect(await page.$('#sign-out')).toBeNull();
  });
});
