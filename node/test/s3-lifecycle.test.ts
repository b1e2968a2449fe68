/**
 * Lifecycle through @aws-sdk/client-s3 against the real server (engine over
 * real drives, real HTTP): rules are put with the SDK, and scanner cycles
 * driven by the engine's injected clock expire exactly what the rules
 * select, never anything else, and abort only the incomplete uploads they
 * select. A version under object lock is kept.
 *
 * `scannerCycle` below calls the executor's hooks the way a scanner cycle
 * does, one deterministic cycle at a time: it walks one drive's namespace
 * and hands over each object's version journal, then ends the set. The
 * executor, the rules and their application under the lock are the product
 * code; s3-lifecycle-scanner.test.ts proves the same on the node's real
 * scanner (`startHealing`), by its cycles alone.
 */
import { join } from 'node:path';
import {
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  GetBucketLifecycleConfigurationCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectVersionsCommand,
  PutBucketLifecycleConfigurationCommand,
  PutBucketVersioningCommand,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LifecycleExecutor } from '../src/background/lifecycle-executor.ts';
import { type LifecycleActionMessage, lifecycleAction } from '../src/util/diagnostics.ts';
import { LocalDrive } from '../src/storage/local-drive.ts';
import { decodeXlMeta } from '../src/storage/xl-meta.ts';
import { silentLogger } from '../src/util/logger.ts';
import { clientOf, DAY_MS, OffsetClock, s3Error } from './helpers/governance.ts';
import { type S3Server, start } from './helpers/s3-server.ts';

let srv: S3Server;
let s3: S3Client;
let executor: LifecycleExecutor;
const clock = new OffsetClock();
/** What the executor published for telemetry (`svc.lifecycle.actions`), summed by outcome. */
const published = new Map<string, number>();
const onAction = (msg: unknown) => {
  const a = msg as LifecycleActionMessage;
  published.set(a.outcome, (published.get(a.outcome) ?? 0) + a.count);
};

beforeAll(async () => {
  srv = await start({ engineClock: clock });
  s3 = clientOf(srv);
  executor = new LifecycleExecutor({ layer: srv.objectLayer, logger: silentLogger });
  lifecycleAction.subscribe(onAction);
});
afterAll(async () => {
  lifecycleAction.unsubscribe(onAction);
  await srv?.stop();
});

/** One scanner cycle at the engine's clock: every object of the one set, then the set's upload sweep. */
async function scannerCycle(): Promise<void> {
  executor.beginCycle(clock.now());
  const drive = new LocalDrive(join(srv.root, 'd0'));
  for (const b of await srv.objectLayer.listBuckets()) {
    for await (const e of drive.walkDir(b.name, { recursive: true })) {
      if (e.meta !== undefined) await executor.visitObject(b.name, e.name, decodeXlMeta(e.meta, false));
    }
  }
  await executor.endSet(0, 0);
}

/** Every version in the bucket as `key@n` (n: 0 the newest), delete markers as `key@n:dm`. */
async function versionsOf(bucket: string): Promise<string[]> {
  const r = await s3.send(new ListObjectVersionsCommand({ Bucket: bucket }));
  const all = [...(r.Versions ?? []).map((v) => ({ key: v.Key!, at: v.LastModified!, id: v.VersionId!, dm: false })), ...(r.DeleteMarkers ?? []).map((v) => ({ key: v.Key!, at: v.LastModified!, id: v.VersionId!, dm: true }))];
  const out: string[] = [];
  for (const key of [...new Set(all.map((v) => v.key))].sort()) {
    const mine = all.filter((v) => v.key === key).sort((a, b) => b.at.getTime() - a.at.getTime());
    mine.forEach((v, i) => out.push(`${key}@${i}${v.dm ? ':dm' : ''}`));
  }
  return out;
}

async function put(bucket: string, key: string, body: string | Buffer, tagging?: string): Promise<string | undefined> {
  const r = await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ...(tagging ? { Tagging: tagging } : {}) }));
  return r.VersionId;
}

