/**
 * Real headless Chromium for the console's browser tests (Debian's
 * `/usr/bin/chromium` driven by `playwright-core`): a persistent context in
 * a temp profile, signing in as a person would, screenshots under
 * `artifacts/console/<flow>/` (CI keeps that directory), and the page's
 * sideways-scroll check for phones.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { expect, type TestContext } from 'vitest';
import { REPO } from '../svc-process.ts';
import { CONSOLE_ACCESS_KEY, CONSOLE_SECRET_KEY, type ConsoleNode, startConsoleNode } from './console.ts';

export const CHROMIUM = '/usr/bin/chromium';
export const HAVE_CHROMIUM = existsSync(CHROMIUM);
export const SCREENSHOTS = join(REPO, 'artifacts', 'console');
export const DESKTOP = { width: 1280, height: 800 } as const;
export const PHONE = { width: 390, height: 844 } as const;

export interface Browser {
  readonly ctx: BrowserContext;
  readonly page: Page;
  close(): Promise<void>;
}

export async function launchBrowser(o: { timezoneId?: string; bypassCSP?: boolean } = {}): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  const userData = await mkdtemp(join(tmpdir(), 'svc-chromium-'));
  const ctx = await chromium.launchPersistentContext(userData, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    viewport: DESKTOP,
    timezoneId: o.timezoneId ?? 'UTC',
    locale: 'en-US',
    acceptDownloads: true,
    ...(o.bypassCSP ? { bypassCSP: true } : {}),
  });
  const page = ctx.pages()[0] ?? (await ctx.newPage());
  return {
    ctx,
    page,
    async close() {
      await ctx.close();
      await rm(userData, { recursive: true, force: true });
    },
  };
}

export async function shot(page: Page, flow: string, name: string): Promise<void> {
  mkdirSync(join(SCREENSHOTS, flow), { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, flow, `${name}.png`), fullPage: true });
}

/** Signs in through the form (`root`: the console's public root, ending in `/svc/console/`). */
export async function signInAs(page: Page, root: string, accessKey = CONSOLE_ACCESS_KEY, secretKey = CONSOLE_SECRET_KEY): Promise<void> {
  await page.goto(root);
  await page.locator('#access-key').waitFor();
  await page.fill('#access-key', accessKey);
  await page.fill('#secret-key', secretKey);
  await page.click('#sign-in');
  await page.locator('#sign-out').waitFor();
}

/** An `afterEach` hook: a failed test leaves a screenshot of the page (`failed-<test name>`) beside the flow's others. */
export function shotOnFailure(flow: string, page: () => Page | undefined): (ctx: TestContext) => Promise<void> {
  return async (ctx) => {
    const p = page();
    if (ctx.task.result?.state === 'fail' && p && !p.isClosed()) await shot(p, flow, `failed-${ctx.task.name.replace(/[^a-z0-9]+/gi, '-').slice(0, 60)}`).catch(() => undefined);
  };
}

/** A console node of `pools` pools started with `env`, and a browser signed in to it at `root` (both stopped again if a step fails). */
export async function openSignedIn(pools: number, env: Record<string, string>): Promise<{ node: ConsoleNode; root: string; browser: Browser; page: Page }> {
  const node = await startConsoleNode(pools, env);
  const root = `${node.console}/svc/console/`;
  let browser: Browser | undefined;
  try {
    browser = await launchBrowser();
    await signInAs(browser.page, root);
    return { node, root, browser, page: browser.page };
  } catch (err) {
    await browser?.close();
    await node.stop();
    throw err;
  }
}

/** The page is no wider than the window (nothing scrolls sideways). */
export async function expectNoSidewaysScroll(page: Page): Promise<void> {
  expect(await page.evaluate('document.documentElement.scrollWidth - window.innerWidth')).toBeLessThanOrEqual(0);
}

/**
 * A signed-in identity that may only read `bucket`: no cluster pages, no
 * bucket creation, the bucket's delete button disabled; inside it `key`
 * is listed, its delete disabled, and upload replaced by the notice.
 */
export async function expectReadOnlyBucket(page: Page, bucket: string, key: string): Promise<void> {
  expect(await page.$('#nav-overview')).toBeNull();
  expect(await page.$('#nav-pools')).toBeNull();
  await page.waitForSelector(`#buckets-table >> text=${bucket}`);
  expect(await page.$('#create-bucket')).toBeNull();
  expect(await page.isDisabled(`#delete-bucket-${bucket}`)).toBe(true);
  await page.click(`#buckets-table >> text=${bucket}`);
  await page.waitForSelector(`#object-list >> text=${key}`);
  expect(await page.isDisabled('.delete-object')).toBe(true);
  await page.waitForSelector('#upload-not-allowed');
  expect(await page.$('label[for=upload-input]')).toBeNull();
}
