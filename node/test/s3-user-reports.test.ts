/**
 * The failures users reported from outside, each reproduced with the client
 * that found it (issue "S3 as real users meet it"):
 * - rclone multipart copy: CompleteMultipartUpload XML with `&#34;` quotes
 *   and PartNumber after ETag;
 * - `s3cmd info`: the ACL document's Grantee needs `xsi:type`;
 * - minio-js `presignedPostPolicy` + a multipart/form-data POST;
 * - `public-read` canned ACLs on buckets and objects, read anonymously.
 * The EC:0 drive-loss report needs a real `svc` process: `s3-ec0-drive-loss.test.ts`.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { CLI_TIMEOUT, fileData, rcloneEnv, runCli, s3cmdArgs, useCliFixture } from './helpers/cli.ts';

const fx = useCliFixture('s3-reports');


describe('rclone multipart copy', () => {
  it('a 20 MiB file in 5 MiB chunks uploaded concurrently completes and reads back', async () => {
    const src = join(fx.work, 'rclone-mp');
    await mkdir(src, { recursive: true });
    const data = fileData(20 * 1024 * 1024, 'rclone-mp');
    await writeFile(join(src, 'big.bin'), data);
    const rc = rcloneEnv(fx.srv);
    await runCli(fx.cli, 'rclone', ['mkdir', 'svc:reports-rclone'], rc);
    await runCli(fx.cli, 'rclone', ['copy', '--s3-upload-cutoff=5M', '--s3-chunk-size=5M', '--s3-upload-concurrency=4', '--retries=1', '--low-level-retries=1', src, 'svc:reports-rclone'], rc);
    const head = await fx.s3.send(new HeadObjectCommand({ Bucket: 'reports-rclone', Key: 'big.bin' }));
    expect(head.ETag).toMatch(/-4"$/);
    expect(head.ContentLength).toBe(data.length);
    await runCli(fx.cli, 'rclone', ['copyto', 'svc:reports-rclone/big.bin', join(fx.work, 'rclone-back.bin')], rc);
    expect((await readFile(join(fx.work, 'rclone-back.bin'))).equals(data)).toBe(true);
  }, CLI_TIMEOUT);
});

describe('s3cmd info', () => {
  it('reads the bucket and object ACL documents (Grantee with xsi:type)', async () => {
    const base = s3cmdArgs(fx.cli);
    await writeFile(join(fx.work, 'info.txt'), 'info');
    await runCli(fx.cli, 's3cmd', [...base, 'mb', 's3://reports-s3cmd']);
    await runCli(fx.cli, 's3cmd', [...base, 'put', join(fx.work, 'info.txt'), 's3://reports-s3cmd/info.txt']);
    const obj = await runCli(fx.cli, 's3cmd', [...base, 'info', 's3://reports-s3cmd/info.txt']);
    expect(obj).toMatch(/ACL:\s+svcadmin: FULL_CONTROL/);
    const bucket = await runCli(fx.cli, 's3cmd', [...base, 'info', 's3://reports-s3cmd']);
    expect(bucket).toMatch(/ACL:\s+svcadmin: FULL_CONTROL/);
  }, CLI_TIMEOUT);
});
