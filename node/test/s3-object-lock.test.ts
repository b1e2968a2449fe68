/**
 * Object lock through @aws-sdk/client-s3 against the real server (engine
 * over real drives, real HTTP): every way to delete or overwrite a locked
 * version is refused in both modes, the GOVERNANCE bypass works only with
 * the header (and the permission), a legal hold blocks until removed,
 * default retention applies to new versions (PUT, copy, multipart), and
 * retention ends by the server's clock.
 */
import {
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  DeleteBucketCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  GetObjectLegalHoldCommand,
  GetObjectLockConfigurationCommand,
  GetObjectRetentionCommand,
  HeadObjectCommand,
  ListObjectVersionsCommand,
  PutBucketPolicyCommand,
  PutBucketVersioningCommand,
  PutObjectCommand,
  PutObjectLegalHoldCommand,
  PutObjectLockConfigurationCommand,
  PutObjectRetentionCommand,
  type S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientOf, DAY_MS, OffsetClock, s3Error } from './helpers/governance.ts';
import { type S3Server, start } from './helpers/s3-server.ts';

let srv: S3Server;
let s3: S3Client;
const clock = new OffsetClock();

beforeAll(async () => {
  srv = await start({ engineClock: clock });
  s3 = clientOf(srv);
});
afterAll(async () => {
  await srv?.stop();
});

const inDays = (d: number) => new Date(clock.now() + d * DAY_MS);

async function lockBucket(name: string): Promise<void> {
  await s3.send(new CreateBucketCommand({ Bucket: name, ObjectLockEnabledForBucket: true }));
}

async function putVersion(bucket: string, key: string, body: string, extra: Partial<ConstructorParameters<typeof PutObjectCommand>[0]> = {}): Promise<string> {
  const r = await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ...extra }));
  return r.VersionId!;
}

async function readVersion(bucket: string, key: string, versionId: string): Promise<string> {
  const r = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key, VersionId: versionId }));
  return r.Body!.transformToString();
}

describe('object lock buckets', () => {
  it('creation with the flag turns versioning on for good', async () => {
    await lockBucket('lk-create');
    const cfg = await s3.send(new GetObjectLockConfigurationCommand({ Bucket: 'lk-create' }));
    expect(cfg.ObjectLockConfiguration?.ObjectLockEnabled).toBe('Enabled');
    const e = await s3Error(s3.send(new PutBucketVersioningCommand({ Bucket: 'lk-create', VersioningConfiguration: { Status: 'Suspended' } })));
    expect(e).toMatchObject({ code: 'InvalidBucketState', status: 409 });
    // a bucket without it has no configuration, and no retention can be set there
    await s3.send(new CreateBucketCommand({ Bucket: 'lk-plain' }));
    expect((await s3Error(s3.send(new GetObjectLockConfigurationCommand({ Bucket: 'lk-plain' })))).code).toBe('ObjectLockConfigurationNotFoundError');
    await s3.send(new PutObjectCommand({ Bucket: 'lk-plain', Key: 'k', Body: 'x' }));
    expect(
      (await s3Error(s3.send(new PutObjectRetentionCommand({ Bucket: 'lk-plain', Key: 'k', Retention: { Mode: 'GOVERNANCE', RetainUntilDate: inDays(1) } })))).code,
    ).toBe('InvalidRequest');
    expect(
      (await s3Error(s3.send(new PutObjectCommand({ Bucket: 'lk-plain', Key: 'k2', Body: 'x', ObjectLockMode: 'COMPLIANCE', ObjectLockRetainUntilDate: inDays(1) })))).code,
    ).toBe('InvalidRequest');
    // enabling it later needs versioning Enabled
    expect(
      (await s3Error(s3.send(new PutObjectLockConfigurationCommand({ Bucket: 'lk-plain', ObjectLockConfiguration: { ObjectLockEnabled: 'Enabled' } })))).code,
    ).toBe('InvalidBucketState');
  });
});

