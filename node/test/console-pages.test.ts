/**
 * Every page of the console at desktop (1280 px) and phone (390 px) width,
 * in a real headless Chromium against a real `svc server` with something
 * to show (a versioned bucket with an object and its versions, an object
 * lock, a second pool): a screenshot of each kept under
 * `artifacts/console/pages/<desktop|phone>/` (CI keeps the directory), no
 * page scrolling sideways on the phone, and an accessibility check of each
 * with axe-core (injected into the page) finding no serious or critical
 * violation. The Healing page's background jobs table lists every job of
 * the node from its supervisor.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { CreateBucketCommand, PutBucketVersioningCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Browser, DESKTOP, expectNoSidewaysScroll, HAVE_CHROMIUM, launchBrowser, PHONE, shot, signInAs } from './helpers/browser.ts';
import { type ConsoleNode, startConsoleNode } from './helpers/console.ts';

if (!HAVE_CHROMIUM) console.log('skipped: no Chromium at /usr/bin/chromium (apt-get install chromium); the console page screenshots and accessibility checks did not run');

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/** Runs axe-core on the page as it is now (WCAG 2.x A and AA, and best practice). */
async function axe(page: Page): Promise<AxeViolation[]> {
  if (!(await page.evaluate('typeof window.axe === "object"'))) await page.addScriptTag({ content: AXE });
  const r = (await page.evaluate(`window.axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] }, resultTypes: ['violations'] })`)) as { violations: AxeViolation[] };
  return r.violations;
}

const PAGES: readonly { name: string; hash: string; ready: string }[] = [
  { name: 'overview', hash: '#/', ready: '#health-state' },
  { name: 'pools', hash: '#/pools', ready: '#pool-1' },
  { name: 'healing', hash: '#/healing', ready: '#bg-heal-state' },
  { name: 'metrics', hash: '#/metrics', ready: '#chart-requests' },
  { name: 'buckets', hash: '#/buckets', ready: '#buckets-table' },
  { name: 'bucket', hash: '#/buckets/shelf', ready: '#objects-table' },
  { name: 'bucket-folder', hash: '#/buckets/shelf?prefix=docs%2F', ready: '#objects-table' },
  { name: 'object', hash: '#/buckets/shelf/object?key=docs%2Freport.txt', ready: '#versions-table' },
  { name: 'identity', hash: '#/identity', ready: 'h1' },
  { name: 'not-found', hash: '#/nowhere', ready: '.error-box' },
];

