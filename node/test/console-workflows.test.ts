/**
 * The console's daily workflows (issue 29) in a real headless Chromium
 * against a real `svc server`, each result checked from outside with the
 * AWS SDK (or the admin API for quotas), never through the console's own
 * API: every bucket setting edited; a 2 000-object folder deleted with its
 * progress watched; a selection deleted; a folder of nested files uploaded
 * (file picker and drag-and-drop); an old version restored; names found by
 * prefix.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CreateBucketCommand,
  GetBucketCorsCommand,
  GetBucketEncryptionCommand,
  GetBucketLifecycleConfigurationCommand,
  GetBucketPolicyCommand,
  GetBucketTaggingCommand,
  GetBucketVersioningCommand,
  GetObjectCommand,
  GetObjectLegalHoldCommand,
  GetObjectLockConfigurationCommand,
  GetObjectRetentionCommand,
  GetObjectTaggingCommand,
  ListObjectsV2Command,
  ListObjectVersionsCommand,
  PutBucketVersioningCommand,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AdminClient } from '../src/cli/admin/client.ts';
import { type Browser, HAVE_CHROMIUM, openSignedIn, shot, shotOnFailure } from './helpers/browser.ts';
import { CONSOLE_ACCESS_KEY, CONSOLE_SECRET_KEY, type ConsoleNode } from './helpers/console.ts';
import { kmsKeyLine } from './helpers/governance.ts';
import { sha256, unzipTree } from './helpers/zip.ts';

if (!HAVE_CHROMIUM) console.log('skipped: no Chromium at /usr/bin/chromium (apt-get install chromium); the console workflow tests did not run');

const FLOW = 'workflows';
const tmp = join(tmpdir(), `svc-console-workflows-${randomBytes(4).toString('hex')}`);
mkdirSync(tmp, { recursive: true });
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const text = async (s3: S3Client, bucket: string, key: string, versionId?: string) => (await (await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key, VersionId: versionId }))).Body!.transformToString());
const fails = (p: Promise<unknown>) => p.then(() => '', (e: { name?: string }) => e.name ?? 'error');

/** Puts `n` small objects with a few requests in flight. */
async function putMany(s3: S3Client, bucket: string, keys: readonly string[]): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: 24 }, async () => {
      while (next < keys.length) {
        const k = keys[next++]!;
        await s3.send(new PutObjectCommand({ Bucket: bucket, Key: k, Body: k }));
      }
    }),
  );
}

/** A new bucket holding `files` (key → bytes). */
async function bucketWith(s3: S3Client, bucket: string, files: Record<string, Buffer>): Promise<void> {
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  for (const [k, body] of Object.entries(files)) await s3.send(new PutObjectCommand({ Bucket: bucket, Key: k, Body: body }));
}