for (const mode of ['GOVERNANCE', 'COMPLIANCE'] as const) {
  describe(`a version under ${mode} retention`, () => {
    const b = `lk-${mode.toLowerCase()}`;
    let locked: string;

    beforeAll(async () => {
      await lockBucket(b);
      locked = await putVersion(b, 'doc', 'locked body', { ObjectLockMode: mode, ObjectLockRetainUntilDate: inDays(10) });
    });

    it('shows its retention on HEAD and GetObjectRetention', async () => {
      const h = await s3.send(new HeadObjectCommand({ Bucket: b, Key: 'doc', VersionId: locked }));
      expect(h.ObjectLockMode).toBe(mode);
      expect(Math.abs(h.ObjectLockRetainUntilDate!.getTime() - inDays(10).getTime())).toBeLessThan(5_000);
      const r = await s3.send(new GetObjectRetentionCommand({ Bucket: b, Key: 'doc', VersionId: locked }));
      expect(r.Retention?.Mode).toBe(mode);
    });

    it('refuses DeleteObject with its version id, with and without the bypass header as the mode demands', async () => {
      const e = await s3Error(s3.send(new DeleteObjectCommand({ Bucket: b, Key: 'doc', VersionId: locked })));
      expect(e).toMatchObject({ code: 'AccessDenied', status: 403 });
      if (mode === 'COMPLIANCE') {
        expect((await s3Error(s3.send(new DeleteObjectCommand({ Bucket: b, Key: 'doc', VersionId: locked, BypassGovernanceRetention: true })))).code).toBe('AccessDenied');
      }
      expect(await readVersion(b, 'doc', locked)).toBe('locked body');
    });

    it('refuses DeleteObjects naming it (and reports it per key)', async () => {
      const r = await s3.send(
        new DeleteObjectsCommand({
          Bucket: b,
          Delete: { Objects: [{ Key: 'doc', VersionId: locked }] },
          ...(mode === 'COMPLIANCE' ? { BypassGovernanceRetention: true } : {}),
        }),
      );
      expect(r.Deleted ?? []).toEqual([]);
      expect(r.Errors?.[0]).toMatchObject({ Key: 'doc', VersionId: locked, Code: 'AccessDenied' });
      expect(await readVersion(b, 'doc', locked)).toBe('locked body');
    });

    it('a plain DELETE only adds a delete marker; overwrites add versions; the locked one stays', async () => {
      const del = await s3.send(new DeleteObjectCommand({ Bucket: b, Key: 'doc' }));
      expect(del.DeleteMarker).toBe(true);
      await putVersion(b, 'doc', 'newer body');
      expect(await readVersion(b, 'doc', locked)).toBe('locked body');
      // the null version cannot come back to overwrite it: versioning stays Enabled
      expect((await s3Error(s3.send(new PutBucketVersioningCommand({ Bucket: b, VersioningConfiguration: { Status: 'Suspended' } })))).code).toBe('InvalidBucketState');
      // removing the marker itself is allowed (it holds no data)
      await s3.send(new DeleteObjectCommand({ Bucket: b, Key: 'doc', VersionId: del.VersionId }));
    });

    it('its retention is never shortened or removed without the rules allowing it', async () => {
      const shorter = { Mode: mode, RetainUntilDate: inDays(5) };
      expect((await s3Error(s3.send(new PutObjectRetentionCommand({ Bucket: b, Key: 'doc', VersionId: locked, Retention: shorter })))).code).toBe('AccessDenied');
      expect((await s3Error(s3.send(new PutObjectRetentionCommand({ Bucket: b, Key: 'doc', VersionId: locked, Retention: {} })))).code).toBe('AccessDenied');
      if (mode === 'COMPLIANCE') {
        for (const Retention of [shorter, { Mode: 'GOVERNANCE' as const, RetainUntilDate: inDays(20) }, {}]) {
          const e = await s3Error(s3.send(new PutObjectRetentionCommand({ Bucket: b, Key: 'doc', VersionId: locked, Retention, BypassGovernanceRetention: true })));
          expect(e.code).toBe('AccessDenied');
        }
      }
      // extending always works
      await s3.send(new PutObjectRetentionCommand({ Bucket: b, Key: 'doc', VersionId: locked, Retention: { Mode: mode, RetainUntilDate: inDays(11) } }));
      const bucketDelete = await s3Error(s3.send(new DeleteBucketCommand({ Bucket: b })));
      expect(bucketDelete.code).toBe('BucketNotEmpty');
    });
  });
}

