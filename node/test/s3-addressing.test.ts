/**
 * Addressing: virtual-host style (`<bucket>.<domain>`) when a domain is
 * configured, with the real SDK (DNS for the test domain resolved to
 * 127.0.0.1 by the agent), next to path style on the same server.
 */
import { Agent } from 'node:http';
import { CreateBucketCommand, GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type S3Server, start } from './helpers/s3-server.ts';

const DOMAIN = 's3.svc.test';
let srv: S3Server;
let agent: Agent;

beforeAll(async () => {
  srv = await start({ domains: [DOMAIN] });
  agent = new Agent({
    keepAlive: true,
    // every name under the test domain is this host
    lookup: (_host, opts, cb) => {
      if ((opts as { all?: boolean }).all) (cb as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address: '127.0.0.1', family: 4 }]);
      else cb(null, '127.0.0.1', 4);
    },
  });
});

afterAll(async () => {
  agent?.destroy();
  await srv?.stop();
});

function client(pathStyle: boolean): S3Client {
  const port = new URL(srv.endpoint).port;
  return new S3Client({
    endpoint: pathStyle ? srv.endpoint : `http://${DOMAIN}:${port}`,
    region: 'us-east-1',
    forcePathStyle: pathStyle,
    credentials: { accessKeyId: srv.accessKey, secretAccessKey: srv.secretKey },
    requestHandler: new NodeHttpHandler({ httpAgent: agent }),
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
