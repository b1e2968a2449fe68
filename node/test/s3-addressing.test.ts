/**
 * Addressing: virtual-host style (`<bucket>.<domain>`) when a domain is
 * configured, with the real SDK (DNS for the test domain resolved to
 * 127.0.0.1 by the agent), next to path style on the same server.
 */
import { CreateBucketCommand, GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keepAliveHandler, resolveAllTo } from './helpers/s3-client.ts';
import { type S3Server, start } from './helpers/s3-server.ts';

const DOMAIN = 's3.svc.test';
let srv: S3Server;

beforeAll(async () => {
  srv = await start({ domains: [DOMAIN] });
});

afterAll(async () => {
  await srv?.stop();
});

function client(pathStyle: boolean): S3Client {
  const port = new URL(srv.endpoint).port;
  return new S3Client({
    endpoint: pathStyle ? srv.endpoint : `http://${DOMAIN}:${port}`,
    region: 'us-east-1',
    forcePathStyle: pathStyle,
    credentials: { accessKeyId: srv.accessKey, secretAccessKey: srv.secretKey },
    // every name under the test domain is this host
    requestHandler: keepAliveHandler({ agent: { lookup: resolveAllTo(() => '127.0.0.1') } }),
  });
}

describe('addressing', () => {
  it('virtual-host and path style reach the same buckets and objects', async () => {
    const vhost = client(false);
    const path = client(true);
    const seenHosts: string[] = [];
    vhost.middlewareStack.add(
      (next) => async (args) => {
        seenHosts.push(String((args.request as { headers: Record<string, string> }).headers.host));
        return next(args);
      },
      { step: 'finalizeRequest', name: 'recordHost' },
    );
    await vhost.send(new CreateBucketCommand({ Bucket: 'vhost-bucket' }));
    await vhost.send(new PutObjectCommand({ Bucket: 'vhost-bucket', Key: 'dir/file.txt', Body: 'virtual host' }));
    expect(seenHosts[0]).toMatch(/^vhost-bucket\.s3\.svc\.test:\d+$/);
    const viaPath = await path.send(new GetObjectCommand({ Bucket: 'vhost-bucket', Key: 'dir/file.txt' }));
    expect(await viaPath.Body!.transformToString()).toBe('virtual host');
    await path.send(new PutObjectCommand({ Bucket: 'vhost-bucket', Key: 'second.txt', Body: 'path style' }));
    const listed = await vhost.send(new ListObjectsV2Command({ Bucket: 'vhost-bucket' }));
    expect(listed.Contents?.map((c) => c.Key)).toEqual(['dir/file.txt', 'second.txt']);
    const viaHost = await vhost.send(new GetObjectCommand({ Bucket: 'vhost-bucket', Key: 'second.txt' }));
    expect(await viaHost.Body!.transformToString()).toBe('path style');
    vhost.destroy();
    path.destroy();
  });
});
