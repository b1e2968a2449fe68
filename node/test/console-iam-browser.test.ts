/**
 * The console's identity pages in a real headless Chromium: the root adds
 * a user, saves a policy (a malformed one shows the server's reason),
 * creates an access key whose secret is shown once; a read-only user sees
 * no cluster pages, may browse its bucket, and finds the delete buttons
 * disabled and no upload.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminClient } from '../src/cli/admin/client.ts';
import { expectReadOnlyBucket } from './helpers/browser.ts';
import { CONSOLE_ACCESS_KEY, CONSOLE_SECRET_KEY, type ConsoleNode, startConsoleNode } from './helpers/console.ts';

const CHROMIUM = '/usr/bin/chromium';

let node: ConsoleNode;
let ctx: BrowserContext;
let userData: string;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: the console browser tests need Debian's chromium (apt-get install chromium; CI does this in .ci/run)`);
  node = await startConsoleNode(1);
  await node.s3.send(new CreateBucketCommand({ Bucket: 'shots' }));
  await node.s3.send(new PutObjectCommand({ Bucket: 'shots', Key: 'one.png', Body: 'png' }));
  const { chromium } = await import('playwright-core');
  userData = await mkdtemp(join(tmpdir(), 'svc-chromium-iam-'));
  ctx = await chromium.launchPersistentContext(userData, { executablePath: CHROMIUM, headless: true, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'], viewport: { width: 1280, height: 800 } });
}, 90_000);

afterAll(async () => {
  await ctx?.close();
  if (userData) await rm(userData, { recursive: true, force: true });
  await node?.stop();
});

async function signIn(page: Page, ak: string, sk: string): Promise<void> {
  await ctx.clearCookies();
  await page.goto(`${node.console}/svc/console/`);
  await page.fill('#access-key', ak);
  await page.fill('#secret-key', sk);
  await page.click('button[type=submit]');
  await page.waitForSelector('#sign-out');
}

describe('console identity pages (Chromium)', () => {
  it('the root adds a user, saves policies (a bad one shows why), creates an access key shown once', async () => {
    const page = await ctx.newPage();
    await signIn(page, CONSOLE_ACCESS_KEY, CONSOLE_SECRET_KEY);
    await page.click('#nav-identity');
    await page.waitForSelector('#add-user');
    await page.fill('#new-user-name', 'browser-user');
    await page.fill('#new-user-secret', 'browser-user-secret');
    await page.click('#add-user-submit');
    await page.waitForSelector('#users-table >> text=browser-user');
    await page.fill('#policy-name', 'bad-one');
    await page.fill('#policy-document', '{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:GetObject"}]}');
    await page.click('#policy-save');
    await page.waitForSelector('#identity-result >> text=Resource');
    await page.fill('#policy-name', 'read-shots');
    await page.fill('#policy-document', JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: ['s3:GetObject', 's3:ListBucket'], Resource: ['arn:aws:s3:::shots', 'arn:aws:s3:::shots/*'] }] }));
    await page.click('#policy-save');
    await page.waitForSelector('#policies-table >> text=read-shots');
    await page.click('#create-key-submit');
    const secret = await (await page.waitForSelector('#new-key-secret')).textContent();
    expect(secret?.length).toBe(40);
    await page.waitForSelector('#keys-table');
    // shown once: reloading the page does not show it again
    await page.reload();
    await page.waitForSelector('#keys-table');
    expect(await page.content()).not.toContain(secret!);
    await page.close();
  });

  it('a read-only user: no cluster pages, browses its bucket, delete disabled, no upload', async () => {
    const admin = new AdminClient({ name: 't', url: node.s3Url, accessKey: CONSOLE_ACCESS_KEY, secretKey: CONSOLE_SECRET_KEY });
    await admin.encrypted('POST', 'v3/idp/builtin/policy/attach', {}, { policies: ['read-shots'], user: 'browser-user' }, true);
    const page = await ctx.newPage();
    await signIn(page, 'browser-user', 'browser-user-secret');
    await expectReadOnlyBucket(page, 'shots', 'one.png');
    // the Identity page shows only their own access keys
    await page.click('#nav-identity');
    await page.waitForSelector('#create-key');
    expect(await page.$('#add-user')).toBeNull();
    expect(await page.$('#policy-editor')).toBeNull();
    await page.close();
  });
});
