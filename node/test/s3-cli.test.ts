/**
 * Compatibility: the AWS CLI, rclone and s3cmd from Debian's packages (CI
 * installs them in `.ci/run`). A missing client fails the test with a clear
 * message; nothing is skipped silently.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CreateBucketCommand, HeadObjectCommand, ListObjectsV2Command, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type S3Server, start } from './helpers/s3-server.ts';

const exec = promisify(execFile);

let srv: S3Server;
let work: string;
let s3: S3Client;

beforeAll(async () => {
  srv = await start();
  work = await mkdtemp(join(tmpdir(), 'svc-s3-cli-'));
  await mkdir(join(work, 'home', '.aws'), { recursive: true });
  await writeFile(join(work, 'home', '.aws', 'config'), '[default]\nregion = us-east-1\ns3 =\n  addressing_style = path\n');
  // s3cmd gets everything from flags; an empty config keeps it from reading the caller's
  await writeFile(join(work, 'home', 's3cfg-none'), '[default]\n');
  s3 = new S3Client({
    endpoint: srv.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: srv.accessKey, secretAccessKey: srv.secretKey },
  });
});

afterAll(async () => {
  s3?.destroy();
  await srv?.stop();
  if (work) await rm(work, { recursive: true, force: true });
});

/** A clean environment: our credentials and a private HOME, none of the caller's AWS/CA settings. */
function env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '',
    HOME: join(work, 'home'),
    LANG: 'C.UTF-8',
    AWS_ACCESS_KEY_ID: srv.accessKey,
    AWS_SECRET_ACCESS_KEY: srv.secretKey,
    AWS_DEFAULT_REGION: 'us-east-1',
    AWS_ENDPOINT_URL: srv.endpoint,
    AWS_PAGER: '',
    ...extra,
  };
}

async function run(cmd: string, args: string[], extraEnv: Record<string, string> = {}): Promise<string> {
  try {
    const { stdout } = await exec(cmd, args, { env: env(extraEnv), cwd: work, maxBuffer: 16 * 1024 * 1024, timeout: 120_000 });
    return stdout;
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stderr?: string; stdout?: string };
    if (e.code === 'ENOENT') {
      throw new Error(`'${cmd}' is not installed: the S3 compatibility suite needs Debian's awscli, rclone and s3cmd packages (apt-get install awscli rclone s3cmd; CI does this in .ci/run).`);
    }
    throw new Error(`${cmd} ${args.join(' ')} failed: ${e.message}\n${e.stderr ?? ''}${e.stdout ?? ''}`);
  }
}

function fileData(n: number, seed: string): Buffer {
  const out = Buffer.allocUnsafe(n);
  let h = createHash('sha256').update(seed).digest();
  for (let off = 0; off < n; off += 32) {
    h = createHash('sha256').update(h).digest();
    h.copy(out, off, 0, Math.min(32, n - off));
  }
  return out;
}

async function headStatus(bucket: string, key: string): Promise<number> {
  try {
    const r = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
    return r.$metadata.httpStatusCode ?? 0;
  } catch (err) {
    if (err instanceof S3ServiceException) return err.$metadata.httpStatusCode ?? 0;
    throw err;
  }
}

/** CLI tests spawn many Python/Go processes on shared cores: generous per-test timeout. */
const CLI_TIMEOUT = 240_000;