describe('lifecycle executed by scanner cycles (injected clock)', () => {
  it('unversioned bucket: expiration by prefix, tags (And) and size; upload aborts; nothing unselected', async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'lc-plain' }));
    await s3.send(
      new PutBucketLifecycleConfigurationCommand({
        Bucket: 'lc-plain',
        LifecycleConfiguration: {
          Rules: [
            { ID: 'logs', Status: 'Enabled', Filter: { Prefix: 'logs/' }, Expiration: { Days: 1 } },
            { ID: 'tmp', Status: 'Enabled', Filter: { And: { Prefix: 't/', Tags: [{ Key: 'tmp', Value: 'yes' }] } }, Expiration: { Days: 1 } },
            { ID: 'big', Status: 'Enabled', Filter: { And: { Prefix: 'size/', ObjectSizeGreaterThan: 1000 } }, Expiration: { Days: 1 } },
            { ID: 'off', Status: 'Disabled', Filter: { Prefix: 'keep/' }, Expiration: { Days: 1 } },
            { ID: 'uploads', Status: 'Enabled', Filter: { Prefix: 'up/' }, AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 } },
          ],
        },
      }),
    );
    const got = await s3.send(new GetBucketLifecycleConfigurationCommand({ Bucket: 'lc-plain' }));
    expect(got.Rules?.map((r) => r.ID)).toEqual(['logs', 'tmp', 'big', 'off', 'uploads']);

    await put('lc-plain', 'logs/a', 'log line');
    await put('lc-plain', 'logsx', 'outside the prefix');
    await put('lc-plain', 'keep/a', 'a disabled rule selects nothing');
    await put('lc-plain', 't/x', 'temporary', 'tmp=yes');
    await put('lc-plain', 't/y', 'not temporary', 'tmp=no');
    await put('lc-plain', 't/z', 'untagged');
    await put('lc-plain', 'size/big', Buffer.alloc(2000, 1));
    await put('lc-plain', 'size/small', Buffer.alloc(1000, 1));
    const upSelected = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'lc-plain', Key: 'up/part' }));
    const upKept = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'lc-plain', Key: 'keep/part' }));

    // x-amz-expiration names the rule and the day the object goes.
    const head = await s3.send(new HeadObjectCommand({ Bucket: 'lc-plain', Key: 'logs/a' }));
    expect(head.Expiration).toMatch(/^expiry-date=".+ GMT", rule-id="logs"$/);
    expect((await s3.send(new HeadObjectCommand({ Bucket: 'lc-plain', Key: 'keep/a' }))).Expiration).toBeUndefined();

    const all = ['keep/a@0', 'logs/a@0', 'logsx@0', 'size/big@0', 'size/small@0', 't/x@0', 't/y@0', 't/z@0'];
    // Not due yet: a cycle now changes nothing.
    await scannerCycle();
    expect(await versionsOf('lc-plain')).toEqual(all);

    clock.advance(2 * DAY_MS);
    await scannerCycle();
    expect(await versionsOf('lc-plain')).toEqual(['keep/a@0', 'logsx@0', 'size/small@0', 't/y@0', 't/z@0']);
    expect((await s3Error(s3.send(new HeadObjectCommand({ Bucket: 'lc-plain', Key: 'logs/a' })))).status).toBe(404);
    const uploads = await s3.send(new ListMultipartUploadsCommand({ Bucket: 'lc-plain' }));
    expect(uploads.Uploads?.map((u) => u.UploadId)).toEqual([upKept.UploadId]);
    expect(upSelected.UploadId).not.toBe(upKept.UploadId);
    expect(executor.progress().lastCycle).toMatchObject({ versionsDeleted: 3, uploadsAborted: 1, errors: 0 });
    // The same counts went to telemetry.
    expect(Object.fromEntries(published)).toEqual({ version_deleted: 3, upload_aborted: 1 });

    // Another cycle finds nothing more to do.
    await scannerCycle();
    expect(await versionsOf('lc-plain')).toEqual(['keep/a@0', 'logsx@0', 'size/small@0', 't/y@0', 't/z@0']);
  });

  it('versioned bucket: noncurrent versions beyond the newest kept, expired delete markers, current versions get a marker', async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'lc-ver' }));
    await s3.send(new PutBucketVersioningCommand({ Bucket: 'lc-ver', VersioningConfiguration: { Status: 'Enabled' } }));
    await s3.send(
      new PutBucketLifecycleConfigurationCommand({
        Bucket: 'lc-ver',
        LifecycleConfiguration: {
          Rules: [
            { ID: 'nc', Status: 'Enabled', Filter: { Prefix: 'nc/' }, NoncurrentVersionExpiration: { NoncurrentDays: 1, NewerNoncurrentVersions: 1 } },
            { ID: 'dm', Status: 'Enabled', Filter: { Prefix: 'dm/' }, Expiration: { ExpiredObjectDeleteMarker: true } },
            { ID: 'cur', Status: 'Enabled', Filter: { Prefix: 'cur/' }, Expiration: { Days: 1 } },
          ],
        },
      }),
    );
    for (const body of ['v1', 'v2', 'v3', 'v4']) {
      await put('lc-ver', 'nc/k', body);
      clock.advance(1000); // distinct modification times
    }
    await put('lc-ver', 'dm/gone', 'x');
    await s3.send(new DeleteObjectCommand({ Bucket: 'lc-ver', Key: 'dm/gone' })); // a marker over one version
    await s3.send(new DeleteObjectCommand({ Bucket: 'lc-ver', Key: 'dm/alone' })); // a marker alone: expired
    await put('lc-ver', 'cur/a', 'current');
    await put('lc-ver', 'other/a', 'o1');
    await put('lc-ver', 'other/a', 'o2');

    expect((await versionsOf('lc-ver')).filter((v) => v.startsWith('dm/'))).toEqual(['dm/alone@0:dm', 'dm/gone@0:dm', 'dm/gone@1']);
    // An expired object delete marker (no version under it) has no age to wait for: it goes on the next cycle.
    const before = ['cur/a@0', 'dm/gone@0:dm', 'dm/gone@1', 'nc/k@0', 'nc/k@1', 'nc/k@2', 'nc/k@3', 'other/a@0', 'other/a@1'];
    await scannerCycle();
    expect(await versionsOf('lc-ver')).toEqual(before);

    clock.advance(3 * DAY_MS);
    await scannerCycle();
    // nc/k: the current version and the newest noncurrent one stay; dm/alone's lone marker goes;
    // dm/gone keeps its marker (a version is under it); cur/a gets a delete marker; other/ is untouched.
    expect(await versionsOf('lc-ver')).toEqual(['cur/a@0:dm', 'cur/a@1', 'dm/gone@0:dm', 'dm/gone@1', 'nc/k@0', 'nc/k@1', 'other/a@0', 'other/a@1']);
  });

  it('a version under object lock is kept when a rule selects it', async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'lc-lock', ObjectLockEnabledForBucket: true }));
    await s3.send(
      new PutBucketLifecycleConfigurationCommand({
        Bucket: 'lc-lock',
        LifecycleConfiguration: { Rules: [{ ID: 'nc', Status: 'Enabled', Filter: { Prefix: '' }, NoncurrentVersionExpiration: { NoncurrentDays: 1 } }] },
      }),
    );
    await s3.send(
      new PutObjectCommand({ Bucket: 'lc-lock', Key: 'k', Body: 'locked', ObjectLockMode: 'GOVERNANCE', ObjectLockRetainUntilDate: new Date(clock.now() + 30 * DAY_MS) }),
    );
    await put('lc-lock', 'k', 'unlocked');
    await put('lc-lock', 'k', 'current');
    clock.advance(3 * DAY_MS);
    await scannerCycle();
    // The unlocked noncurrent version went; the locked one stays.
    const r = await s3.send(new ListObjectVersionsCommand({ Bucket: 'lc-lock' }));
    const bodies: string[] = [];
    for (const v of r.Versions ?? []) {
      const g = await s3.send(new GetObjectCommand({ Bucket: 'lc-lock', Key: 'k', VersionId: v.VersionId! }));
      bodies.push(await g.Body!.transformToString());
    }
    expect(bodies.sort()).toEqual(['current', 'locked']);
    expect(executor.progress().lastCycle?.keptLocked).toBe(1);
  });
});
