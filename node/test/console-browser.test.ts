/**
 * The web console in a real headless Chromium against real `svc server`
 * processes, served directly and under /storage/ behind a prefix-rewriting
 * proxy the test starts: sign in (keyboard only), see a 4-drive node's pool
 * and drives, create a bucket, upload a 20 MiB file (in parts) with a
 * progress bar, browse and page through folders, download it byte-exact,
 * share a link, see a bucket's object lock, encryption and lifecycle rules,
 * take a drive away and see it offline and the node degraded,
 * then start and watch a decommission on a two-pool node. Along the way:
 * no page shows anything without a session, a cross-site form post changes
 * nothing, the secret key is nowhere in the browser, the pages fit a phone.
 *
 * Screenshots of every page go to artifacts/console/<direct|proxied>/
 * (git-ignored; CI keeps them). Prints one skip line without Chromium.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CreateBucketCommand,
  GetObjectCommand,
  HeadBucketCommand,
  PutBucketEncryptionCommand,
  PutBucketLifecycleConfigurationCommand,
  PutObjectCommand,
  PutObjectLockConfigurationCommand,
} from '@aws-sdk/client-s3';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { formatTime } from '../console-ui/src/format.ts';
import { CONSOLE_ACCESS_KEY, CONSOLE_SECRET_KEY, type ConsoleNode, startConsoleNode } from './helpers/console.ts';
import { kmsKeyLine } from './helpers/governance.ts';
import { CHROMIUM, HAVE_CHROMIUM, launchBrowser, SCREENSHOTS, shot, shotOnFailure } from './helpers/browser.ts';
import { type PrefixProxy, startPrefixProxy } from './helpers/prefix-proxy.ts';

if (!HAVE_CHROMIUM) console.log(`skipped: no Chromium at ${CHROMIUM} (apt-get install chromium); the console browser tests did not run`);

export { SCREENSHOTS };
const TIME_ZONE = 'Asia/Kolkata';
const MiB = 1024 * 1024;

const tmp = mkdtempSync();
function mkdtempSync(): string {
  const d = join(tmpdir(), `svc-console-browser-${randomBytes(4).toString('hex')}`);
  mkdirSync(d, { recursive: true });
  return d;
}
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const launch = () => launchBrowser({ timezoneId: TIME_ZONE });

/** Everything the console sent the browser, for the secret check. */
function recordResponses(page: Page): string[] {
  const bodies: string[] = [];
  page.on('response', (r) => {
    if (r.request().resourceType() === 'document' || r.url().includes('/api/')) {
      void r.text().then(
        (t) => bodies.push(`${r.url()}\n${JSON.stringify(r.headers())}\n${t}`),
        () => undefined,
      );
    }
  });
  return bodies;
}

async function signIn(page: Page, root: string): Promise<void> {
  await page.goto(root);
  await page.locator('#access-key').waitFor();
  // keyboard only: the form starts focused on the access key
  expect(await page.evaluate('document.activeElement?.id')).toBe('access-key');
  await page.keyboard.type(CONSOLE_ACCESS_KEY);
  await page.keyboard.press('Tab');
  await page.keyboard.type(CONSOLE_SECRET_KEY);
  await page.keyboard.press('Enter');
  await page.locator('#nav-overview').waitFor();
}

/** A page on another site (localhost vs 127.0.0.1) that posts a form to the console on load. */
async function startEvilSite(target: string): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(`<!doctype html><title>elsewhere</title><body>
<form id="f" method="POST" action="${target}api/buckets" enctype="text/plain"><input name='{"name":"evil-bucket","x":"' value='"}'></form>
<script>fetch(${JSON.stringify(`${target}api/buckets`)}, { method: 'POST', mode: 'no-cors', credentials: 'include', headers: { 'content-type': 'text/plain' }, body: '{"name":"evil-fetch"}' }).finally(() => document.getElementById('f').submit());</script>
</body>`);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://localhost:${(server.address() as AddressInfo).port}/`,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

const FLOWS = [
  { flow: 'direct', prefix: '' },
  { flow: 'proxied', prefix: '/storage' },
] as const;

