/**
 * The S3 client suite over https against a real `svc server` with a
 * certificate from a test CA: the AWS SDK v3, minio-js, the AWS CLI,
 * rclone and s3cmd each upload (multipart included), list, download and
 * delete with the CA trusted (host name verified: the certificate names
 * 127.0.0.1), and each fails cleanly on the certificate without it, before
 * anything is written.
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { CreateBucketCommand, DeleteObjectCommand, GetObjectCommand, HeadBucketCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { keepAliveHandler, keepAliveHttpsAgent } from './helpers/s3-client.ts';
import * as Minio from 'minio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueLeaf, makeCa, type TestCa } from './helpers/certs.ts';
import { CLI_TIMEOUT, type CliEnv, fileData, prepareCliHome, rcloneEnv, runCli } from './helpers/cli.ts';
import { runSvc, type SvcRun, tempDir } from './svc-process.ts';

const ACCESS = 'tlsclients';
const SECRET = 'tlsclients-secret-key';

let root: string;
let ca: TestCa;
let svc: SvcRun;
let endpoint: string;
let cli: CliEnv;
/** An SDK client trusting the CA, for setup and checks. */
let admin: S3Client;

const md5 = (b: Uint8Array) => createHash('md5').update(b).digest('hex');

function sdk(trust: string | undefined): S3Client {
  return new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    maxAttempts: 1,
    credentials: { accessKeyId: ACCESS, secretAccessKey: SECRET },
    requestHandler: keepAliveHandler(trust ? { agent: { ca: trust } } : {}),
  });
}

async function bucketExists(name: string): Promise<boolean> {
  return admin.send(new HeadBucketCommand({ Bucket: name })).then(
    () => true,
    () => false,
  );
}

beforeAll(async () => {
  root = tempDir('tls-clients');
  ca = await makeCa(join(root, 'ca'), 'clients test CA');
  const certs = join(root, 'certs');
  await issueLeaf(ca, certs, { ips: ['127.0.0.1'], dns: ['localhost'] });
  for (let i = 1; i <= 4; i++) await mkdir(join(root, `d${i}`));
  svc = await runSvc(['server', `${root}/d{1...4}`], { SVC_ACCESS_KEY: ACCESS, SVC_SECRET_KEY: SECRET, SVC_CERTS_DIR: certs });
  if (!(await svc.started)) throw new Error(`svc did not start: ${svc.stderr()}${svc.stdout().slice(-3000)}`);
  endpoint = `https://127.0.0.1:${svc.port}`;
  admin = sdk(ca.pem);
  const work = join(root, 'work');
  await prepareCliHome(work);
  cli = { work, target: { endpoint, accessKey: ACCESS, secretKey: SECRET } };
}, 60_000);

afterAll(async () => {
  admin?.destroy();
  await svc?.stop();
  await rm(root, { recursive: true, force: true });
});