describe('the GOVERNANCE bypass', () => {
  it('works only with the header, and only with the permission', async () => {
    await lockBucket('lk-bypass');
    const v = await putVersion('lk-bypass', 'k', 'g', { ObjectLockMode: 'GOVERNANCE', ObjectLockRetainUntilDate: inDays(3) });
    const v2 = await putVersion('lk-bypass', 'k2', 'g', { ObjectLockMode: 'GOVERNANCE', ObjectLockRetainUntilDate: inDays(3) });
    // a bucket policy denying the permission refuses the bypass even for the owner
    const deny = {
      Version: '2012-10-17',
      Statement: [{ Effect: 'Deny', Principal: '*', Action: 's3:BypassGovernanceRetention', Resource: 'arn:aws:s3:::lk-bypass/k' }],
    };
    await s3.send(new PutBucketPolicyCommand({ Bucket: 'lk-bypass', Policy: JSON.stringify(deny) }));
    expect((await s3Error(s3.send(new DeleteObjectCommand({ Bucket: 'lk-bypass', Key: 'k', VersionId: v, BypassGovernanceRetention: true })))).code).toBe('AccessDenied');
    const multi = await s3.send(new DeleteObjectsCommand({ Bucket: 'lk-bypass', BypassGovernanceRetention: true, Delete: { Objects: [{ Key: 'k', VersionId: v }] } }));
    expect(multi.Errors?.[0]?.Code).toBe('AccessDenied');
    // shortening with the header is a bypass too
    await s3.send(new PutObjectRetentionCommand({ Bucket: 'lk-bypass', Key: 'k2', VersionId: v2, Retention: { Mode: 'GOVERNANCE', RetainUntilDate: inDays(1) }, BypassGovernanceRetention: true }));
    expect((await s3.send(new GetObjectRetentionCommand({ Bucket: 'lk-bypass', Key: 'k2', VersionId: v2 }))).Retention?.RetainUntilDate!.getTime()).toBeLessThan(inDays(2).getTime());
    // with the permission, the header removes the version; DeleteObjects too
    await s3.send(new PutBucketPolicyCommand({ Bucket: 'lk-bypass', Policy: JSON.stringify({ ...deny, Statement: [{ ...deny.Statement[0], Resource: 'arn:aws:s3:::lk-bypass/other' }] }) }));
    await s3.send(new DeleteObjectCommand({ Bucket: 'lk-bypass', Key: 'k', VersionId: v, BypassGovernanceRetention: true }));
    const r = await s3.send(new DeleteObjectsCommand({ Bucket: 'lk-bypass', BypassGovernanceRetention: true, Delete: { Objects: [{ Key: 'k2', VersionId: v2 }] } }));
    expect(r.Deleted?.[0]).toMatchObject({ Key: 'k2', VersionId: v2 });
    const left = await s3.send(new ListObjectVersionsCommand({ Bucket: 'lk-bypass' }));
    expect(left.Versions ?? []).toEqual([]);
  });
});

describe('legal hold', () => {
  it('blocks every removal, bypass or not, until it is removed', async () => {
    await lockBucket('lk-hold');
    const v = await putVersion('lk-hold', 'k', 'held', { ObjectLockLegalHoldStatus: 'ON' });
    expect((await s3.send(new GetObjectLegalHoldCommand({ Bucket: 'lk-hold', Key: 'k', VersionId: v }))).LegalHold?.Status).toBe('ON');
    expect((await s3Error(s3.send(new DeleteObjectCommand({ Bucket: 'lk-hold', Key: 'k', VersionId: v })))).code).toBe('AccessDenied');
    expect((await s3Error(s3.send(new DeleteObjectCommand({ Bucket: 'lk-hold', Key: 'k', VersionId: v, BypassGovernanceRetention: true })))).code).toBe('AccessDenied');
    // a hold set later on an unlocked version blocks too
    const v2 = await putVersion('lk-hold', 'k2', 'free');
    await s3.send(new PutObjectLegalHoldCommand({ Bucket: 'lk-hold', Key: 'k2', VersionId: v2, LegalHold: { Status: 'ON' } }));
    expect((await s3Error(s3.send(new DeleteObjectCommand({ Bucket: 'lk-hold', Key: 'k2', VersionId: v2 })))).code).toBe('AccessDenied');
    // removed: the versions can go
    await s3.send(new PutObjectLegalHoldCommand({ Bucket: 'lk-hold', Key: 'k', VersionId: v, LegalHold: { Status: 'OFF' } }));
    await s3.send(new PutObjectLegalHoldCommand({ Bucket: 'lk-hold', Key: 'k2', VersionId: v2, LegalHold: { Status: 'OFF' } }));
    await s3.send(new DeleteObjectCommand({ Bucket: 'lk-hold', Key: 'k', VersionId: v }));
    await s3.send(new DeleteObjectCommand({ Bucket: 'lk-hold', Key: 'k2', VersionId: v2 }));
    expect((await s3Error(s3.send(new HeadObjectCommand({ Bucket: 'lk-hold', Key: 'k', VersionId: v })))).status).toBe(404);
  });
});