describe('AWS CLI', () => {
  it('aws s3 mb/cp/ls/rm (21 MiB multipart) and aws s3api calls, path style', async () => {
    const ep = ['--endpoint-url', srv.endpoint];
    const big = fileData(21 * 1024 * 1024, 'aws');
    await writeFile(join(work, 'aws-big.bin'), big);
    await run('aws', [...ep, 's3', 'mb', 's3://cli-aws']);
    await run('aws', [...ep, '--only-show-errors', 's3', 'cp', join(work, 'aws-big.bin'), 's3://cli-aws/dir/big.bin']);
    const ls = await run('aws', [...ep, 's3', 'ls', 's3://cli-aws/dir/']);
    expect(ls).toMatch(/22020096 big\.bin/);
    await run('aws', [...ep, '--only-show-errors', 's3', 'cp', 's3://cli-aws/dir/big.bin', join(work, 'aws-back.bin')]);
    expect((await readFile(join(work, 'aws-back.bin'))).equals(big)).toBe(true);
    const head = JSON.parse(await run('aws', [...ep, 's3api', 'head-object', '--bucket', 'cli-aws', '--key', 'dir/big.bin']));
    expect(head.ContentLength).toBe(big.length);
    expect(head.ETag).toMatch(/-\d+"$/);
    await writeFile(join(work, 'small.txt'), 'small file');
    const put = JSON.parse(
      await run('aws', [...ep, 's3api', 'put-object', '--bucket', 'cli-aws', '--key', 'rrs.txt', '--body', join(work, 'small.txt'), '--storage-class', 'REDUCED_REDUNDANCY']),
    );
    expect(put.ETag).toBe(`"${createHash('md5').update('small file').digest('hex')}"`);
    const ranged = JSON.parse(await run('aws', [...ep, 's3api', 'get-object', '--bucket', 'cli-aws', '--key', 'rrs.txt', '--range', 'bytes=0-4', join(work, 'range.out')]));
    expect(ranged.ContentRange).toBe('bytes 0-4/10');
    expect((await readFile(join(work, 'range.out'))).toString()).toBe('small');
    const list = JSON.parse(await run('aws', [...ep, 's3api', 'list-objects-v2', '--bucket', 'cli-aws']));
    expect(list.Contents.map((c: { Key: string; StorageClass: string }) => [c.Key, c.StorageClass])).toEqual([
      ['dir/big.bin', 'STANDARD'],
      ['rrs.txt', 'REDUCED_REDUNDANCY'],
    ]);
    await run('aws', [...ep, 's3api', 'put-bucket-versioning', '--bucket', 'cli-aws', '--versioning-configuration', 'Status=Enabled']);
    await run('aws', [...ep, 's3api', 'put-object', '--bucket', 'cli-aws', '--key', 'rrs.txt', '--body', join(work, 'small.txt')]);
    await run('aws', [...ep, 's3', 'rm', 's3://cli-aws/rrs.txt']);
    const versions = JSON.parse(await run('aws', [...ep, 's3api', 'list-object-versions', '--bucket', 'cli-aws', '--prefix', 'rrs']));
    expect(versions.Versions.length).toBe(2);
    expect(versions.DeleteMarkers.length).toBe(1);
    await run('aws', [...ep, 's3', 'rm', 's3://cli-aws/dir/big.bin']);
    expect(await headStatus('cli-aws', 'dir/big.bin')).toBe(404);
    await expect(run('aws', [...ep, 's3api', 'put-object', '--bucket', 'cli-aws', '--key', 'x', '--body', join(work, 'small.txt'), '--storage-class', 'GLACIER'])).rejects.toThrow(
      /InvalidStorageClass/,
    );
  }, CLI_TIMEOUT);
});

describe('rclone', () => {
  it('copy, ls, check and delete against provider Other', async () => {
    const rc = {
      RCLONE_CONFIG_SVC_TYPE: 's3',
      RCLONE_CONFIG_SVC_PROVIDER: 'Other',
      RCLONE_CONFIG_SVC_ACCESS_KEY_ID: srv.accessKey,
      RCLONE_CONFIG_SVC_SECRET_ACCESS_KEY: srv.secretKey,
      RCLONE_CONFIG_SVC_ENDPOINT: srv.endpoint,
      RCLONE_CONFIG_SVC_REGION: 'us-east-1',
      RCLONE_CONFIG_SVC_FORCE_PATH_STYLE: 'true',
    };
    const src = join(work, 'rclone-src');
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
    const u = new URL(srv.endpoint);
    const base = [
      `--host=${u.host}`,
      `--host-bucket=${u.host}`,
      '--no-ssl',
      `--access_key=${srv.accessKey}`,
      `--secret_key=${srv.secretKey}`,
      `--config=${join(work, 'home', 's3cfg-none')}`,
      '--region=us-east-1',
    ];
    const big = fileData(21 * 1024 * 1024, 's3cmd');
    await writeFile(join(work, 's3cmd-big.bin'), big);
    await run('s3cmd', [...base, 'mb', 's3://cli-s3cmd']);
    await run('s3cmd', [...base, '--multipart-chunk-size-mb=5', 'put', join(work, 's3cmd-big.bin'), 's3://cli-s3cmd/x/big.bin']);
    const ls = await run('s3cmd', [...base, 'ls', 's3://cli-s3cmd/x/']);
    expect(ls).toMatch(/22020096\s+s3:\/\/cli-s3cmd\/x\/big\.bin/);
    await run('s3cmd', [...base, '--force', 'get', 's3://cli-s3cmd/x/big.bin', join(work, 's3cmd-back.bin')]);
    expect((await readFile(join(work, 's3cmd-back.bin'))).equals(big)).toBe(true);
    await run('s3cmd', [...base, 'del', 's3://cli-s3cmd/x/big.bin']);
    expect(await headStatus('cli-s3cmd', 'x/big.bin')).toBe(404);
  }, CLI_TIMEOUT);
});

describe('keys with reserved and non-ASCII characters', () => {
  it('AWS CLI, s3cmd and rclone sign and store them identically', async () => {
    const key = "we!rd'()*[]&$@=;:+,#%~ é.txt";
    await s3.send(new CreateBucketCommand({ Bucket: 'cli-keys' }));
    await writeFile(join(work, 'k.txt'), 'k');
    const u = new URL(srv.endpoint);
    await run('aws', ['--endpoint-url', srv.endpoint, '--only-show-errors', 's3', 'cp', join(work, 'k.txt'), `s3://cli-keys/aws-${key}`]);
    await run('s3cmd', [
      `--host=${u.host}`,
      `--host-bucket=${u.host}`,
      '--no-ssl',
      `--access_key=${srv.accessKey}`,
      `--secret_key=${srv.secretKey}`,
      `--config=${join(work, 'home', 's3cfg-none')}`,
      '--region=us-east-1',
      'put',
      join(work, 'k.txt'),
      `s3://cli-keys/s3cmd-${key}`,
    ]);
    await run('rclone', ['copyto', join(work, 'k.txt'), `svc:cli-keys/rclone-${key}`], {
      RCLONE_CONFIG_SVC_TYPE: 's3',
      RCLONE_CONFIG_SVC_PROVIDER: 'Other',
      RCLONE_CONFIG_SVC_ACCESS_KEY_ID: srv.accessKey,
      RCLONE_CONFIG_SVC_SECRET_ACCESS_KEY: srv.secretKey,
      RCLONE_CONFIG_SVC_ENDPOINT: srv.endpoint,
      RCLONE_CONFIG_SVC_REGION: 'us-east-1',
      RCLONE_CONFIG_SVC_FORCE_PATH_STYLE: 'true',
    });
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: 'cli-keys' }));
    expect(listed.Contents?.map((c) => c.Key)).toEqual([`aws-${key}`, `rclone-${key}`, `s3cmd-${key}`]);
  }, CLI_TIMEOUT);
});
