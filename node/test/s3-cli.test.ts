/**
 * Compatibility: the AWS CLI, rclone and s3cmd from Debian's packages (CI
 * installs them in `.ci/run`). A missing client fails the test with a clear
 * message; nothing is skipped silently.
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CreateBucketCommand, HeadObjectCommand, ListObjectsV2Command, S3ServiceException } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { CLI_TIMEOUT, fileData, rcloneEnv, runCli, s3cmdArgs, useCliFixture } from './helpers/cli.ts';

const fx = useCliFixture('s3-cli');



function run(cmd: string, args: string[], extraEnv: Record<string, string> = {}): Promise<string> {
  return runCli(fx.cli, cmd, args, extraEnv);
}

async function headStatus(bucket: string, key: string): Promise<number> {
  try {
    const r = await fx.s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
    return r.$metadata.httpStatusCode ?? 0;
  } catch (err) {
    if (err instanceof S3ServiceException) return err.$metadata.httpStatusCode ?? 0;
    throw err;
  }
}

describe('AWS CLI', () => {
  it('aws s3 mb/cp/ls/rm (21 MiB multipart) and aws s3api calls, path style', async () => {
    const ep = ['--endpoint-url', fx.srv.endpoint];
    const big = fileData(21 * 1024 * 1024, 'aws');
    await writeFile(join(fx.work, 'aws-big.bin'), big);
    await run('aws', [...ep, 's3', 'mb', 's3://cli-aws']);
    await run('aws', [...ep, '--only-show-errors', 's3', 'cp', join(fx.work, 'aws-big.bin'), 's3://cli-aws/dir/big.bin']);
    const ls = await run('aws', [...ep, 's3', 'ls', 's3://cli-aws/dir/']);
    expect(ls).toMatch(/22020096 big\.bin/);
    await run('aws', [...ep, '--only-show-errors', 's3', 'cp', 's3://cli-aws/dir/big.bin', join(fx.work, 'aws-back.bin')]);
    expect((await readFile(join(fx.work, 'aws-back.bin'))).equals(big)).toBe(true);
    const head = JSON.parse(await run('aws', [...ep, 's3api', 'head-object', '--bucket', 'cli-aws', '--key', 'dir/big.bin']));
    expect(head.ContentLength).toBe(big.length);
    expect(head.ETag).toMatch(/-\d+"$/);
    await writeFile(join(fx.work, 'small.txt'), 'small file');
    const put = JSON.parse(
      await run('aws', [...ep, 's3api', 'put-object', '--bucket', 'cli-aws', '--key', 'rrs.txt', '--body', join(fx.work, 'small.txt'), '--storage-class', 'REDUCED_REDUNDANCY']),
    );
    expect(put.ETag).toBe(`"${createHash('md5').update('small file').digest('hex')}"`);
    const ranged = JSON.parse(await run('aws', [...ep, 's3api', 'get-object', '--bucket', 'cli-aws', '--key', 'rrs.txt', '--range', 'bytes=0-4', join(fx.work, 'range.out')]));
    expect(ranged.ContentRange).toBe('bytes 0-4/10');
    expect((await readFile(join(fx.work, 'range.out'))).toString()).toBe('small');
    const list = JSON.parse(await run('aws', [...ep, 's3api', 'list-objects-v2', '--bucket', 'cli-aws']));
    expect(list.Contents.map((c: { Key: string; StorageClass: string }) => [c.Key, c.StorageClass])).toEqual([
      ['dir/big.bin', 'STANDARD'],
      ['rrs.txt', 'REDUCED_REDUNDANCY'],
    ]);
    await run('aws', [...ep, 's3api', 'put-bucket-versioning', '--bucket', 'cli-aws', '--versioning-configuration', 'Status=Enabled']);
    await run('aws', [...ep, 's3api', 'put-object', '--bucket', 'cli-aws', '--key', 'rrs.txt', '--body', join(fx.work, 'small.txt')]);
    await run('aws', [...ep, 's3', 'rm', 's3://cli-aws/rrs.txt']);
    const versions = JSON.parse(await run('aws', [...ep, 's3api', 'list-object-versions', '--bucket', 'cli-aws', '--prefix', 'rrs']));
    expect(versions.Versions.length).toBe(2);
    expect(versions.DeleteMarkers.length).toBe(1);
    await run('aws', [...ep, 's3', 'rm', 's3://cli-aws/dir/big.bin']);
    expect(await headStatus('cli-aws', 'dir/big.bin')).toBe(404);
    await expect(run('aws', [...ep, 's3api', 'put-object', '--bucket', 'cli-aws', '--key', 'x', '--body', join(fx.work, 'small.txt'), '--storage-class', 'GLACIER'])).rejects.toThrow(
      /InvalidStorageClass/,
    );
  }, CLI_TIMEOUT);

  it('reads the settings svc does not offer as never set, and refuses to set them', async () => {
    const ep = ['--endpoint-url', fx.srv.endpoint];
    await run('aws', [...ep, 's3', 'mb', 's3://cli-settings']);
    const api = async (...args: string[]) => {
      const out = await run('aws', [...ep, 's3api', ...args, '--bucket', 'cli-settings']);
      return out.trim() === '' ? {} : (JSON.parse(out) as Record<string, unknown>);
    };
    expect(await api('get-bucket-accelerate-configuration')).toEqual({});
    expect(await api('get-bucket-request-payment')).toEqual({ Payer: 'BucketOwner' });
    expect(await api('get-bucket-logging')).toEqual({});
    await expect(api('get-bucket-website')).rejects.toThrow(/NoSuchWebsiteConfiguration/);
    expect(await api('delete-bucket-website')).toEqual({});
    await expect(api('put-bucket-accelerate-configuration', '--accelerate-configuration', 'Status=Enabled')).rejects.toThrow(/NotImplemented/);
    await expect(api('put-bucket-website', '--website-configuration', '{"IndexDocument":{"Suffix":"index.html"}}')).rejects.toThrow(/NotImplemented/);
    await expect(run('aws', [...ep, 's3api', 'get-bucket-logging', '--bucket', 'no-such-bucket-here'])).rejects.toThrow(/NoSuchBucket/);
  }, CLI_TIMEOUT);
});

describe('rclone', () => {
  it('copy, ls, check and delete against provider Other', async () => {
    const rc = rcloneEnv(fx.srv);
    const src = join(fx.work, 'rclone-src');
    await mkdir(join(src, 'sub'), { recursive: true });
    await writeFile(join(src, 'a.txt'), 'alpha');
    await writeFile(join(src, 'sub', 'b.bin'), fileData(21 * 1024 * 1024, 'rclone'));
    await run('rclone', ['mkdir', 'svc:cli-rclone'], rc);
    await run('rclone', ['copy', src, 'svc:cli-rclone/data'], rc);
    const ls = await run('rclone', ['ls', 'svc:cli-rclone'], rc);
    expect(ls).toMatch(/\s5 data\/a\.txt/);
    expect(ls).toMatch(/22020096 data\/sub\/b\.bin/);
    await run('rclone', ['check', src, 'svc:cli-rclone/data'], rc);
    await writeFile(join(src, 'a.txt'), 'changed');
    await expect(run('rclone', ['check', src, 'svc:cli-rclone/data'], rc)).rejects.toThrow(/differences found/);
    await run('rclone', ['delete', 'svc:cli-rclone/data/a.txt'], rc);
    expect(await headStatus('cli-rclone', 'data/a.txt')).toBe(404);
  }, CLI_TIMEOUT);
});

describe('s3cmd', () => {
  it('mb, put (multipart), ls, get, del', async () => {
    const base = s3cmdArgs(fx.cli);
    const big = fileData(21 * 1024 * 1024, 's3cmd');
    await writeFile(join(fx.work, 's3cmd-big.bin'), big);
    await run('s3cmd', [...base, 'mb', 's3://cli-s3cmd']);
    await run('s3cmd', [...base, '--multipart-chunk-size-mb=5', 'put', join(fx.work, 's3cmd-big.bin'), 's3://cli-s3cmd/x/big.bin']);
    const ls = await run('s3cmd', [...base, 'ls', 's3://cli-s3cmd/x/']);
    expect(ls).toMatch(/22020096\s+s3:\/\/cli-s3cmd\/x\/big\.bin/);
    await run('s3cmd', [...base, '--force', 'get', 's3://cli-s3cmd/x/big.bin', join(fx.work, 's3cmd-back.bin')]);
    expect((await readFile(join(fx.work, 's3cmd-back.bin'))).equals(big)).toBe(true);
    await run('s3cmd', [...base, 'del', 's3://cli-s3cmd/x/big.bin']);
    expect(await headStatus('cli-s3cmd', 'x/big.bin')).toBe(404);
  }, CLI_TIMEOUT);
});

describe('keys with reserved and non-ASCII characters', () => {
  it('AWS CLI, s3cmd and rclone sign and store them identically', async () => {
    const key = "we!rd'()*[]&$@=;:+,#%~ é.txt";
    await fx.s3.send(new CreateBucketCommand({ Bucket: 'cli-keys' }));
    await writeFile(join(fx.work, 'k.txt'), 'k');
    await run('aws', ['--endpoint-url', fx.srv.endpoint, '--only-show-errors', 's3', 'cp', join(fx.work, 'k.txt'), `s3://cli-keys/aws-${key}`]);
    await run('s3cmd', [
      ...s3cmdArgs(fx.cli),
      'put',
      join(fx.work, 'k.txt'),
      `s3://cli-keys/s3cmd-${key}`,
    ]);
    await run('rclone', ['copyto', join(fx.work, 'k.txt'), `svc:cli-keys/rclone-${key}`], rcloneEnv(fx.srv));
    const listed = await fx.s3.send(new ListObjectsV2Command({ Bucket: 'cli-keys' }));
    expect(listed.Contents?.map((c) => c.Key)).toEqual([`aws-${key}`, `rclone-${key}`, `s3cmd-${key}`]);
  }, CLI_TIMEOUT);
});
