import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { putDataFromBuffer } from '../src/object/put-data.ts';
import { bytes, type Fixture, get, makeFixture, md5 } from './engine-helpers.ts';

const MiB = 1024 * 1024;
let fx: Fixture | undefined;
afterEach(async () => {
  await fx?.cleanup();
  fx = undefined;
});

function multipartEtag(etags: string[]): string {
  const h = createHash('md5');
  for (const e of etags) h.update(Buffer.from(e, 'hex'));
  return `${h.digest('hex')}-${etags.length}`;
}

describe('multipart', () => {
  it('upload, list, overwrite a part, complete a subset, read back byte-exact', async () => {
    fx = await makeFixture({ drives: 4, standardParity: 2 });
    const { layer } = fx;
    await layer.makeBucket('b');
    const up = await layer.newMultipartUpload('b', 'big', { userMeta: { a: 'b' }, contentHeaders: { contentType: 'x/y' } });
    const p1 = bytes(MiB + 1, 1);
    const p2 = bytes(100, 2);
    const p3 = bytes(2 * MiB, 3);
    await layer.putObjectPart('b', 'big', up.uploadId, 1, putDataFromBuffer(bytes(10, 9)));
    const i1 = await layer.putObjectPart('b', 'big', up.uploadId, 1, putDataFromBuffer(p1)); // overwrite
    const i2 = await layer.putObjectPart('b', 'big', up.uploadId, 2, putDataFromBuffer(p2));
    const i3 = await layer.putObjectPart('b', 'big', up.uploadId, 3, putDataFromBuffer(p3));
    expect(i1.etag).toBe(md5(p1));
    const lp = await layer.listObjectParts('b', 'big', up.uploadId, { maxParts: 2 });
    expect(lp.parts.map((p) => [p.number, p.size])).toEqual([
      [1, MiB + 1],
      [2, 100],
    ]);
    expect(lp.isTruncated).toBe(true);
    const lp2 = await layer.listObjectParts('b', 'big', up.uploadId, { maxParts: 10, partNumberMarker: lp.nextPartNumberMarker });
    expect(lp2.parts.map((p) => p.number)).toEqual([3]);
    const uploads = await layer.listMultipartUploads('b', { maxUploads: 10 });
    expect(uploads.uploads.map((u) => [u.name, u.uploadId])).toEqual([['big', up.uploadId]]);

    await expect(
      layer.completeMultipartUpload('b', 'big', up.uploadId, [
        { number: 3, etag: i3.etag },
        { number: 1, etag: i1.etag },
      ]),
    ).rejects.toMatchObject({ code: 'InvalidPartOrder' });
    await expect(
      layer.completeMultipartUpload('b', 'big', up.uploadId, [
        { number: 1, etag: i1.etag },
        { number: 3, etag: i2.etag },
      ]),
    ).rejects.toMatchObject({ code: 'InvalidPart' });
    await expect(layer.completeMultipartUpload('b', 'big', up.uploadId, [{ number: 4, etag: i1.etag }])).rejects.toMatchObject({
      code: 'InvalidPart',
    });

    const info = await layer.completeMultipartUpload('b', 'big', up.uploadId, [
      { number: 1, etag: `"${i1.etag}"` },
      { number: 3, etag: i3.etag },
    ]);
    expect(info.etag).toBe(multipartEtag([i1.etag, i3.etag]));
    expect(info.size).toBe(p1.length + p3.length);
    const whole = Buffer.concat([p1, p3]);
    expect((await get(layer, 'b', 'big')).equals(whole)).toBe(true);
    const head = await layer.getObjectInfo('b', 'big', {});
    expect(head.parts.map((p) => p.number)).toEqual([1, 3]);
    expect(head.userMeta).toEqual({ a: 'b' });
    expect(head.contentHeaders.contentType).toBe('x/y');
    // Range across the part boundary and a partNumber read.
    const r = await get(layer, 'b', 'big', { range: { start: MiB - 3, end: MiB + 10 } });
    expect(r.equals(whole.subarray(MiB - 3, MiB + 11))).toBe(true);
    const part3 = await layer.getObject('b', 'big', { partNumber: 3 });
    expect(part3.range).toEqual({ start: MiB + 1, end: MiB + 1 + 2 * MiB - 1 });
    part3.body.destroy(); // a body holds the key's read lock until it closes
    // The upload is gone.
    await expect(layer.listObjectParts('b', 'big', up.uploadId, { maxParts: 1 })).rejects.toMatchObject({ code: 'NoSuchUpload' });
    expect((await layer.listMultipartUploads('b', { maxUploads: 10 })).uploads).toEqual([]);
  });

  it('abort, bad upload ids, uploads listing with prefix and delimiter', async () => {
    fx = await makeFixture({ drives: 2, standardParity: 1 });
    const { layer } = fx;
    await layer.makeBucket('b');
    const a = await layer.newMultipartUpload('b', 'dir/a', {});
    const c = await layer.newMultipartUpload('b', 'dir/sub/c', {});
    await layer.newMultipartUpload('b', 'top', {});
    const l = await layer.listMultipartUploads('b', { prefix: 'dir/', delimiter: '/', maxUploads: 10 });
    expect(l.uploads.map((u) => u.name)).toEqual(['dir/a']);
    expect(l.prefixes).toEqual(['dir/sub/']);
    await layer.putObjectPart('b', 'dir/a', a.uploadId, 1, putDataFromBuffer(bytes(10)));
    await layer.abortMultipartUpload('b', 'dir/a', a.uploadId);
    await expect(layer.putObjectPart('b', 'dir/a', a.uploadId, 2, putDataFromBuffer(bytes(10)))).rejects.toMatchObject({
      code: 'NoSuchUpload',
    });
    await expect(layer.abortMultipartUpload('b', 'dir/a', 'garbage')).rejects.toMatchObject({ code: 'NoSuchUpload' });
    await expect(layer.abortMultipartUpload('b', 'other-key', c.uploadId)).rejects.toMatchObject({ code: 'NoSuchUpload' });
  });

  it('parts and complete follow write quorum; a failed complete stays completable', async () => {
    fx = await makeFixture({ drives: 4, standardParity: 2 });
    const { layer } = fx;
    await layer.makeBucket('b');
    const up = await layer.newMultipartUpload('b', 'k', {});
    await fx.offline(0);
    const p1 = await layer.putObjectPart('b', 'k', up.uploadId, 1, putDataFromBuffer(bytes(MiB + 7, 1)));
    await fx.offline(1);
    await expect(layer.putObjectPart('b', 'k', up.uploadId, 2, putDataFromBuffer(bytes(10)))).rejects.toMatchObject({
      code: 'ErasureWriteQuorum',
    });
    await expect(layer.completeMultipartUpload('b', 'k', up.uploadId, [{ number: 1, etag: p1.etag }])).rejects.toMatchObject({
      code: 'ErasureWriteQuorum',
    });
    await fx.online(1);
    const info = await layer.completeMultipartUpload('b', 'k', up.uploadId, [{ number: 1, etag: p1.etag }]);
    expect(info.size).toBe(MiB + 7);
    await fx.online(0);
    expect((await get(layer, 'b', 'k')).equals(bytes(MiB + 7, 1))).toBe(true);
  });

  it('composite checksum of the parts', async () => {
    fx = await makeFixture({ drives: 2, standardParity: 1 });
    const { layer } = fx;
    await layer.makeBucket('b');
    const up = await layer.newMultipartUpload('b', 'k', { checksumAlgorithm: 'SHA256', checksumType: 'COMPOSITE' });
    const parts = [bytes(50, 1), bytes(60, 2)];
    const infos = [];
    for (let i = 0; i < parts.length; i++) {
      const sha = createHash('sha256').update(parts[i]!).digest('base64');
      infos.push(
        await layer.putObjectPart('b', 'k', up.uploadId, i + 1, putDataFromBuffer(parts[i]!, { algorithm: 'SHA256', value: sha, type: 'COMPOSITE' })),
      );
    }
    const info = await layer.completeMultipartUpload(
      'b',
      'k',
      up.uploadId,
      infos.map((p) => ({ number: p.number, etag: p.etag })),
    );
    const raw = Buffer.concat(parts.map((p) => createHash('sha256').update(p).digest()));
    expect(info.checksum).toEqual({ algorithm: 'SHA256', value: `${createHash('sha256').update(raw).digest('base64')}-2`, type: 'COMPOSITE' });
  });
});