describe('AWS SDK v3 over https', () => {
  it('with the CA: bucket, multipart upload, list, ranged get, delete', async () => {
    const s3 = sdk(ca.pem);
    try {
      await s3.send(new CreateBucketCommand({ Bucket: 'tls-sdk' }));
      const big = fileData(12 * 1024 * 1024 + 3, 'sdk');
      await new Upload({ client: s3, params: { Bucket: 'tls-sdk', Key: 'big.bin', Body: Readable.from([big]) }, partSize: 5 * 1024 * 1024 }).done();
      await s3.send(new PutObjectCommand({ Bucket: 'tls-sdk', Key: 'small.txt', Body: 'small' }));
      const list = await s3.send(new ListObjectsV2Command({ Bucket: 'tls-sdk' }));
      expect(list.Contents?.map((c) => [c.Key, c.Size])).toEqual([
        ['big.bin', big.length],
        ['small.txt', 5],
      ]);
      const got = await s3.send(new GetObjectCommand({ Bucket: 'tls-sdk', Key: 'big.bin' }));
      expect(got.ETag).toMatch(/-3"$/);
      expect(md5(await got.Body!.transformToByteArray())).toBe(md5(big));
      const range = await s3.send(new GetObjectCommand({ Bucket: 'tls-sdk', Key: 'small.txt', Range: 'bytes=1-3' }));
      expect(await range.Body!.transformToString()).toBe('mal');
      await s3.send(new DeleteObjectCommand({ Bucket: 'tls-sdk', Key: 'small.txt' }));
    } finally {
      s3.destroy();
    }
  }, 60_000);

  it('without the CA: a certificate error, nothing created', async () => {
    const s3 = sdk(undefined);
    try {
      await expect(s3.send(new CreateBucketCommand({ Bucket: 'tls-sdk-untrusted' }))).rejects.toThrow(/unable to verify the first certificate/);
    } finally {
      s3.destroy();
    }
    expect(await bucketExists('tls-sdk-untrusted')).toBe(false);
  });
});

describe('minio-js over https', () => {
  const client = (trust: string | undefined) =>
    new Minio.Client({
      endPoint: '127.0.0.1',
      port: svc.port,
      useSSL: true,
      accessKey: ACCESS,
      secretKey: SECRET,
      region: 'us-east-1',
      pathStyle: true,
      partSize: 5 * 1024 * 1024,
      transportAgent: keepAliveHttpsAgent(trust ? { ca: trust } : {}),
    });

  it('with the CA: bucket, multipart stream, list, get, remove', async () => {
    const mc = client(ca.pem);
    await mc.makeBucket('tls-minio', 'us-east-1');
    const big = fileData(11 * 1024 * 1024, 'minio');
    const up = await mc.putObject('tls-minio', 'big.bin', Readable.from([big]), big.length);
    expect(up.etag).toMatch(/-\d+$/);
    const names: string[] = [];
    for await (const o of mc.listObjectsV2('tls-minio', '', true)) names.push((o as { name: string }).name);
    expect(names).toEqual(['big.bin']);
    const chunks: Buffer[] = [];
    for await (const c of await mc.getObject('tls-minio', 'big.bin')) chunks.push(c as Buffer);
    expect(md5(Buffer.concat(chunks))).toBe(md5(big));
    await mc.removeObject('tls-minio', 'big.bin');
  }, 60_000);

  it('without the CA: a certificate error, nothing created', async () => {
    await expect(client(undefined).makeBucket('tls-minio-untrusted', 'us-east-1')).rejects.toThrow(/unable to verify the first certificate/);
    expect(await bucketExists('tls-minio-untrusted')).toBe(false);
  });
});

describe('AWS CLI over https', () => {
  it('with the CA (AWS_CA_BUNDLE): mb, multipart cp, ls, cp back, rm', async () => {
    const env = { AWS_CA_BUNDLE: ca.certFile };
    const ep = ['--endpoint-url', endpoint];
    const big = fileData(9 * 1024 * 1024, 'aws');
    await writeFile(join(cli.work, 'aws-big.bin'), big);
    await runCli(cli, 'aws', [...ep, 's3', 'mb', 's3://tls-aws'], env);
    await runCli(cli, 'aws', [...ep, '--only-show-errors', 's3', 'cp', join(cli.work, 'aws-big.bin'), 's3://tls-aws/big.bin'], env);
    expect(await runCli(cli, 'aws', [...ep, 's3', 'ls', 's3://tls-aws/'], env)).toMatch(/9437184 big\.bin/);
    await runCli(cli, 'aws', [...ep, '--only-show-errors', 's3', 'cp', 's3://tls-aws/big.bin', join(cli.work, 'aws-back.bin')], env);
    expect(md5(await readFile(join(cli.work, 'aws-back.bin')))).toBe(md5(big));
    const head = JSON.parse(await runCli(cli, 'aws', [...ep, 's3api', 'head-object', '--bucket', 'tls-aws', '--key', 'big.bin'], env));
    expect(head.ETag).toMatch(/-\d+"$/);
    await runCli(cli, 'aws', [...ep, 's3', 'rm', 's3://tls-aws/big.bin'], env);
  }, CLI_TIMEOUT);

  it('without the CA: SSL validation fails, nothing created', async () => {
    await expect(runCli(cli, 'aws', ['--endpoint-url', endpoint, 's3', 'mb', 's3://tls-aws-untrusted'])).rejects.toThrow(/SSL validation failed|CERTIFICATE_VERIFY_FAILED/);
    expect(await bucketExists('tls-aws-untrusted')).toBe(false);
  }, CLI_TIMEOUT);
});

describe('rclone over https', () => {
  it('with the CA (--ca-cert): mkdir, multipart copy, check, delete', async () => {
    const rc = rcloneEnv(cli.target);
    const src = join(cli.work, 'rclone-src');
    await mkdir(join(src, 'sub'), { recursive: true });
    await writeFile(join(src, 'a.txt'), 'alpha');
    await writeFile(join(src, 'sub', 'b.bin'), fileData(11 * 1024 * 1024, 'rclone'));
    const flags = ['--ca-cert', ca.certFile, '--s3-upload-cutoff', '5M', '--s3-chunk-size', '5M'];
    await runCli(cli, 'rclone', [...flags, 'mkdir', 'svc:tls-rclone'], rc);
    await runCli(cli, 'rclone', [...flags, 'copy', src, 'svc:tls-rclone/data'], rc);
    expect((await runCli(cli, 'rclone', [...flags, 'ls', 'svc:tls-rclone'], rc)).trim().split('\n').map((l) => l.trim()).sort()).toEqual(['11534336 data/sub/b.bin', '5 data/a.txt']);
    await runCli(cli, 'rclone', [...flags, 'check', src, 'svc:tls-rclone/data'], rc);
    await runCli(cli, 'rclone', [...flags, 'delete', 'svc:tls-rclone/data'], rc);
  }, CLI_TIMEOUT);

  it('without the CA: x509 refuses the certificate, nothing created', async () => {
    await expect(runCli(cli, 'rclone', ['--retries', '1', '--low-level-retries', '1', 'mkdir', 'svc:tls-rclone-untrusted'], rcloneEnv(cli.target))).rejects.toThrow(/x509|certificate/);
    expect(await bucketExists('tls-rclone-untrusted')).toBe(false);
  }, CLI_TIMEOUT);
});

describe('s3cmd over https', () => {
  const args = (trust: string | undefined) => [
    `--host=127.0.0.1:${svc.port}`,
    `--host-bucket=127.0.0.1:${svc.port}`,
    '--ssl',
    '--check-certificate',
    '--check-hostname',
    ...(trust ? [`--ca-certs=${trust}`] : []),
    `--access_key=${ACCESS}`,
    `--secret_key=${SECRET}`,
    `--config=${join(cli.work, 'home', 's3cfg-none')}`,
    '--region=us-east-1',
  ];

  it('with the CA (--ca-certs): mb, multipart put, ls, get, del', async () => {
    const big = fileData(11 * 1024 * 1024, 's3cmd');
    await writeFile(join(cli.work, 's3cmd-big.bin'), big);
    await runCli(cli, 's3cmd', [...args(ca.certFile), 'mb', 's3://tls-s3cmd']);
    await runCli(cli, 's3cmd', [...args(ca.certFile), '--multipart-chunk-size-mb=5', 'put', join(cli.work, 's3cmd-big.bin'), 's3://tls-s3cmd/big.bin']);
    expect(await runCli(cli, 's3cmd', [...args(ca.certFile), 'ls', 's3://tls-s3cmd/'])).toMatch(/11534336\s+s3:\/\/tls-s3cmd\/big\.bin/);
    await runCli(cli, 's3cmd', [...args(ca.certFile), 'get', 's3://tls-s3cmd/big.bin', join(cli.work, 's3cmd-back.bin')]);
    expect(md5(await readFile(join(cli.work, 's3cmd-back.bin')))).toBe(md5(big));
    await runCli(cli, 's3cmd', [...args(ca.certFile), 'del', 's3://tls-s3cmd/big.bin']);
  }, CLI_TIMEOUT);

  it('without the CA: certificate verify failed, nothing created', async () => {
    await expect(runCli(cli, 's3cmd', [...args(undefined), 'mb', 's3://tls-s3cmd-untrusted'])).rejects.toThrow(/CERTIFICATE_VERIFY_FAILED|certificate verify failed/);
    expect(await bucketExists('tls-s3cmd-untrusted')).toBe(false);
  }, CLI_TIMEOUT);
});