describe.skipIf(!HAVE_CHROMIUM)('every console page at desktop and phone width: screenshots and accessibility', () => {
  let node: ConsoleNode;
  let browser: Browser;
  let root: string;

  beforeAll(async () => {
    node = await startConsoleNode(2, { SVC_SCANNER_INTERVAL: '1s' });
    root = `${node.console}/svc/console/`;
    await node.s3.send(new CreateBucketCommand({ Bucket: 'shelf' }));
    await node.s3.send(new PutBucketVersioningCommand({ Bucket: 'shelf', VersioningConfiguration: { Status: 'Enabled' } }));
    for (const body of ['first', 'second']) await node.s3.send(new PutObjectCommand({ Bucket: 'shelf', Key: 'docs/report.txt', Body: body, ContentType: 'text/plain' }));
    await node.s3.send(new PutObjectCommand({ Bucket: 'shelf', Key: 'readme.md', Body: '# shelf' }));
    await node.s3.send(new CreateBucketCommand({ Bucket: 'vault', ObjectLockEnabledForBucket: true }));
    // the page's own CSP (Trusted Types) would refuse the injected checker: this context bypasses it
    browser = await launchBrowser({ bypassCSP: true });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await node?.stop();
  });

  for (const [width, viewport] of [
    ['desktop', DESKTOP],
    ['phone', PHONE],
  ] as const) {
    it(`${width}: a screenshot of every page, none scrolling sideways, none with a serious accessibility problem`, async () => {
      const page = browser.page;
      await page.setViewportSize(viewport);
      const problems: string[] = [];
      // signed out: the sign-in page
      await browser.ctx.clearCookies();
      await page.goto(root);
      await page.locator('#access-key').waitFor();
      await shot(page, `pages/${width}`, 'sign-in');
      // the checker itself works: an image without a text alternative is found, then taken away
      await page.evaluate(`document.body.appendChild(Object.assign(document.createElement('img'), { id: 'axe-canary', src: 'data:,' }))`);
      expect((await axe(page)).map((v) => v.id)).toContain('image-alt');
      await page.evaluate(`document.getElementById('axe-canary').remove()`);
      for (const v of await axe(page)) if (v.impact === 'serious' || v.impact === 'critical') problems.push(`sign-in: ${v.id} (${v.impact}) ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
      await signInAs(page, root);
      for (const p of PAGES) {
        await page.goto(`${root}${p.hash}`);
        await page.locator(p.ready).first().waitFor();
        // let the page's data arrive (loading lines gone)
        await expect.poll(() => page.locator('main .loading').count(), { timeout: 15_000 }).toBe(0);
        if (width === 'phone') await expectNoSidewaysScroll(page);
        await shot(page, `pages/${width}`, p.name);
        for (const v of await axe(page)) if (v.impact === 'serious' || v.impact === 'critical') problems.push(`${p.name}: ${v.id} (${v.impact}) ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
      }
      // the bucket with every version shown, and a confirmation dialog open
      await page.goto(`${root}#/buckets/shelf`);
      await page.check('#show-versions');
      await page.locator('#objects-table .version-id').first().waitFor();
      await shot(page, `pages/${width}`, 'bucket-versions');
      await page.locator('button.delete-version').first().click();
      await page.locator('dialog[open]').waitFor();
      await shot(page, `pages/${width}`, 'dialog-delete-version');
      for (const v of await axe(page)) if (v.impact === 'serious' || v.impact === 'critical') problems.push(`dialog: ${v.id} (${v.impact}) ${v.help}`);
      await page.click('#confirm-cancel');
      expect(problems).toEqual([]);
    }, 180_000);
  }

  it('the Healing page lists every background job of the node with the state its supervisor reports', async () => {
    const page = browser.page;
    await page.setViewportSize(DESKTOP);
    await browser.ctx.clearCookies();
    await signInAs(page, root);
    await page.goto(`${root}#/healing`);
    await page.locator('#jobs-table').waitFor();
    const rows = await page.locator('#jobs-table tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td, th')].map((c) => (c.textContent ?? '').trim())));
    const byJob = new Map(rows.map((r) => [r[1]!, r]));
    // The jobs every serving node registers (node/test/background-jobs.test.ts checks the full list over the admin API).
    const jobs = ['audit-log', 'drive-probe', 'data-movement', 'heal-background', 'heal-sequences', 'drive-monitor', 'scanner', 'notify', 'replication', 'bucket-sync', 'iam-refresh', 'capacity-sampling'];
    expect([...byJob.keys()]).toEqual(expect.arrayContaining(jobs));
    for (const name of jobs) {
      // Node, job, state badge ("<icon> idle"), workers, runs after.
      expect(byJob.get(name)![0], name).toMatch(/^127\.0\.0\.1:\d+$/);
      expect(byJob.get(name)![2], name).toMatch(/(idle|running)$/);
    }
    expect(byJob.get('scanner')![4]).toBe('heal-background, drive-monitor');
    expect(byJob.get('heal-sequences')![3]).toBe('none now');
    expect(byJob.get('data-movement')![3]).toMatch(/^data-movement-poll \((idle|running)/);
    // The table is what the console API read from the admin route.
    const api = (await (await page.request.get(`${root}api/healing`)).json()) as { jobs: { nodes: { jobs: { name: string }[] }[] } };
    expect(api.jobs.nodes[0]!.jobs.map((j) => j.name).sort()).toEqual([...byJob.keys()].sort());
    for (const j of api.jobs.nodes[0]!.jobs) expect(await page.locator(`[data-job="${j.name}"]`).count(), j.name).toBe(1);
  }, 60_000);
});
