/** Compatibility: minio-js against the real server. */
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import * as Minio from 'minio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type S3Server, start } from './helpers/s3-server.ts';

let srv: S3Server;
let mc: Minio.Client;

beforeAll(async () => {
  srv = await start();
  const u = new URL(srv.endpoint);
  mc = new Minio.Client({
    endPoint: u.hostname,
    port: Number(u.port),
    useSSL: false,
    accessKey: srv.accessKey,
    secretKey: srv.secretKey,
    region: 'us-east-1',
    pathStyle: true,
    // small parts so a 21 MiB stream goes through minio-js's multipart path
    partSize: 5 * 1024 * 1024,
  });
});

afterAll(async () => {
  await srv?.stop();
});

async function readAll(s: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of s) parts.push(c as Buffer);
  return Buffer.concat(parts);
}

function data(n: number): Buffer {
  const out = Buffer.allocUnsafe(n);
  let h = createHash('sha256').update('minio').digest();
  for (let off = 0; off < n; off += 32) {
    h = createHash('sha256').update(h).digest();
    h.copy(out, off, 0, Math.min(32, n - off));
  }
  return out;
}

describe('minio-js', () => {
  it('buckets, a 21 MiB multipart stream, stat, get, partial get, list, copy, tags, remove', async () => {
    await mc.makeBucket('minio-compat', 'us-east-1');
    expect(await mc.bucketExists('minio-compat')).toBe(true);
    expect(await mc.bucketExists('minio-absent')).toBe(false);
    const big = data(21 * 1024 * 1024);
    const put = await mc.putObject('minio-compat', 'dir/big.bin', Readable.from([big.subarray(0, 7_000_000), big.subarray(7_000_000)]), big.length);
    // minio-js picks its own part size (at least partSize): any multipart ETag proves the path
    expect(put.etag).toMatch(/^[0-9a-f]{32}-[2-9]$/);
    const st = await mc.statObject('minio-compat', 'dir/big.bin');
    expect(st.size).toBe(big.length);
    expect((await readAll(await mc.getObject('minio-compat', 'dir/big.bin'))).equals(big)).toBe(true);
    const part = await readAll(await mc.getPartialObject('minio-compat', 'dir/big.bin', 1_000_000, 4096));
    expect(part.equals(big.subarray(1_000_000, 1_004_096))).toBe(true);
    await mc.putObject('minio-compat', 'small.txt', Buffer.from('small'), 5, { 'Content-Type': 'text/plain', 'X-Amz-Meta-Owner': 'me' });
    const sst = await mc.statObject('minio-compat', 'small.txt');
    expect(sst.metaData['content-type']).toBe('text/plain');
    expect(sst.metaData.owner).toBe('me');
    const names: string[] = [];
    for await (const o of mc.listObjectsV2('minio-compat', '', true)) names.push((o as { name: string }).name);
    expect(names.sort()).toEqual(['dir/big.bin', 'small.txt']);
    const prefixes: string[] = [];
    for await (const o of mc.listObjects('minio-compat', '', false)) if ((o as { prefix?: string }).prefix) prefixes.push((o as { prefix: string }).prefix);
    expect(prefixes).toEqual(['dir/']);
    await mc.copyObject('minio-compat', 'copy.txt', '/minio-compat/small.txt');
    expect((await readAll(await mc.getObject('minio-compat', 'copy.txt'))).toString()).toBe('small');
    await mc.setObjectTagging('minio-compat', 'copy.txt', { env: 'test' });
    const tags = await mc.getObjectTagging('minio-compat', 'copy.txt');
    expect(tags).toEqual([{ Key: 'env', Value: 'test' }]);
    await mc.removeObjects('minio-compat', ['copy.txt', 'small.txt']);
    await mc.removeObject('minio-compat', 'dir/big.bin');
    const left: string[] = [];
    for await (const o of mc.listObjectsV2('minio-compat', '', true)) left.push((o as { name: string }).name);
    expect(left).toEqual([]);
    await mc.removeBucket('minio-compat');
    expect(await mc.bucketExists('minio-compat')).toBe(false);
  });

  it('versioning and presigned URLs used with fetch', async () => {
    await mc.makeBucket('minio-versions');
    await mc.setBucketVersioning('minio-versions', { Status: 'Enabled' });
    expect((await mc.getBucketVersioning('minio-versions')).Status).toBe('Enabled');
    const a = await mc.putObject('minio-versions', 'k', Buffer.from('one'));
    const b = await mc.putObject('minio-versions', 'k', Buffer.from('two'));
    expect(a.versionId).not.toBe(b.versionId);
    const old = await readAll(await mc.getObject('minio-versions', 'k', { versionId: a.versionId! }));
    expect(old.toString()).toBe('one');
    const putUrl = await mc.presignedPutObject('minio-versions', 'pre', 600);
    expect((await fetch(putUrl, { method: 'PUT', body: 'via presign' })).status).toBe(200);
    const getUrl = await mc.presignedGetObject('minio-versions', 'pre', 600);
    const got = await fetch(getUrl);
    expect(await got.text()).toBe('via presign');
  });
});
