/**
 * Lifecycle on the node's real scanner: the healing composition a node
 * starts (`startHealing`: scanner with the lifecycle executor as its hook)
 * runs over the real engine behind real HTTP, with a short scanner interval
 * and the engine's injected clock. Rules put through @aws-sdk/client-s3
 * expire objects and abort uploads by scanner cycles alone: no test code
 * walks the namespace or calls the executor. Before the rules are due,
 * cycles change nothing; after, exactly the selected versions go, and a
 * version under object lock stays.
 */
import {
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  ListObjectVersionsCommand,
  PutBucketLifecycleConfigurationCommand,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Healing, startHealing } from '../src/background/healing.ts';
import { silentLogger } from '../src/util/logger.ts';
import { clientOf, DAY_MS, OffsetClock } from './helpers/governance.ts';
import { type S3Server, start } from './helpers/s3-server.ts';

let srv: S3Server;
let s3: S3Client;
let healing: Healing;
const clock = new OffsetClock();

beforeAll(async () => {
  srv = await start({ engineClock: clock });
  s3 = clientOf(srv);
  healing = await startHealing({
    layer: srv.objectLayer,
    clock,
    logger: silentLogger,
    config: { scannerIntervalMs: 200, scannerSpeed: 'fastest', scannerDeepSample: 0, healSpeed: 'fastest', orphanAgeMs: 3_600_000 },
    node: '127.0.0.1:9000',
    nodeIndex: 0,
    scans: () => true,
  });
}, 60_000);
afterAll(async () => {
  await healing?.close();
  await srv?.stop();
}, 60_000);

async function until<T>(what: string, get: () => Promise<T> | T, ok: (v: T) => boolean, timeoutMs = 90_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await get();
    if (ok(v)) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}: last ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Waits until a whole scanner cycle has started and finished after this call (the one running may have begun earlier). */
async function wholeCycle(): Promise<void> {
  const c0 = healing.scanner.progress().cycles;
  await until('two scanner cycles', () => healing.scanner.progress().cycles, (c) => c >= c0 + 2);
}

async function keys(bucket: string): Promise<string[]> {
  const r = await s3.send(new ListObjectsV2Command({ Bucket: bucket }));
  return (r.Contents ?? []).map((c) => c.Key!);
}

async function bodies(bucket: string, key: string): Promise<string[]> {
  const r = await s3.send(new ListObjectVersionsCommand({ Bucket: bucket }));
  const out: string[] = [];
  for (const v of r.Versions ?? []) {
    const g = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key, VersionId: v.VersionId! }));
    out.push(await g.Body!.transformToString());
  }
  return out.sort();
}

describe('lifecycle on the real scanner (injected clock)', () => {
  it('expires exactly what rules select, aborts selected uploads, keeps locked versions', async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'scan-plain' }));
    await s3.send(
      new PutBucketLifecycleConfigurationCommand({
        Bucket: 'scan-plain',
        LifecycleConfiguration: {
          Rules: [
            { ID: 'logs', Status: 'Enabled', Filter: { Prefix: 'logs/' }, Expiration: { Days: 1 } },
            { ID: 'uploads', Status: 'Enabled', Filter: { Prefix: 'up/' }, AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 } },
          ],
        },
      }),
    );
    for (const k of ['logs/a', 'logs/b', 'logsx', 'keep/a']) await s3.send(new PutObjectCommand({ Bucket: 'scan-plain', Key: k, Body: k }));
    const upSelected = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'scan-plain', Key: 'up/part' }));
    const upKept = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'scan-plain', Key: 'keep/part' }));

    await s3.send(new CreateBucketCommand({ Bucket: 'scan-lock', ObjectLockEnabledForBucket: true }));
    await s3.send(
      new PutBucketLifecycleConfigurationCommand({
        Bucket: 'scan-lock',
        LifecycleConfiguration: { Rules: [{ ID: 'nc', Status: 'Enabled', Filter: { Prefix: '' }, NoncurrentVersionExpiration: { NoncurrentDays: 1 } }] },
      }),
    );
    await s3.send(
      new PutObjectCommand({ Bucket: 'scan-lock', Key: 'k', Body: 'locked', ObjectLockMode: 'GOVERNANCE', ObjectLockRetainUntilDate: new Date(clock.now() + 30 * DAY_MS) }),
    );
    await s3.send(new PutObjectCommand({ Bucket: 'scan-lock', Key: 'k', Body: 'unlocked' }));
    await s3.send(new PutObjectCommand({ Bucket: 'scan-lock', Key: 'k', Body: 'current' }));

    // Not due yet: whole cycles change nothing.
    await wholeCycle();
    await wholeCycle();
    expect(healing.lifecycle.progress().cycles).toBeGreaterThanOrEqual(2);
    expect((await keys('scan-plain')).sort()).toEqual(['keep/a', 'logs/a', 'logs/b', 'logsx']);
    expect(await bodies('scan-lock', 'k')).toEqual(['current', 'locked', 'unlocked']);
    expect((await s3.send(new ListMultipartUploadsCommand({ Bucket: 'scan-plain' }))).Uploads).toHaveLength(2);

    // Two days on at the engine's clock: the scanner alone applies the rules.
    clock.advance(2 * DAY_MS);
    await until('logs/ expired', () => keys('scan-plain'), (k) => !k.some((x) => x.startsWith('logs/')));
    await until('the unlocked noncurrent version expired', () => bodies('scan-lock', 'k'), (b) => b.length === 2);
    await until('the selected upload aborted', async () => (await s3.send(new ListMultipartUploadsCommand({ Bucket: 'scan-plain' }))).Uploads ?? [], (u) => u.length === 1);
    // And further cycles take nothing they do not select.
    await wholeCycle();
    expect((await keys('scan-plain')).sort()).toEqual(['keep/a', 'logsx']);
    expect(await bodies('scan-lock', 'k')).toEqual(['current', 'locked']);
    const uploads = (await s3.send(new ListMultipartUploadsCommand({ Bucket: 'scan-plain' }))).Uploads ?? [];
    expect(uploads.map((u) => u.UploadId)).toEqual([upKept.UploadId]);
    expect(upSelected.UploadId).not.toBe(upKept.UploadId);
    const p = healing.lifecycle.progress();
    expect(p.total).toMatchObject({ versionsDeleted: 3, uploadsAborted: 1, errors: 0 });
    expect(p.total.keptLocked).toBeGreaterThanOrEqual(1);
  }, 300_000);
});