describe('default retention', () => {
  it('applies to new versions from PUT, copy and multipart; explicit headers win', async () => {
    await lockBucket('lk-default');
    await s3.send(
      new PutObjectLockConfigurationCommand({
        Bucket: 'lk-default',
        ObjectLockConfiguration: { ObjectLockEnabled: 'Enabled', Rule: { DefaultRetention: { Mode: 'COMPLIANCE', Days: 2 } } },
      }),
    );
    const cfg = await s3.send(new GetObjectLockConfigurationCommand({ Bucket: 'lk-default' }));
    expect(cfg.ObjectLockConfiguration?.Rule?.DefaultRetention).toMatchObject({ Mode: 'COMPLIANCE', Days: 2 });
    const near = (d: Date | undefined, days: number) => expect(Math.abs(d!.getTime() - inDays(days).getTime())).toBeLessThan(10_000);

    const put = await putVersion('lk-default', 'put', 'p');
    const h = await s3.send(new HeadObjectCommand({ Bucket: 'lk-default', Key: 'put', VersionId: put }));
    expect(h.ObjectLockMode).toBe('COMPLIANCE');
    near(h.ObjectLockRetainUntilDate, 2);

    const copy = await s3.send(new CopyObjectCommand({ Bucket: 'lk-default', Key: 'copy', CopySource: 'lk-default/put' }));
    const hc = await s3.send(new HeadObjectCommand({ Bucket: 'lk-default', Key: 'copy', VersionId: copy.VersionId }));
    expect(hc.ObjectLockMode).toBe('COMPLIANCE');
    near(hc.ObjectLockRetainUntilDate, 2);

    const up = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'lk-default', Key: 'mp' }));
    const part = await s3.send(new UploadPartCommand({ Bucket: 'lk-default', Key: 'mp', UploadId: up.UploadId, PartNumber: 1, Body: 'part' }));
    const done = await s3.send(
      new CompleteMultipartUploadCommand({ Bucket: 'lk-default', Key: 'mp', UploadId: up.UploadId, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: part.ETag }] } }),
    );
    const hm = await s3.send(new HeadObjectCommand({ Bucket: 'lk-default', Key: 'mp', VersionId: done.VersionId }));
    expect(hm.ObjectLockMode).toBe('COMPLIANCE');
    near(hm.ObjectLockRetainUntilDate, 2);

    // explicit headers on PUT, copy and CreateMultipartUpload replace the default
    const ex = await putVersion('lk-default', 'explicit', 'e', { ObjectLockMode: 'GOVERNANCE', ObjectLockRetainUntilDate: inDays(7), ObjectLockLegalHoldStatus: 'ON' });
    const he = await s3.send(new HeadObjectCommand({ Bucket: 'lk-default', Key: 'explicit', VersionId: ex }));
    expect([he.ObjectLockMode, he.ObjectLockLegalHoldStatus]).toEqual(['GOVERNANCE', 'ON']);
    near(he.ObjectLockRetainUntilDate, 7);
    const cx = await s3.send(
      new CopyObjectCommand({ Bucket: 'lk-default', Key: 'copy2', CopySource: 'lk-default/put', ObjectLockMode: 'GOVERNANCE', ObjectLockRetainUntilDate: inDays(4) }),
    );
    near((await s3.send(new HeadObjectCommand({ Bucket: 'lk-default', Key: 'copy2', VersionId: cx.VersionId }))).ObjectLockRetainUntilDate, 4);
    const up2 = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'lk-default', Key: 'mp2', ObjectLockLegalHoldStatus: 'ON', ObjectLockMode: 'GOVERNANCE', ObjectLockRetainUntilDate: inDays(9) }));
    const p2 = await s3.send(new UploadPartCommand({ Bucket: 'lk-default', Key: 'mp2', UploadId: up2.UploadId, PartNumber: 1, Body: 'x' }));
    const d2 = await s3.send(new CompleteMultipartUploadCommand({ Bucket: 'lk-default', Key: 'mp2', UploadId: up2.UploadId, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: p2.ETag }] } }));
    const hm2 = await s3.send(new HeadObjectCommand({ Bucket: 'lk-default', Key: 'mp2', VersionId: d2.VersionId }));
    expect([hm2.ObjectLockMode, hm2.ObjectLockLegalHoldStatus]).toEqual(['GOVERNANCE', 'ON']);
    near(hm2.ObjectLockRetainUntilDate, 9);
    // a retain-until date in the past is refused
    expect((await s3Error(putVersion('lk-default', 'past', 'x', { ObjectLockMode: 'GOVERNANCE', ObjectLockRetainUntilDate: inDays(-1) }))).code).toBe('InvalidArgument');
  });
});

describe('retention ends by the server clock', () => {
  it('a COMPLIANCE version can go once the server passed its date, not before', async () => {
    await lockBucket('lk-clock');
    const v = await putVersion('lk-clock', 'k', 'c', { ObjectLockMode: 'COMPLIANCE', ObjectLockRetainUntilDate: inDays(1) });
    expect((await s3Error(s3.send(new DeleteObjectCommand({ Bucket: 'lk-clock', Key: 'k', VersionId: v })))).code).toBe('AccessDenied');
    // The client's clock is unchanged (its signature still verifies); only the server's time moves.
    clock.advance(DAY_MS + 60_000);
    try {
      await s3.send(new DeleteObjectCommand({ Bucket: 'lk-clock', Key: 'k', VersionId: v }));
      expect((await s3Error(s3.send(new HeadObjectCommand({ Bucket: 'lk-clock', Key: 'k', VersionId: v })))).status).toBe(404);
    } finally {
      clock.advance(-(DAY_MS + 60_000));
    }
  });
});