describe.skipIf(!HAVE_CHROMIUM)('console workflows (issue 29) in Chromium', () => {
  let node: ConsoleNode;
  let browser: Browser;
  let page: Page;
  let root: string;
  let admin: AdminClient;

  beforeAll(async () => {
    ({ node, root, browser, page } = await openSignedIn(1, { SVC_KMS_SECRET_KEY: kmsKeyLine('console-key'), SVC_SCANNER_INTERVAL: '1s' }));
    admin = new AdminClient({ name: 't', url: node.s3Url, accessKey: CONSOLE_ACCESS_KEY, secretKey: CONSOLE_SECRET_KEY });
  }, 120_000);

  afterEach(shotOnFailure(FLOW, () => page));

  afterAll(async () => {
    await browser?.close();
    await node?.stop();
  });

  it('creates a bucket with object lock and a quota, and edits every setting (checked with S3 clients)', async () => {
    await page.goto(`${root}#/buckets`);
    await page.fill('#bucket-name', 'settings');
    await page.check('#bucket-object-lock');
    expect(await page.locator('#bucket-versioning').isChecked()).toBe(true);
    await page.fill('#bucket-quota', '1GiB');
    await page.click('#create-bucket-submit');
    await page.locator('#bucket-result .success').waitFor();
    expect(await page.locator('#bucket-result').innerText()).toContain('with object lock and a quota of 1GiB');
    expect((await node.s3.send(new GetObjectLockConfigurationCommand({ Bucket: 'settings' }))).ObjectLockConfiguration?.ObjectLockEnabled).toBe('Enabled');
    expect((await node.s3.send(new GetBucketVersioningCommand({ Bucket: 'settings' }))).Status).toBe('Enabled');
    expect(JSON.parse((await admin.request('GET', 'v3/get-bucket-quota', { bucket: 'settings' })).text)).toMatchObject({ size: 1024 ** 3 });

    await page.goto(`${root}#/buckets/settings`);
    // object lock's default retention
    // each editor shows what the bucket has before it takes an edit
    for (const b of ['#lock-save', '#rule-add', '#anonymous-save', '#encryption-save', '#bucket-tags-save', '#setting-cors-save']) await page.locator(`${b}:enabled`).waitFor();
    await page.selectOption('#lock-mode', 'GOVERNANCE');
    await page.fill('#lock-days', '5');
    await page.click('#lock-save');
    await page.locator('#setting-object-lock-result .success').waitFor();
    expect((await node.s3.send(new GetObjectLockConfigurationCommand({ Bucket: 'settings' }))).ObjectLockConfiguration?.Rule?.DefaultRetention).toMatchObject({ Mode: 'GOVERNANCE', Days: 5 });

    // lifecycle: a rule from the form, then the whole configuration as JSON
    await page.fill('#rule-id', 'tidy');
    await page.fill('#rule-prefix', 'tmp/');
    await page.fill('#rule-expire-days', '7');
    await page.fill('#rule-abort-days', '2');
    await page.click('#rule-add');
    await page.locator('#setting-lifecycle-result .success').waitFor();
    let rules = (await node.s3.send(new GetBucketLifecycleConfigurationCommand({ Bucket: 'settings' }))).Rules!;
    expect(rules).toHaveLength(1);
    expect(rules[0]).toMatchObject({ ID: 'tidy', Status: 'Enabled', Filter: { Prefix: 'tmp/' }, Expiration: { Days: 7 }, AbortIncompleteMultipartUpload: { DaysAfterInitiation: 2 } });
    const json = JSON.parse(await page.locator('#setting-lifecycle-json').inputValue()) as { Rules: unknown[] };
    json.Rules.push({ ID: 'old-versions', Status: 'Enabled', Filter: { Prefix: 'logs/' }, NoncurrentVersionExpiration: { NoncurrentDays: 30 } });
    await page.fill('#setting-lifecycle-json', JSON.stringify(json));
    await page.click('#setting-lifecycle-save');
    await expect.poll(async () => (await node.s3.send(new GetBucketLifecycleConfigurationCommand({ Bucket: 'settings' }))).Rules?.length).toBe(2);
    rules = (await node.s3.send(new GetBucketLifecycleConfigurationCommand({ Bucket: 'settings' }))).Rules!;
    expect(rules.find((r) => r.ID === 'old-versions')).toMatchObject({ NoncurrentVersionExpiration: { NoncurrentDays: 30 } });
    // a document the server refuses: its reason shows, nothing changes
    await page.fill('#setting-lifecycle-json', JSON.stringify({ Rules: [{ ID: 'bad', Status: 'Maybe', Filter: { Prefix: '' }, Expiration: { Days: 1 } }] }));
    await page.click('#setting-lifecycle-save');
    await page.locator('#setting-lifecycle-result .error-box').waitFor();
    expect((await node.s3.send(new GetBucketLifecycleConfigurationCommand({ Bucket: 'settings' }))).Rules).toHaveLength(2);

    // policy: anonymous download, checked by reading without keys; a malformed policy is refused with the server's reason
    await page.selectOption('#anonymous-access', 'download');
    await page.click('#anonymous-save');
    await page.click('#confirm-ok');
    await page.locator('#setting-policy-result .success').waitFor();
    const policy = JSON.parse((await node.s3.send(new GetBucketPolicyCommand({ Bucket: 'settings' }))).Policy!) as { Statement: { Action: string[] }[] };
    expect(policy.Statement.flatMap((s) => s.Action)).toContain('s3:GetObject');
    await node.s3.send(new PutObjectCommand({ Bucket: 'settings', Key: 'open.txt', Body: 'anyone' }));
    expect(await (await fetch(`${node.s3Url}/settings/open.txt`)).text()).toBe('anyone');
    await page.fill('#setting-policy-json', '{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:GetObject"}]}');
    await page.click('#setting-policy-save');
    await page.locator('#setting-policy-result .error-box').waitFor();
    expect(await page.locator('#setting-policy-result').innerText()).toMatch(/MalformedPolicy/);
    await page.selectOption('#anonymous-access', 'private');
    await page.click('#anonymous-save');
    await page.click('#confirm-ok');
    await page.locator('#setting-policy-result .success').waitFor();
    expect(await fails(node.s3.send(new GetBucketPolicyCommand({ Bucket: 'settings' })))).toBe('NoSuchBucketPolicy');
    expect((await fetch(`${node.s3Url}/settings/open.txt`)).status).toBe(403);

    // default encryption
    await page.selectOption('#encryption-algorithm', 'AES256');
    await page.click('#encryption-save');
    await page.locator('#setting-encryption-result .success').waitFor();
    expect((await node.s3.send(new GetBucketEncryptionCommand({ Bucket: 'settings' }))).ServerSideEncryptionConfiguration?.Rules?.[0]?.ApplyServerSideEncryptionByDefault?.SSEAlgorithm).toBe('AES256');

    // CORS as JSON
    await page.fill('#setting-cors-json', JSON.stringify({ CORSRules: [{ AllowedOrigins: ['https://app.example.com'], AllowedMethods: ['GET', 'PUT'], AllowedHeaders: ['*'], MaxAgeSeconds: 600 }] }));
    await page.click('#setting-cors-save');
    await page.locator('#setting-cors-result .success').waitFor();
    expect((await node.s3.send(new GetBucketCorsCommand({ Bucket: 'settings' }))).CORSRules?.[0]).toMatchObject({ AllowedOrigins: ['https://app.example.com'], AllowedMethods: ['GET', 'PUT'], MaxAgeSeconds: 600 });

    // tags
    await page.fill('#bucket-tags', 'team=storage\ncost-centre=42');
    await page.click('#bucket-tags-save');
    await page.locator('#setting-tagging-result .success').waitFor();
    expect((await node.s3.send(new GetBucketTaggingCommand({ Bucket: 'settings' }))).TagSet).toEqual([
      { Key: 'team', Value: 'storage' },
      { Key: 'cost-centre', Value: '42' },
    ]);
    await shot(page, FLOW, 'bucket-settings');

    // quota and versioning on a plain bucket
    await node.s3.send(new CreateBucketCommand({ Bucket: 'plain' }));
    await page.goto(`${root}#/buckets/plain`);
    await page.fill('#quota-size', '500MiB');
    await page.click('#quota-set');
    await expect.poll(async () => (JSON.parse((await admin.request('GET', 'v3/get-bucket-quota', { bucket: 'plain' })).text) as { size: number }).size).toBe(500 * 1024 ** 2);
    await page.locator('#versioning-toggle:not([disabled])').check();
    await expect.poll(async () => (await node.s3.send(new GetBucketVersioningCommand({ Bucket: 'plain' }))).Status).toBe('Enabled');
  });

  it('deletes a 2 000-object folder after a typed confirmation, with progress', async () => {
    await node.s3.send(new CreateBucketCommand({ Bucket: 'bulk' }));
    const keys = Array.from({ length: 2000 }, (_, i) => `big/${i % 3 === 0 ? 'sub/' : ''}k${String(i).padStart(4, '0')}`);
    await putMany(node.s3, 'bulk', keys);
    await node.s3.send(new PutObjectCommand({ Bucket: 'bulk', Key: 'keep.txt', Body: 'keep' }));
    await page.goto(`${root}#/buckets/bulk`);
    await page.locator('button.delete-folder[data-prefix="big/"]').click();
    const dialog = page.locator('dialog[open]');
    await dialog.waitFor();
    expect(await dialog.innerText()).toContain('2 objects'.replace('2', '2,000'));
    expect(await page.locator('#confirm-ok').isDisabled()).toBe(true);
    await page.fill('#confirm-typed', 'big/');
    // watch the tray's progress bar as the page draws it
    await page.evaluate(`(() => {
      window.bulkSeen = [];
      new MutationObserver(() => {
        for (const bar of document.querySelectorAll('#upload-tray progress')) {
          const f = bar.value / bar.max;
          if (window.bulkSeen[window.bulkSeen.length - 1] !== f) window.bulkSeen.push(f);
        }
      }).observe(document.body, { subtree: true, attributes: true, childList: true });
    })()`);
    await page.click('#confirm-ok');
    const row = page.locator('#upload-tray li', { hasText: 'Delete bulk/big/' });
    await row.locator('[data-state="done"]').waitFor({ timeout: 120_000 });
    const seen = (await page.evaluate('window.bulkSeen')) as number[];
    expect(seen.some((f) => f > 0 && f < 1)).toBe(true);
    expect(await row.innerText()).toContain('2,000 of 2,000 deleted');
    expect(await page.locator('#folder-delete-result').innerText()).toContain('2000 objects under big/ deleted');
    expect((await node.s3.send(new ListObjectsV2Command({ Bucket: 'bulk', Prefix: 'big/' }))).KeyCount).toBe(0);
    expect(await text(node.s3, 'bulk', 'keep.txt')).toBe('keep');
    await shot(page, FLOW, 'folder-deleted');
  }, 240_000);

  it('deletes a selection, naming what it removes', async () => {
    await putMany(node.s3, 'bulk', ['sel/a.txt', 'sel/b.txt', 'sel/c.txt']);
    await page.goto(`${root}#/buckets/bulk?prefix=sel%2F`);
    await page.locator('input.select-object[data-key="sel/a.txt"]').check();
    await page.locator('input.select-object[data-key="sel/c.txt"]').check();
    expect(await page.locator('#selection-count').innerText()).toBe('2 objects selected');
    await page.click('#delete-selected');
    const dialog = await page.locator('dialog[open]').innerText();
    expect(dialog).toContain('sel/a.txt');
    expect(dialog).toContain('sel/c.txt');
    expect(dialog).not.toContain('sel/b.txt');
    await page.click('#confirm-ok');
    await page.locator('#object-result .success').waitFor();
    const left = (await node.s3.send(new ListObjectsV2Command({ Bucket: 'bulk', Prefix: 'sel/' }))).Contents!.map((c) => c.Key);
    expect(left).toEqual(['sel/b.txt']);
  });

  it('downloads a selection as one ZIP that unzip and Python read back byte for byte', async () => {
    const big = randomBytes(9 * 1024 * 1024 + 17); // several erasure blocks, streamed
    const files: Record<string, Buffer> = {
      'zip/a.txt': Buffer.from('alpha'),
      'zip/sub/b.bin': big,
      'zip/été ünïcode.txt': Buffer.from('non-ASCII name'),
      'zip/skip.txt': Buffer.from('not selected'),
    };
    await bucketWith(node.s3, 'zips', files);
    // nested keys show as a folder: select the two top-level files here, then the nested one by key
    await page.goto(`${root}#/buckets/zips?prefix=zip%2F`);
    await page.locator('input.select-object[data-key="zip/a.txt"]').check();
    await page.locator('input.select-object[data-key="zip/été ünïcode.txt"]').check();
    expect(await page.locator('#zip-selected').isEnabled()).toBe(true);
    const download = page.waitForEvent('download');
    await page.click('#zip-selected');
    const d = await download;
    expect(d.suggestedFilename()).toBe('zips.zip');
    const ticketUrl = d.url();
    expect(ticketUrl).toMatch(/\/api\/buckets\/zips\/zip\/[^/?]+$/);
    const saved = join(tmp, 'selection.zip');
    await d.saveAs(saved);
    expect(await d.failure()).toBeNull();
    const test = spawnSync('unzip', ['-t', saved], { encoding: 'utf8' });
    expect(test.stdout).toContain('No errors detected');
    expect(test.status).toBe(0);
    const read = (zipPath: string) =>
      JSON.parse(
        execFileSync('python3', ['-c', 'import hashlib, json, sys, zipfile\nz = zipfile.ZipFile(sys.argv[1])\nprint(json.dumps({i.filename: hashlib.sha256(z.read(i)).hexdigest() for i in z.infolist()}))', zipPath], { encoding: 'utf8' }),
      ) as Record<string, string>;
    const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
    expect(read(saved)).toEqual({ 'a.txt': sha(files['zip/a.txt']!), 'été ünïcode.txt': sha(files['zip/été ünïcode.txt']!) });
    // a ticket is good for one download
    expect((await page.request.get(ticketUrl)).status()).toBe(400);

    // inside a folder: a multi-block object comes through whole, named relative to the folder shown
    await page.goto(`${root}#/buckets/zips?prefix=zip%2Fsub%2F`);
    await page.locator('input.select-object[data-key="zip/sub/b.bin"]').check();
    const again = page.waitForEvent('download');
    await page.click('#zip-selected');
    const saved2 = join(tmp, 'nested.zip');
    await (await again).saveAs(saved2);
    expect(spawnSync('unzip', ['-t', saved2]).status).toBe(0);
    expect(read(saved2)).toEqual({ 'b.bin': sha(big) });
    await page.locator('#object-result .success').waitFor();
    expect(await page.locator('#object-result').innerText()).toContain('Downloading 1 object as zips.zip');
  }, 120_000);

  it('downloads a folder, a nested folder and a UTF-8 folder as one ZIP each, paths kept; a folder over the limit is refused', async () => {
    const texts = {
      'tree/a.txt': 'alpha',
      'tree/sub/deeper/c.txt': 'charlie',
      'tree/ünï/çödé ✓.txt': 'non-ASCII folder and name',
      'tree/empty/': '', // a folder marker
      'treehouse/x.txt': 'a sibling, not in the folder',
      'top.txt': 'outside',
    };
    // one object of several erasure blocks, streamed
    const files: Record<string, Buffer> = { ...Object.fromEntries(Object.entries(texts).map(([k, v]) => [k, Buffer.from(v)])), 'tree/sub/b.bin': randomBytes(6 * 1024 * 1024 + 5) };
    await bucketWith(node.s3, 'folder-zips', files);
    const h = (k: string) => sha256(files[k]!);
    /** Clicks the folder's Download as ZIP (prefix '': the folder shown), saves the archive and unzips it. */
    const folderZip = async (prefix: string, expectName: string) => {
      const download = page.waitForEvent('download');
      await page.locator(prefix === '' ? '#zip-this-folder' : `button.zip-folder[data-prefix="${prefix}"]`).click();
      const d = await download;
      expect(d.suggestedFilename()).toBe(expectName);
      const saved = join(tmp, `folder-${randomBytes(3).toString('hex')}.zip`);
      await d.saveAs(saved);
      expect(await d.failure()).toBeNull();
      await page.locator('#object-result .success').waitFor();
      return { tree: unzipTree(saved, `${saved}.out`), said: await page.locator('#object-result').innerText() };
    };

    // a top-level folder: everything under it, its own name the archive's top directory
    await page.goto(`${root}#/buckets/folder-zips`);
    const top = await folderZip('tree/', 'tree.zip');
    expect(top.tree).toEqual({
      'tree/a.txt': h('tree/a.txt'),
      'tree/sub/b.bin': h('tree/sub/b.bin'),
      'tree/sub/deeper/c.txt': h('tree/sub/deeper/c.txt'),
      'tree/ünï/çödé ✓.txt': h('tree/ünï/çödé ✓.txt'),
      'tree/empty/': 'dir',
    });
    expect(top.said).toContain('Downloading the folder tree/: 5 objects');
    expect(top.said).toContain('as tree.zip');

    // a nested folder, from inside its parent: named from the folder down
    await page.goto(`${root}#/buckets/folder-zips?prefix=tree%2F`);
    expect((await folderZip('tree/sub/', 'sub.zip')).tree).toEqual({ 'sub/b.bin': h('tree/sub/b.bin'), 'sub/deeper/c.txt': h('tree/sub/deeper/c.txt') });
    // a folder with a UTF-8 name, from inside it (the whole folder, not the page): the archive is named after it too
    await page.goto(`${root}#/buckets/folder-zips?prefix=${encodeURIComponent('tree/ünï/')}`);
    expect((await folderZip('', 'ünï.zip')).tree).toEqual({ 'ünï/çödé ✓.txt': h('tree/ünï/çödé ✓.txt') });

    // the limit of a ZIP download (1000 objects) holds for a folder: refused before anything downloads, saying what to do
    await putMany(node.s3, 'folder-zips', Array.from({ length: 1001 }, (_, i) => `many/${i % 2 === 0 ? 'sub/' : ''}k${String(i).padStart(4, '0')}`));
    await page.goto(`${root}#/buckets/folder-zips`);
    let downloads = 0;
    page.on('download', () => downloads++);
    await page.locator('button.zip-folder[data-prefix="many/"]').click();
    const refused = page.locator('#object-result', { hasText: 'more than 1000 objects' });
    await refused.waitFor();
    expect(await refused.innerText()).toContain('download the folders inside it one by one');
    expect(downloads).toBe(0);
  }, 180_000);

  it('shows user metadata written in UTF-8 (boto3) as its text, not as Latin-1 mojibake', async () => {
    await node.s3.send(new CreateBucketCommand({ Bucket: 'meta-utf8' }));
    // boto3 (with its ASCII check unregistered, as scripts that need it do) sends the UTF-8 bytes of the text
    const script = [
      'import sys, boto3',
      'from botocore.config import Config',
      'from botocore.handlers import validate_ascii_metadata',
      "s3 = boto3.client('s3', endpoint_url=sys.argv[1], region_name='us-east-1', aws_access_key_id=sys.argv[2], aws_secret_access_key=sys.argv[3], config=Config(s3={'addressing_style': 'path'}, retries={'max_attempts': 1}))",
      "s3.meta.events.unregister('before-parameter-build.s3.PutObject', validate_ascii_metadata)",
      "s3.put_object(Bucket='meta-utf8', Key='note.txt', Body=b'x', Metadata={'author': 'Zoë Müller', 'title': '日本語 ✓', 'plain': 'ascii'})",
    ].join('\n');
    execFileSync('python3', ['-c', script, node.s3Url, CONSOLE_ACCESS_KEY, CONSOLE_SECRET_KEY]);
    await page.goto(`${root}#/buckets/meta-utf8/object?key=note.txt`);
    const metadata = page.locator('table', { has: page.locator('caption', { hasText: 'User metadata' }) });
    await metadata.waitFor();
    const rows = await metadata.locator('tbody tr').allInnerTexts();
    expect(rows.map((r) => r.replace(/\s+/g, ' ').trim()).sort()).toEqual(['x-amz-meta-author Zoë Müller', 'x-amz-meta-plain ascii', 'x-amz-meta-title 日本語 ✓']);
  });

  it('uploads a folder of nested files (file picker and drag-and-drop), keeping their paths', async () => {
    const dir = join(tmp, 'album');
    mkdirSync(join(dir, '2024', 'summer'), { recursive: true });
    writeFileSync(join(dir, 'top.txt'), 'top');
    writeFileSync(join(dir, '2024', 'a.txt'), 'a');
    writeFileSync(join(dir, '2024', 'summer', 'b.txt'), 'b');
    await node.s3.send(new CreateBucketCommand({ Bucket: 'folders' }));
    await page.goto(`${root}#/buckets/folders`);
    await page.locator('#empty-folder').waitFor();
    await page.setInputFiles('#upload-folder-input', dir);
    await expect.poll(() => page.locator('#upload-tray li', { hasText: 'folders/' }).locator('[data-state="done"]').count(), { timeout: 30_000 }).toBe(3);
    const keys = (await node.s3.send(new ListObjectsV2Command({ Bucket: 'folders' }))).Contents!.map((c) => c.Key).sort();
    expect(keys).toEqual(['album/2024/a.txt', 'album/2024/summer/b.txt', 'album/top.txt']);
    expect(await text(node.s3, 'folders', 'album/2024/summer/b.txt')).toBe('b');
    // dropped files land in the folder shown
    await page.goto(`${root}#/buckets/folders?prefix=dropped%2F`);
    await page.locator('#drop-zone').waitFor();
    const dt = await page.evaluateHandle(`(() => {
      const d = new DataTransfer();
      d.items.add(new File(['dropped one'], 'one.txt', { type: 'text/plain' }));
      d.items.add(new File(['dropped two'], 'two.txt', { type: 'text/plain' }));
      return d;
    })()`);
    await page.dispatchEvent('#drop-zone', 'drop', { dataTransfer: dt });
    await expect.poll(async () => (await node.s3.send(new ListObjectsV2Command({ Bucket: 'folders', Prefix: 'dropped/' }))).KeyCount, { timeout: 30_000 }).toBe(2);
    expect(await text(node.s3, 'folders', 'dropped/two.txt')).toBe('dropped two');
  });

  it('restores an old version over the current one', async () => {
    await node.s3.send(new CreateBucketCommand({ Bucket: 'history' }));
    await node.s3.send(new PutBucketVersioningCommand({ Bucket: 'history', VersioningConfiguration: { Status: 'Enabled' } }));
    const v1 = await node.s3.send(new PutObjectCommand({ Bucket: 'history', Key: 'doc.txt', Body: 'first draft' }));
    await node.s3.send(new PutObjectCommand({ Bucket: 'history', Key: 'doc.txt', Body: 'second draft' }));
    await page.goto(`${root}#/buckets/history/object?key=doc.txt`);
    const row = page.locator('#versions-table tbody tr', { hasText: v1.VersionId! });
    await row.locator('button.restore-version').click();
    await page.click('#confirm-ok');
    await page.locator('#object-result .success').waitFor();
    expect(await text(node.s3, 'history', 'doc.txt')).toBe('first draft');
    const versions = (await node.s3.send(new ListObjectVersionsCommand({ Bucket: 'history', Prefix: 'doc.txt' }))).Versions!;
    expect(versions).toHaveLength(3); // nothing deleted: the restored copy is the newest
    await expect.poll(() => page.locator('#versions-table tbody tr').count()).toBe(3);
    await shot(page, FLOW, 'version-restored');
  });

  it('turning versions on while the first listing is on its way shows the versions, not that listing when it lands', async () => {
    await node.s3.send(new CreateBucketCommand({ Bucket: 'late' }));
    await node.s3.send(new PutBucketVersioningCommand({ Bucket: 'late', VersioningConfiguration: { Status: 'Enabled' } }));
    for (const body of ['one', 'two', 'three']) await node.s3.send(new PutObjectCommand({ Bucket: 'late', Key: 'doc.txt', Body: body }));
    let asked: (() => void) | undefined;
    let held: (() => void) | undefined;
    const onItsWay = new Promise<void>((r) => (asked = r));
    const landed = new Promise<void>((r) => (held = r));
    // the page's first listing (objects, not versions) answers late, after the versions listing
    await page.route('**/api/buckets/late/objects?*', async (route) => {
      asked!();
      await new Promise((r) => setTimeout(r, 1500));
      await route.continue();
      held!();
    });
    try {
      await page.goto(`${root}#/buckets/late`);
      // the box is turned on only once that listing has been asked for: turned on earlier (on a
      // slow machine, before the page knows what the user may do), the page never asks for it
      await onItsWay;
      await page.check('#show-versions');
      await page.locator('#objects-table .version-id').first().waitFor();
      await landed;
      await page.waitForLoadState('networkidle');
      expect(await page.locator('#objects-table .version-id').count()).toBe(3);
      expect(await page.locator('button.delete-version').count()).toBe(3);
    } finally {
      await page.unroute('**/api/buckets/late/objects?*');
    }
  });

  it("edits an object's tags, legal hold and retention (bypassing governance), previews it, and shares any version for any time", async () => {
    await node.s3.send(new CreateBucketCommand({ Bucket: 'objects', ObjectLockEnabledForBucket: true }));
    const v1 = await node.s3.send(new PutObjectCommand({ Bucket: 'objects', Key: 'notes.txt', Body: 'version one', ContentType: 'text/plain' }));
    await node.s3.send(new PutObjectCommand({ Bucket: 'objects', Key: 'notes.txt', Body: 'version two <b>not markup</b>', ContentType: 'text/plain' }));
    // the current tags are held back a while: until they are in, the editor is off (an edit typed
    // earlier would be replaced by them when they arrive, and saved so)
    let releaseTags!: () => void;
    const tagsHeld = new Promise<void>((r) => (releaseTags = r));
    await page.route('**/api/buckets/objects/object/tags?*', async (route) => {
      if (route.request().method() === 'GET') await tagsHeld;
      await route.continue();
    });
    try {
      await page.goto(`${root}#/buckets/objects/object?key=notes.txt`);
      // text preview: shown as text
      await expect.poll(() => page.locator('#preview-text').innerText()).toBe('version two <b>not markup</b>');
      expect(await page.locator('#object-tags').isDisabled()).toBe(true);
      expect(await page.locator('#object-tags-save').isDisabled()).toBe(true);
      releaseTags();
      await expect.poll(() => page.locator('#object-tags').isEnabled()).toBe(true);
    } finally {
      releaseTags();
      await page.unroute('**/api/buckets/objects/object/tags?*');
    }
    // tags
    await page.fill('#object-tags', 'owner=ops\nstage=draft');
    await page.click('#object-tags-save');
    await page.locator('#object-tags-result .success').waitFor();
    expect((await node.s3.send(new GetObjectTaggingCommand({ Bucket: 'objects', Key: 'notes.txt' }))).TagSet).toEqual([
      { Key: 'owner', Value: 'ops' },
      { Key: 'stage', Value: 'draft' },
    ]);
    // legal hold on, then off
    await page.click('#legal-hold-toggle');
    await page.locator('#object-lock-result .success').waitFor();
    expect((await node.s3.send(new GetObjectLegalHoldCommand({ Bucket: 'objects', Key: 'notes.txt' }))).LegalHold?.Status).toBe('ON');
    await expect.poll(() => page.locator('#object-legal-hold').innerText()).toContain('On');
    await page.click('#legal-hold-toggle');
    await page.click('#confirm-ok');
    await expect.poll(async () => (await node.s3.send(new GetObjectLegalHoldCommand({ Bucket: 'objects', Key: 'notes.txt' }))).LegalHold?.Status).toBe('OFF');
    // a GOVERNANCE retention, then shortened away with the bypass
    await page.selectOption('#retention-mode', 'GOVERNANCE');
    await page.fill('#retention-until', '2099-01-01T12:00');
    await page.click('#retention-save');
    await page.locator('#object-lock-result .success').waitFor();
    expect((await node.s3.send(new GetObjectRetentionCommand({ Bucket: 'objects', Key: 'notes.txt' }))).Retention?.Mode).toBe('GOVERNANCE');
    await page.selectOption('#retention-mode', '');
    await page.click('#retention-save');
    await page.locator('#object-lock-result .error-box').waitFor(); // without the bypass: refused
    await page.check('#retention-bypass');
    await page.click('#retention-save');
    await page.locator('#object-lock-result .success').waitFor();
    expect(await fails(node.s3.send(new GetObjectRetentionCommand({ Bucket: 'objects', Key: 'notes.txt' })))).toBe('NoSuchObjectLockConfiguration');
    // share the first version for 3 hours: the link says which key signs it and how to revoke it
    await page.fill('#share-amount', '3');
    await page.selectOption('#share-unit', '3600');
    await page.selectOption('#share-version', v1.VersionId!);
    await page.click('#share-create');
    const url = await page.locator('#share-url').inputValue();
    expect(url).toContain(`versionId=${v1.VersionId}`);
    expect(url).toContain('X-Amz-Expires=10800');
    expect(await (await fetch(url)).text()).toBe('version one');
    expect(await page.locator('#share-signer').innerText()).toContain(CONSOLE_ACCESS_KEY);
    // longer than a signature may last: refused in the page
    await page.fill('#share-amount', '8');
    await page.selectOption('#share-unit', '86400');
    await page.click('#share-create');
    await page.locator('#share-result .error-box').waitFor();
    await shot(page, FLOW, 'object-settings');
    // images and PDF
    const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
    await node.s3.send(new PutObjectCommand({ Bucket: 'objects', Key: 'dot.png', Body: png, ContentType: 'image/png' }));
    await page.goto(`${root}#/buckets/objects/object?key=dot.png`);
    await expect.poll(() => page.locator('#preview-image').evaluate((img: { complete: boolean; naturalWidth: number }) => (img.complete ? img.naturalWidth : 0)), { timeout: 10_000 }).toBe(1);
    await node.s3.send(new PutObjectCommand({ Bucket: 'objects', Key: 'doc.pdf', Body: '%PDF-1.4\n%%EOF\n', ContentType: 'application/pdf' }));
    await page.goto(`${root}#/buckets/objects/object?key=doc.pdf`);
    const frame = page.locator('#preview-frame');
    await frame.waitFor();
    expect(await frame.getAttribute('sandbox')).toBe('');
    const r = await page.request.get(new URL((await frame.getAttribute('src'))!, root).href);
    expect(r.headers()['content-type']).toBe('application/pdf');
    expect(r.headers()['content-security-policy']).toContain('sandbox');
    expect(r.headers()['content-disposition']).toMatch(/^inline/);
  });

  it("finds buckets by name, with the scanner's object counts and sizes", async () => {
    for (const b of ['alpha-logs', 'beta-logs', 'gamma']) await node.s3.send(new CreateBucketCommand({ Bucket: b }));
    await putMany(node.s3, 'alpha-logs', ['one', 'two', 'three']);
    await page.goto(`${root}#/buckets`);
    await page.fill('#bucket-filter', 'logs');
    await expect.poll(() => page.locator('#buckets-table a.bucket-link').allInnerTexts()).toEqual(['alpha-logs', 'beta-logs']);
    // counts come from the scanner: the page shows them once a cycle has counted the bucket
    await expect
      .poll(
        async () => {
          await page.reload();
          return page.locator('#buckets-table tr', { hasText: 'alpha-logs' }).locator('.bucket-objects').innerText();
        },
        { timeout: 30_000, interval: 1000 },
      )
      .toBe('3');
    expect(await page.locator('#bucket-usage-note').innerText()).toContain('as the scanner counted them');
  });

  it('finds objects by the start of their name, on the server, a page at a time', async () => {
    await putMany(node.s3, 'bulk', ['find/report-2024.pdf', 'find/report-2025.pdf', 'find/photo.jpg']);
    await page.goto(`${root}#/buckets/bulk?prefix=find%2F`);
    await page.locator('#objects-table').waitFor();
    const listed: string[] = [];
    page.on('request', (r) => {
      if (r.url().includes('/api/buckets/bulk/objects')) listed.push(new URL(r.url()).searchParams.get('prefix') ?? '');
    });
    await page.fill('#object-search', 'report');
    await page.click('#object-search-go');
    await expect.poll(() => page.locator('#objects-table a.object-link').allInnerTexts()).toEqual(['report-2024.pdf', 'report-2025.pdf']);
    expect(listed).toContain('find/report');
  });
});
