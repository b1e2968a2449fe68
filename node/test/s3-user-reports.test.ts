/**
 * The failures users reported from outside, each reproduced with the client
 * that found it (issue "S3 as real users meet it"):
 * - rclone multipart copy: CompleteMultipartUpload XML with `&#34;` quotes
 *   and PartNumber after ETag;
 * - `s3cmd info`: the ACL document's Grantee needs `xsi:type`;
 * - minio-js `presignedPostPolicy` + a multipart/form-data POST;
 * - `public-read` canned ACLs on buckets and objects (`@aws-sdk/client-s3`), read anonymously.
 * The EC:0 drive-loss report needs a real `svc` process: `s3-ec0-drive-loss.test.ts`.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CreateBucketCommand, HeadObjectCommand, PutBucketAclCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import * as Minio from 'minio';
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

describe('minio-js presignedPostPolicy', () => {
  it('a browser-style multipart/form-data POST stores the file', async () => {
    const u = new URL(fx.srv.endpoint);
    const mc = new Minio.Client({ endPoint: u.hostname, port: Number(u.port), useSSL: false, accessKey: fx.srv.accessKey, secretKey: fx.srv.secretKey, region: 'us-east-1' });
    await mc.makeBucket('reports-post');
    const p = mc.newPostPolicy();
    p.setBucket('reports-post');
    p.setKey('form.txt');
    p.setExpires(new Date(Date.now() + 600_000));
    const { postURL, formData } = await mc.presignedPostPolicy(p);
    const fd = new FormData();
    for (const [k, v] of Object.entries(formData)) fd.append(k, v as string);
    fd.append('file', new Blob(['posted']), 'form.txt');
    const r = await fetch(postURL, { method: 'POST', body: fd });
    expect(r.status).toBe(204);
    const stat = await mc.statObject('reports-post', 'form.txt');
    expect(stat.size).toBe(6);
  });
});

describe('public-read', () => {
  it('a public-read bucket and object are readable with no credentials', async () => {
    await fx.s3.send(new CreateBucketCommand({ Bucket: 'reports-public', ACL: 'public-read' }));
    await fx.s3.send(new PutObjectCommand({ Bucket: 'reports-public', Key: 'index.html', Body: '<h1>hi</h1>', ContentType: 'text/html', ACL: 'public-read' }));
    const obj = await fetch(`${fx.srv.endpoint}/reports-public/index.html`);
    expect([obj.status, await obj.text()]).toEqual([200, '<h1>hi</h1>']);
    const list = await fetch(`${fx.srv.endpoint}/reports-public?list-type=2`);
    expect(list.status).toBe(200);
    expect(await list.text()).toContain('<Key>index.html</Key>');
    await fx.s3.send(new PutBucketAclCommand({ Bucket: 'reports-public', ACL: 'private' }));
    expect((await fetch(`${fx.srv.endpoint}/reports-public?list-type=2`)).status).toBe(403);
  });
});