describe.skipIf(!HAVE_CHROMIUM).each(FLOWS)('web console in Chromium ($flow)', ({ flow, prefix }) => {
  let single: ConsoleNode;
  /** The two-pool node for the decommission. */
  let two: ConsoleNode;
  let proxy: PrefixProxy | undefined;
  let twoProxy: PrefixProxy | undefined;
  let browser: Awaited<ReturnType<typeof launch>>;
  let page: Page;
  let root: string;
  let bodies: string[];
  const big = randomBytes(20 * MiB);
  const bigPath = join(tmp, flow, 'big.bin');

  beforeAll(async () => {
    mkdirSync(join(tmp, flow), { recursive: true });
    writeFileSync(bigPath, big);
    // the prefix proxy runs on loopback: the nodes trust its X-Forwarded-* headers
    const trust: Record<string, string> = prefix === '' ? {} : { SVC_TRUSTED_PROXIES: 'loopback' };
    [single, two] = await Promise.all([startConsoleNode(1, { SVC_KMS_SECRET_KEY: kmsKeyLine('console-key'), ...trust }), startConsoleNode(2, { ...trust, SVC_SCANNER_INTERVAL: '1s' })]);
    if (prefix !== '') [proxy, twoProxy] = await Promise.all([startPrefixProxy(prefix, single.console), startPrefixProxy(prefix, two.console)]);
    root = prefix === '' ? `${single.console}/svc/console/` : `${proxy!.origin}${prefix}/svc/console/`;
    browser = await launch();
    page = browser.page;
    bodies = recordResponses(page);
  }, 120_000);

  // a failing step leaves its screenshot beside the others
  afterEach(shotOnFailure(flow, () => page));

  afterAll(async () => {
    await browser?.close();
    await proxy?.close();
    await twoProxy?.close();
    await Promise.all([single?.stop(), two?.stop()]);
  });

  it('shows nothing without a session: every page is the sign-in form', async () => {
    // through the proxy, start where a person would: the prefix itself
    await page.goto(prefix === '' ? `${single.console}/` : `${proxy!.origin}${prefix}/`);
    await page.locator('#access-key').waitFor();
    expect(page.url()).toBe(root);
    await shot(page, flow, 'sign-in');
    for (const hash of ['#/', '#/pools', '#/healing', '#/buckets', '#/buckets/any', '#/buckets/any/object?key=k']) {
      await page.goto(`${root}${hash}`);
      await page.locator('#access-key').waitFor();
      expect(await page.locator('#nav-overview').count()).toBe(0);
      expect(await page.locator('main').innerText()).not.toMatch(/Pool 0|drives online|127\.0\.0\.1:/);
    }
    if (proxy) expect(proxy.forwarded.every((p) => p.startsWith(`${prefix}/`))).toBe(true);
  });

  it("signs in with the keyboard and shows the node's health, readiness, capacity and alerts", async () => {
    await signIn(page, root);
    await expect.poll(() => page.locator('#health-state').getAttribute('data-state')).toBe('healthy');
    expect(await page.locator('#readiness-state').innerText()).toContain('Ready');
    expect(await page.locator('.alerts > li').evaluateAll((els) => els.map((e) => e.id))).toEqual(['alert-readiness', 'alert-restarts', 'alert-heal-queue', 'alert-scanner', 'alert-capacity', 'alert-certificates', 'alert-clock-skew']);
    expect(await page.locator('figure.capacity-chart svg[role="img"]').count()).toBe(1);
    // times in the browser's zone, zone named
    const iso = (await page.locator('.updated time').getAttribute('datetime'))!;
    expect(await page.locator('.updated time').innerText()).toBe(formatTime(iso, { timeZone: TIME_ZONE, locale: 'en-US' }));
    expect(await page.locator('.updated time').innerText()).toContain('GMT+5:30');
    // the secret key left the form and the page at once
    expect(await page.locator('#secret-key').count()).toBe(0);
    await shot(page, flow, 'overview');
    // keyboard: on a fresh load the first Tab lands on the skip link, which moves focus into the page
    await page.reload();
    await page.locator('#health-state').waitFor();
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement?.textContent')).toBe('Skip to content');
    await page.keyboard.press('Enter');
    expect(await page.evaluate('document.activeElement?.id')).toBe('main');
    // the navigation is just before the content; Enter follows a link, and focus goes to the new page's heading
    for (let i = 0; i < 6 && (await page.evaluate('document.activeElement?.id')) !== 'nav-pools'; i++) await page.keyboard.press('Shift+Tab');
    expect(await page.evaluate('document.activeElement?.id')).toBe('nav-pools');
    await page.keyboard.press('Enter');
    await page.locator('#pool-0').waitFor();
    expect(await page.evaluate('document.activeElement?.id')).toBe('page-title');
  });

  it("shows the 4-drive node's pool and every drive", async () => {
    const drives = page.locator('#drives-0-0 .drive-state');
    await expect.poll(() => drives.count()).toBe(4);
    for (let i = 0; i < 4; i++) {
      expect(await drives.nth(i).getAttribute('data-state')).toBe('online');
      expect(await drives.nth(i).getAttribute('data-endpoint')).toBe(single.drives[0]![i]);
    }
    expect(await page.locator('#pool-0').innerText()).toMatch(/1 erasure set of 4 drives, parity EC:2/);
    expect(await page.locator('#pool-status-0').innerText()).toContain('active');
    await shot(page, flow, 'pools');
    await page.click('#nav-healing');
    await page.locator('#bg-heal-state').waitFor();
    await page.locator('#replacement-state').waitFor();
    await shot(page, flow, 'healing');
  });

  it('creates a bucket, uploads a 20 MiB file in parts with progress, browses, pages and downloads it byte-exact', async () => {
    await page.click('#nav-buckets');
    await page.fill('#bucket-name', 'photos');
    await page.click('#create-bucket-submit');
    await page.locator('#bucket-result .success').waitFor();
    await page.locator('#buckets-table a.bucket-link', { hasText: 'photos' }).waitFor();
    await shot(page, flow, 'buckets');
    await page.click('#buckets-table a.bucket-link');
    await page.locator('#empty-folder').waitFor();
    await page.fill('#folder-name', 'album');
    await page.click('#new-folder-open');
    await page.locator('h1', { hasText: 'photos/album/' }).waitFor();
    // watch the progress bar as the page draws it
    await page.evaluate(`(() => {
      window.progressSeen = [];
      new MutationObserver(() => {
        const bar = document.getElementById('upload-progress-0');
        if (bar && window.progressSeen[window.progressSeen.length - 1] !== bar.value / bar.max) window.progressSeen.push(bar.value / bar.max);
      }).observe(document.body, { subtree: true, attributes: true, childList: true });
    })()`);
    const parts: string[] = [];
    page.on('request', (r) => {
      if (/\/api\/buckets\/photos\/multipart\/[^/]+\/\d+\?/.test(r.url())) parts.push(r.url());
    });
    await page.setInputFiles('#upload-input', bigPath);
    await page.locator('#upload-status-0 [data-state="done"]').waitFor({ timeout: 60_000 });
    const seen = (await page.evaluate('window.progressSeen')) as number[];
    expect(seen.some((f) => f > 0 && f < 1)).toBe(true);
    expect(seen[seen.length - 1]).toBe(1);
    expect(await page.locator('#upload-text-0').innerText()).toBe('20.0 MiB of 20.0 MiB (100 %)');
    expect(parts.length).toBe(3); // 8 + 8 + 4 MiB
    await page.locator('#objects-table a.object-link', { hasText: 'big.bin' }).waitFor();
    await shot(page, flow, 'bucket-upload');
    // browse from the top: the folder, then the file
    await page.click('nav.breadcrumbs a:text-is("photos")');
    await page.locator('#objects-table a.folder-link', { hasText: 'album/' }).click();
    const row = page.locator('#objects-table tr', { hasText: 'big.bin' });
    expect(await row.locator('td').nth(1).innerText()).toBe('20.0 MiB');
    const [download] = await Promise.all([page.waitForEvent('download'), row.locator('a.download-link').click()]);
    expect(download.suggestedFilename()).toBe('big.bin');
    const saved = join(tmp, `${flow}-downloaded.bin`);
    await download.saveAs(saved);
    expect(sha256(readFileSync(saved))).toBe(sha256(big));
    // pages of a long folder
    await Promise.all(Array.from({ length: 30 }, (_, i) => single.s3.send(new PutObjectCommand({ Bucket: 'photos', Key: `many/f${String(i).padStart(2, '0')}.txt`, Body: `file ${i}` }))));
    await page.click('nav.breadcrumbs a:text-is("photos")');
    await page.locator('#objects-table a.folder-link', { hasText: 'many/' }).click();
    await page.locator('#page-size').selectOption('25');
    await expect.poll(() => page.locator('#objects-table a.object-link').count()).toBe(25);
    await page.click('#page-next');
    await expect.poll(() => page.locator('#objects-table a.object-link').count()).toBe(5);
    expect(await page.locator('#page-number').innerText()).toBe('Page 2');
    expect(await page.locator('#objects-table a.object-link').first().innerText()).toBe('f25.txt');
    await page.click('#page-prev');
    await expect.poll(() => page.locator('#objects-table a.object-link').first().innerText()).toBe('f00.txt');
  });

  it("shows an object's metadata and versions, and shares a link that works without the console", async () => {
    await page.goto(`${root}#/buckets/photos/object?key=album%2Fbig.bin`);
    await page.locator('#object-details dl').waitFor();
    expect(await page.locator('#object-details').innerText()).toContain('20.0 MiB (20,971,520 bytes)');
    await page.locator('#versions-table').waitFor();
    await page.click('#share-create');
    const url = await page.locator('#share-url').inputValue();
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/photos\/album\/big\.bin\?.*X-Amz-Signature=/);
    await shot(page, flow, 'object');
    const shared = Buffer.from(await (await fetch(url)).arrayBuffer());
    expect(sha256(shared)).toBe(sha256(big));
  });

  it("shows a bucket's data protection: object lock (versioning locked on), default encryption, lifecycle rules", async () => {
    await single.s3.send(new CreateBucketCommand({ Bucket: 'vault', ObjectLockEnabledForBucket: true }));
    await single.s3.send(new PutObjectLockConfigurationCommand({ Bucket: 'vault', ObjectLockConfiguration: { ObjectLockEnabled: 'Enabled', Rule: { DefaultRetention: { Mode: 'GOVERNANCE', Days: 30 } } } }));
    await single.s3.send(new PutBucketEncryptionCommand({ Bucket: 'vault', ServerSideEncryptionConfiguration: { Rules: [{ ApplyServerSideEncryptionByDefault: { SSEAlgorithm: 'aws:kms', KMSMasterKeyID: 'console-key' } }] } }));
    await single.s3.send(
      new PutBucketLifecycleConfigurationCommand({
        Bucket: 'vault',
        LifecycleConfiguration: { Rules: [{ ID: 'tidy', Status: 'Enabled', Filter: { Prefix: 'tmp/' }, Expiration: { Days: 7 }, AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 } }] },
      }),
    );
    await page.goto(`${root}#/buckets/vault`);
    await page.locator('#governance').waitFor();
    expect(await page.locator('#gov-lock').innerText()).toBe('On: new versions kept 30 days (GOVERNANCE)');
    expect(await page.locator('#gov-encryption').innerText()).toBe('SSE-KMS, key console-key');
    expect(await page.locator('#gov-lifecycle').innerText()).toBe('1 rule');
    const rule = page.locator('#lifecycle-table tbody tr');
    expect(await rule.count()).toBe(1);
    const cells = (await rule.locator('td').allInnerTexts()).map((t) => t.trim());
    expect(cells[0]).toBe('tidy');
    expect(cells[1]).toMatch(/Enabled$/);
    expect(cells.slice(2)).toEqual(['prefix tmp/', 'expire current versions after 7 days\nabort unfinished uploads after 1 day']);
    // Object lock keeps versioning on: the switch is off limits.
    await expect.poll(() => page.locator('#versioning-state').innerText()).toBe('Enabled (object lock keeps it on)');
    expect(await page.locator('#versioning-toggle').isDisabled()).toBe(true);
    await shot(page, flow, 'bucket-governance');
    // A plain bucket: nothing set.
    await page.goto(`${root}#/buckets/photos`);
    await page.locator('#governance').waitFor();
    expect(await page.locator('#gov-lock').innerText()).toBe('Off');
    expect(await page.locator('#gov-encryption').innerText()).toBe('None');
    expect(await page.locator('#gov-lifecycle').innerText()).toBe('No rules');
    expect(await page.locator('#lifecycle-table').count()).toBe(0);
    expect(await page.locator('#versioning-toggle').isDisabled()).toBe(false);
  });

  it('starts a heal of a bucket and follows it to its result', async () => {
    await page.click('#nav-healing');
    await page.locator('#heal-form').waitFor();
    const caps = (await (await page.request.get(`${root}api/healing`)).json()) as { capabilities: { heal: { adminHeal: boolean } } };
    if (!caps.capabilities.heal.adminHeal) {
      expect(await page.locator('#heal-start').isDisabled()).toBe(true);
      expect(await page.locator('#heal-form').innerText()).toContain('This build has no heal engine: a heal cannot be started yet.');
      console.log('heal engine not in this build: checked that the console says so; this step runs a real heal once the engine lands');
      return;
    }
    // Something to heal: one drive loses its copy of the big object (metadata and shards).
    const lost = join(single.drives[0]![0]!, 'photos', 'album', 'big.bin');
    expect(existsSync(lost)).toBe(true);
    rmSync(lost, { recursive: true });
    await page.fill('#heal-bucket', 'photos');
    await page.check('#heal-deep');
    await page.click('#heal-start');
    // The badge reads "<icon> finished"; the heal lists the object it rebuilt.
    await expect.poll(() => page.locator('#heal-summary').innerText(), { timeout: 45_000 }).toMatch(/finished$/);
    await expect.poll(() => page.locator('#heal-task').innerText(), { timeout: 10_000 }).toMatch(/photos\/album\/big\.bin\s+healed/);
    expect(existsSync(join(lost, 'xl.meta'))).toBe(true);
    await shot(page, flow, 'healing-heal-finished');
  });

  it('takes a drive away: the drive shows offline and the node degraded', async () => {
    const d4 = single.drives[0]![3]!;
    renameSync(d4, `${d4}.away`);
    try {
      await page.click('#nav-overview');
      await expect.poll(() => page.locator('#health-state').getAttribute('data-state'), { timeout: 20_000 }).toBe('degraded');
      expect(await page.locator('#node-health .problems').innerText()).toContain(`1 drive offline (${d4})`);
      await shot(page, flow, 'overview-degraded');
      await page.click('#nav-pools');
      const away = page.locator(`#drives-0-0 .drive-state[data-endpoint="${d4}"]`);
      await expect.poll(() => away.getAttribute('data-state')).toBe('offline');
      expect(await page.locator('#pool-0 h3').first().innerText()).toContain('3 of 4 drives online');
      await shot(page, flow, 'pools-drive-offline');
    } finally {
      renameSync(`${d4}.away`, d4);
    }
    await page.click('#nav-overview');
    await expect.poll(() => page.locator('#health-state').getAttribute('data-state'), { timeout: 20_000 }).toBe('healthy');
  });

  it('fits a phone: no page scrolls sideways', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      for (const [hash, ready, name] of [
        ['#/', '#health-state', 'phone-overview'],
        ['#/pools', '#drives-0-0', 'phone-pools'],
        ['#/healing', '#bg-heal-state', 'phone-healing'],
        ['#/buckets/photos?prefix=album%2F', '#objects-table', 'phone-bucket'],
      ] as const) {
        await page.goto(`${root}${hash}`);
        await page.locator(ready).waitFor();
        expect(await page.evaluate('document.documentElement.scrollWidth - window.innerWidth')).toBeLessThanOrEqual(0);
        await shot(page, flow, name);
      }
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
    }
  });

  it('a cross-site form post changes nothing; the secret key is nowhere in the browser', async () => {
    const evil = await startEvilSite(root);
    try {
      const other = await browser.ctx.newPage();
      // the page posts on load and the browser follows the form to the console's answer
      await Promise.all([other.waitForURL(/\/api\/buckets$/, { timeout: 15_000 }), other.goto(evil.url)]);
      expect(await other.locator('body').innerText()).toContain('XSvcConsoleSignInRequired');
      await other.close();
    } finally {
      await evil.close();
    }
    for (const b of ['evil-bucket', 'evil-fetch']) {
      expect(await single.s3.send(new HeadBucketCommand({ Bucket: b })).then(() => true, () => false)).toBe(false);
    }
    // the session cookie: HttpOnly, SameSite=Strict, scoped to the console's public path
    const cookies = await browser.ctx.cookies();
    const session = cookies.find((c) => c.name === 'svc_console')!;
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: `${prefix}/svc/console/` });
    expect(session.value).not.toContain(CONSOLE_SECRET_KEY);
    await page.goto(`${root}#/`);
    await page.locator('#health-state').waitFor();
    const stored = (await page.evaluate(`(async () => ({
      local: JSON.stringify({ ...localStorage }),
      session: JSON.stringify({ ...sessionStorage }),
      cookie: document.cookie,
      idb: JSON.stringify(await indexedDB.databases()),
      caches: JSON.stringify(await caches.keys()),
      html: document.documentElement.outerHTML,
    }))()`)) as Record<string, string>;
    expect(stored.cookie).toBe(''); // HttpOnly: scripts never see the session
    for (const v of Object.values(stored)) expect(v).not.toContain(CONSOLE_SECRET_KEY);
    await expect.poll(() => bodies.length).toBeGreaterThan(10);
    for (const b of bodies) expect(b).not.toContain(CONSOLE_SECRET_KEY);
  });

  it('signs out: the sign-in form again, and the old cookie is worthless', async () => {
    const before = (await browser.ctx.cookies()).find((c) => c.name === 'svc_console')!.value;
    await page.click('#sign-out');
    await page.locator('#access-key').waitFor();
    expect((await browser.ctx.cookies()).find((c) => c.name === 'svc_console')).toBeUndefined();
    const r = await fetch(`${root}api/overview`, { headers: { cookie: `svc_console=${before}` } });
    expect(r.status).toBe(401);
  });

  it('starts and watches a decommission on a two-pool node', async () => {
    const twoRoot = twoProxy ? `${twoProxy.origin}${prefix}/svc/console/` : `${two.console}/svc/console/`;
    await two.s3.send(new CreateBucketCommand({ Bucket: 'data' }));
    await Promise.all(Array.from({ length: 24 }, (_, i) => two.s3.send(new PutObjectCommand({ Bucket: 'data', Key: `obj-${i}`, Body: randomBytes(64 * 1024 + i) }))));
    await signIn(page, twoRoot);
    await page.click('#nav-pools');
    await page.locator('#pool-1').waitFor();
    const caps = (await (await page.request.get(`${twoRoot}api/pools`)).json()) as { capabilities: { decommission: { implemented: boolean } } };
    if (!caps.capabilities.decommission.implemented) {
      // a build without the decommission worker: the console says so instead of offering it
      expect(await page.locator('#decommission-0').isDisabled()).toBe(true);
      expect(await page.locator('#decommission-note-0').innerText()).toBe('This build has no decommission worker yet: pools cannot be drained.');
      await shot(page, flow, 'pools-decommission');
      console.log('decommission worker not in this build: checked that the console says so; this step drives a real drain once the worker lands');
      return;
    }
    // New objects go to either pool (by free space): the drain moves what pool 0 holds.
    const onPool0 = readdirSync(join(two.drives[0]![0]!, 'data')).filter((k) => k.startsWith('obj-')).length;
    expect(onPool0).toBeGreaterThan(0);
    await page.click('#decommission-0');
    const dialog = page.locator('dialog[open]');
    await dialog.waitFor();
    expect(await page.locator('#confirm-ok').isDisabled()).toBe(true);
    await page.fill('#confirm-typed', '0');
    await page.click('#confirm-ok');
    // watch it: running with progress, then complete
    const state = page.locator('#decom-state-0');
    await expect.poll(() => state.getAttribute('data-state'), { timeout: 10_000 }).toMatch(/^(queued|running|complete)$/);
    await page.locator('#decom-progress-0').waitFor();
    await shot(page, flow, 'pools-decommission');
    await expect.poll(() => state.getAttribute('data-state'), { timeout: 90_000, interval: 500 }).toBe('complete');
    expect(await page.locator('#decom-progress-0').getAttribute('value')).toBe('1');
    expect(await page.locator("#drain-0").innerText()).toMatch(new RegExp(`\\b${onPool0} objects`));
    await shot(page, flow, 'pools-decommission-complete');
    // every object still reads, from the other pool
    for (let i = 0; i < 24; i += 7) {
      const got = await two.s3.send(new GetObjectCommand({ Bucket: 'data', Key: `obj-${i}` }));
      expect((await got.Body!.transformToByteArray()).length).toBe(64 * 1024 + i);
    }
  }, 180_000);
});
