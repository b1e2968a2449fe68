/**
 * Request details against the real `svc server` process (issue 28, items 3-4):
 * an `Expect` header other than `100-continue` is ignored as S3 ignores it
 * (node:http alone would answer 417), a custom region name with dots is
 * served, and `SVC_ACCEPT_ANY_REGION=true` lets a client sign for its own
 * region name.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareCliHome, runCli } from './helpers/cli.ts';
import { until } from './helpers/heal-server.ts';
import { runSvc, type SvcRun, tempDir } from './svc-process.ts';
import { keepAliveHandler } from './helpers/s3-client.ts';

const CREDS = { accessKey: 'compat-admin', secretKey: 'compat-secret-key' };
const REGION = 'dc1.example';
let base: string;
let run: SvcRun;
let url: string;

function client(region: string, expect?: string): S3Client {
  const c = new S3Client({ requestHandler: keepAliveHandler(), endpoint: url, region, forcePathStyle: true, maxAttempts: 1, credentials: { accessKeyId: CREDS.accessKey, secretAccessKey: CREDS.secretKey } });
  if (expect !== undefined) {
    c.middlewareStack.add(
      (next) => (args) => {
        (args.request as { headers: Record<string, string> }).headers.expect = expect;
        return next(args);
      },
      { step: 'build', name: 'expectHeader' },
    );
  }
  return c;
}

beforeAll(async () => {
  base = tempDir('compat-req');
  for (let i = 1; i <= 4; i++) mkdirSync(join(base, `d${i}`));
  run = await runSvc(['server', `${base}/d{1...4}`], {
    SVC_ACCESS_KEY: CREDS.accessKey,
    SVC_SECRET_KEY: CREDS.secretKey,
    SVC_CONSOLE_ENABLE: 'false',
    SVC_REGION: REGION,
    SVC_ACCEPT_ANY_REGION: 'true',
  });
  expect(await run.started).toBe(true);
  url = `http://127.0.0.1:${run.port}`;
  await until('ready', async () => ((await fetch(`${url}/health/ready`)).status === 200 ? true : undefined), 60_000);
}, 90_000);

afterAll(async () => {
  await run?.stop();
  rmSync(base, { recursive: true, force: true });
});

describe('request details on the real server', () => {
  it('an Expect header other than 100-continue is ignored: the signed PUT and GET succeed', async () => {
    const c = client('us-east-1', 'x-custom-expectation');
    await c.send(new CreateBucketCommand({ Bucket: 'expect' }));
    await c.send(new PutObjectCommand({ Bucket: 'expect', Key: 'k', Body: 'expect body' }));
    const got = await c.send(new GetObjectCommand({ Bucket: 'expect', Key: 'k' }));
    expect(await got.Body!.transformToString()).toBe('expect body');
    c.destroy();
  });

  it('a region name with dots is served (s3cmd signs SigV4 for it) and any region is accepted when opted in', async () => {
    const work = tempDir('compat-region-cli');
    try {
      await prepareCliHome(work);
      const cli = { work, target: { endpoint: url, ...CREDS } };
      const host = `--host=127.0.0.1:${run.port}`;
      const args = [host, `--host-bucket=127.0.0.1:${run.port}`, '--no-ssl', `--access_key=${CREDS.accessKey}`, `--secret_key=${CREDS.secretKey}`, `--config=${join(work, 'home', 's3cfg-none')}`];
      await runCli(cli, 's3cmd', [...args, `--region=${REGION}`, 'mb', 's3://dotted-region']);
      await writeFile(join(work, 'r.txt'), 'region body');
      await runCli(cli, 's3cmd', [...args, `--region=${REGION}`, 'put', join(work, 'r.txt'), 's3://dotted-region/r.txt']);
      // GetBucketLocation names the configured region
      expect(await runCli(cli, 's3cmd', [...args, `--region=${REGION}`, 'info', 's3://dotted-region'])).toMatch(new RegExp(`Location:\\s+${REGION.replace('.', '\\.')}`));
      // a client signing for its own region name (git-annex signs with the host name)
      await runCli(cli, 's3cmd', [...args, '--region=annex-host', 'ls', 's3://dotted-region']);
      const other = client('eu-central-1');
      const got = await other.send(new GetObjectCommand({ Bucket: 'dotted-region', Key: 'r.txt' }));
      expect(await got.Body!.transformToString()).toBe('region body');
      other.destroy();
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  }, 120_000);
});
