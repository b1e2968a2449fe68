/**
 * Exact S3 answers (issue 28, items 6-9), with the clients that showed them:
 * the AWS CLI for listings, `@aws-sdk/client-s3` for the rest.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  GetBucketPolicyStatusCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsCommand,
  ListObjectsV2Command,
  ListObjectVersionsCommand,
  PutObjectCommand,
  PutObjectLockConfigurationCommand,
  PutObjectRetentionCommand,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { describe, expect, it } from 'vitest';
import { errorOf } from './helpers/s3-error.ts';
import { CLI_TIMEOUT, runCli, useCliFixture } from './helpers/cli.ts';

const fx = useCliFixture('s3-exact');


const inDays = (d: number) => new Date(Date.now() + d * 86_400_000);

describe('object lock answers', () => {
  it('an invalid default retention period is InvalidRetentionPeriod; GOVERNANCE -> COMPLIANCE needs the bypass', async () => {
    await fx.s3.send(new CreateBucketCommand({ Bucket: 'exact-lock', ObjectLockEnabledForBucket: true }));
    for (const DefaultRetention of [{ Mode: 'GOVERNANCE' as const, Days: 0 }, { Mode: 'COMPLIANCE' as const, Years: -1 }, { Mode: 'GOVERNANCE' as const, Days: 36501 }]) {
      const e = await errorOf(fx.s3.send(new PutObjectLockConfigurationCommand({ Bucket: 'exact-lock', ObjectLockConfiguration: { ObjectLockEnabled: 'Enabled', Rule: { DefaultRetention } } })));
      expect(e).toEqual({ code: 'InvalidRetentionPeriod', status: 400 });
    }
    const put = await fx.s3.send(new PutObjectCommand({ Bucket: 'exact-lock', Key: 'g', Body: 'x', ObjectLockMode: 'GOVERNANCE', ObjectLockRetainUntilDate: inDays(2) }));
    const toCompliance = { Bucket: 'exact-lock', Key: 'g', VersionId: put.VersionId!, Retention: { Mode: 'COMPLIANCE' as const, RetainUntilDate: inDays(3) } };
    expect(await errorOf(fx.s3.send(new PutObjectRetentionCommand(toCompliance)))).toEqual({ code: 'AccessDenied', status: 403 });
    // extending in the same mode needs nothing; the mode change goes through with the bypass
    await fx.s3.send(new PutObjectRetentionCommand({ ...toCompliance, Retention: { Mode: 'GOVERNANCE', RetainUntilDate: inDays(3) } }));
    await fx.s3.send(new PutObjectRetentionCommand({ ...toCompliance, BypassGovernanceRetention: true }));
    const head = await fx.s3.send(new HeadObjectCommand({ Bucket: 'exact-lock', Key: 'g', VersionId: put.VersionId! }));
    expect(head.ObjectLockMode).toBe('COMPLIANCE');
  });
});

describe('listing answers', () => {
  it('AWS CLI list-objects-v2 --prefix / lists nothing (no key starts with /), with or without a delimiter', async () => {
    await fx.s3.send(new CreateBucketCommand({ Bucket: 'exact-list' }));
    for (const Key of ['b/a/c', 'g']) await fx.s3.send(new PutObjectCommand({ Bucket: 'exact-list', Key, Body: Key }));
    const ep = ['--endpoint-url', fx.srv.endpoint, 's3api', 'list-objects-v2', '--bucket', 'exact-list', '--output', 'json'];
    for (const extra of [[], ['--delimiter', '/'], ['--prefix', '/']]) {
      const args = extra[0] === '--prefix' ? [...ep, ...extra] : [...ep, '--prefix', '/', ...extra];
      const out = JSON.parse(await runCli(fx.cli, 'aws', args));
      expect(out.Contents ?? []).toEqual([]);
      expect(out.CommonPrefixes ?? []).toEqual([]);
    }
    for (const Prefix of ['/g', '//', 'b//', '/b/a/']) {
      const r = await fx.s3.send(new ListObjectsV2Command({ Bucket: 'exact-list', Prefix }));
      expect(r.KeyCount).toBe(0);
    }
    // the real prefixes still list
    const all = JSON.parse(await runCli(fx.cli, 'aws', [...ep, '--prefix', 'b/']));
    expect(all.Contents.map((c: { Key: string }) => c.Key)).toEqual(['b/a/c']);
  }, CLI_TIMEOUT);

  it('an empty ContinuationToken is echoed; keys with control characters come back exact without EncodingType', async () => {
    const first = await fx.s3.send(new ListObjectsV2Command({ Bucket: 'exact-list', ContinuationToken: '' }));
    expect(first.ContinuationToken).toBe('');
    expect(first.KeyCount).toBe(2);
    await fx.s3.send(new CreateBucketCommand({ Bucket: 'exact-ctl' }));
    const keys = ['ctl\u0001key', 'cr\rkey', 'lf\nkey', 'tab\tkey', 'pct%41key', 'plus+ key'];
    for (const Key of keys) await fx.s3.send(new PutObjectCommand({ Bucket: 'exact-ctl', Key, Body: 'x' }));
    const sorted = [...keys].sort();
    const v2 = await fx.s3.send(new ListObjectsV2Command({ Bucket: 'exact-ctl' }));
    expect(v2.EncodingType).toBeUndefined();
    expect(v2.Contents!.map((c) => c.Key)).toEqual(sorted);
    const v1 = await fx.s3.send(new ListObjectsCommand({ Bucket: 'exact-ctl' }));
    expect(v1.Contents!.map((c) => c.Key)).toEqual(sorted);
    const versions = await fx.s3.send(new ListObjectVersionsCommand({ Bucket: 'exact-ctl' }));
    expect(versions.Versions!.map((c) => c.Key)).toEqual(sorted);
    // every listed key reads back
    for (const c of v2.Contents!) expect((await fx.s3.send(new HeadObjectCommand({ Bucket: 'exact-ctl', Key: c.Key! }))).ContentLength).toBe(1);
    // with EncodingType=url the keys are percent-encoded and the answer says so
    const enc = await fx.s3.send(new ListObjectsV2Command({ Bucket: 'exact-ctl', EncodingType: 'url' }));
    expect(enc.EncodingType).toBe('url');
    expect(enc.Contents!.map((c) => decodeURIComponent(c.Key!))).toEqual(sorted);
    expect(enc.Contents!.some((c) => c.Key!.includes('%01'))).toBe(true);
  });
});

describe('request and answer details', () => {
  it('Content-Encoding is stored as sent, aws-chunked removed', async () => {
    await fx.s3.send(new CreateBucketCommand({ Bucket: 'exact-misc' }));
    await fx.s3.send(new PutObjectCommand({ Bucket: 'exact-misc', Key: 'enc', Body: 'x', ContentEncoding: 'deflate, gzip' }));
    expect((await fx.s3.send(new HeadObjectCommand({ Bucket: 'exact-misc', Key: 'enc' }))).ContentEncoding).toBe('deflate, gzip');
    // the AWS CLI streams with aws-chunked framing and a checksum trailer: aws-chunked goes, the rest stays
    await writeFile(join(fx.work, 'enc.txt'), 'encoded body');
    await runCli(fx.cli, 'aws', ['--endpoint-url', fx.srv.endpoint, 's3', 'cp', join(fx.work, 'enc.txt'), 's3://exact-misc/enc-cli', '--content-encoding', 'deflate, gzip']);
    expect((await fx.s3.send(new HeadObjectCommand({ Bucket: 'exact-misc', Key: 'enc-cli' }))).ContentEncoding).toBe('deflate, gzip');
  }, CLI_TIMEOUT);

  it('GetBucketPolicyStatus of a bucket without a policy is IsPublic false', async () => {
    const r = await fx.s3.send(new GetBucketPolicyStatusCommand({ Bucket: 'exact-misc' }));
    expect(r.PolicyStatus).toEqual({ IsPublic: false });
  });

  it('x-amz-expected-bucket-owner and x-amz-source-expected-bucket-owner are checked', async () => {
    await fx.s3.send(new PutObjectCommand({ Bucket: 'exact-misc', Key: 'owned', Body: 'x', ExpectedBucketOwner: fx.srv.accessKey }));
    expect(await errorOf(fx.s3.send(new PutObjectCommand({ Bucket: 'exact-misc', Key: 'other', Body: 'x', ExpectedBucketOwner: '111122223333' })))).toEqual({ code: 'AccessDenied', status: 403 });
    expect(await errorOf(fx.s3.send(new GetObjectCommand({ Bucket: 'exact-misc', Key: 'owned', ExpectedBucketOwner: '111122223333' })))).toEqual({ code: 'AccessDenied', status: 403 });
    const copy = { Bucket: 'exact-misc', Key: 'copied', CopySource: 'exact-misc/owned' };
    expect(await errorOf(fx.s3.send(new CopyObjectCommand({ ...copy, ExpectedSourceBucketOwner: '111122223333' })))).toEqual({ code: 'AccessDenied', status: 403 });
    await fx.s3.send(new CopyObjectCommand({ ...copy, ExpectedSourceBucketOwner: fx.srv.accessKey, ExpectedBucketOwner: fx.srv.accessKey }));
    expect(await errorOf(fx.s3.send(new HeadObjectCommand({ Bucket: 'exact-misc', Key: 'other' })))).toEqual({ code: 'NotFound', status: 404 });
  });

  it('a presigned URL with X-Amz-Expires out of range is 403 AccessDenied', async () => {
    const url = await getSignedUrl(fx.s3, new GetObjectCommand({ Bucket: 'exact-misc', Key: 'owned' }), { expiresIn: 600 });
    expect((await fetch(url)).status).toBe(200);
    for (const bad of ['604801', '0']) {
      const r = await fetch(url.replace(/X-Amz-Expires=\d+/, `X-Amz-Expires=${bad}`));
      expect(r.status).toBe(403);
      expect(await r.text()).toContain('<Code>AccessDenied</Code>');
    }
  });

  it('HEAD names the parts count only for partNumber, and the storage class only when not STANDARD', async () => {
    const mp = await fx.s3.send(new CreateMultipartUploadCommand({ Bucket: 'exact-misc', Key: 'mp' }));
    const p1 = await fx.s3.send(new UploadPartCommand({ Bucket: 'exact-misc', Key: 'mp', UploadId: mp.UploadId!, PartNumber: 1, Body: Buffer.alloc(5 * 1024 * 1024, 1) }));
    const p2 = await fx.s3.send(new UploadPartCommand({ Bucket: 'exact-misc', Key: 'mp', UploadId: mp.UploadId!, PartNumber: 2, Body: 'tail' }));
    await fx.s3.send(
      new CompleteMultipartUploadCommand({ Bucket: 'exact-misc', Key: 'mp', UploadId: mp.UploadId!, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: p1.ETag! }, { PartNumber: 2, ETag: p2.ETag! }] } }),
    );
    const plain = await fx.s3.send(new HeadObjectCommand({ Bucket: 'exact-misc', Key: 'mp' }));
    expect(plain.PartsCount).toBeUndefined();
    expect(plain.StorageClass).toBeUndefined();
    expect(plain.$metadata.httpStatusCode).toBe(200);
    expect((await fx.s3.send(new HeadObjectCommand({ Bucket: 'exact-misc', Key: 'mp', PartNumber: 2 }))).PartsCount).toBe(2);
    const got = await fx.s3.send(new GetObjectCommand({ Bucket: 'exact-misc', Key: 'mp' }));
    expect(got.PartsCount).toBeUndefined();
    await got.Body!.transformToByteArray();
    await fx.s3.send(new PutObjectCommand({ Bucket: 'exact-misc', Key: 'rrs', Body: 'x', StorageClass: 'REDUCED_REDUNDANCY' }));
    expect((await fx.s3.send(new HeadObjectCommand({ Bucket: 'exact-misc', Key: 'rrs' }))).StorageClass).toBe('REDUCED_REDUNDANCY');
  });
});
