import { afterEach, describe, expect, it } from 'vitest';
import { bytes, type Fixture, get, makeFixture, put } from './engine-helpers.ts';

let fx: Fixture | undefined;
afterEach(async () => {
  await fx?.cleanup();
  fx = undefined;
});

describe('versioning', () => {
  it('enabled: versions, delete markers, version-specific reads and deletes', async () => {
    fx = await makeFixture({ drives: 4, standardParity: 2 });
    const { layer } = fx;
    await layer.makeBucket('v');
    await layer.setBucketVersioning('v', 'Enabled');
    expect((await layer.getBucketInfo('v')).versioning).toBe('Enabled');
    const a = await put(layer, 'v', 'k', bytes(100, 1));
    const b = await put(layer, 'v', 'k', bytes(200 * 1024, 2));
    expect(a.versionId).not.toBe('null');
    expect(a.versionId).not.toBe(b.versionId);
    expect((await get(layer, 'v', 'k')).equals(bytes(200 * 1024, 2))).toBe(true);
    expect((await get(layer, 'v', 'k', { versionId: a.versionId })).equals(bytes(100, 1))).toBe(true);
    const oldInfo = await layer.getObjectInfo('v', 'k', { versionId: a.versionId });
    expect(oldInfo.isLatest).toBe(false);

    const del = await layer.deleteObject('v', 'k', {});
    expect(del.deleteMarker).toBe(true);
    await expect(layer.getObjectInfo('v', 'k', {})).rejects.toMatchObject({ code: 'NoSuchKey' });
    await expect(layer.getObjectInfo('v', 'k', { versionId: del.versionId! })).rejects.toMatchObject({ code: 'MethodNotAllowed' });
    expect((await get(layer, 'v', 'k', { versionId: b.versionId })).length).toBe(200 * 1024);

    const vs = await layer.listObjectVersions('v', { maxKeys: 100 });
    expect(vs.versions.map((v) => [v.versionId, v.deleteMarker, v.isLatest])).toEqual([
      [del.versionId, true, true],
      [b.versionId, false, false],
      [a.versionId, false, false],
    ]);
    expect((await layer.listObjects('v', { maxKeys: 10 })).objects).toEqual([]);

    // Removing the delete marker restores the previous version.
    const rm = await layer.deleteObject('v', 'k', { versionId: del.versionId! });
    expect(rm.deleteMarker).toBe(true);
    expect((await get(layer, 'v', 'k')).length).toBe(200 * 1024);
    await layer.deleteObject('v', 'k', { versionId: b.versionId });
    expect((await get(layer, 'v', 'k')).equals(bytes(100, 1))).toBe(true);
    await expect(layer.getObjectInfo('v', 'k', { versionId: b.versionId })).rejects.toMatchObject({ code: 'NoSuchVersion' });

    // Paging through versions with markers.
    for (let i = 0; i < 3; i++) await put(layer, 'v', 'k', bytes(10, i));
    const p1 = await layer.listObjectVersions('v', { maxKeys: 2 });
    expect(p1.isTruncated).toBe(true);
    const p2 = await layer.listObjectVersions('v', {
      maxKeys: 10,
      keyMarker: p1.nextKeyMarker!,
      versionIdMarker: p1.nextVersionIdMarker!,
    });
    expect([...p1.versions, ...p2.versions].map((v) => v.versionId)).toEqual(
      (await layer.listObjectVersions('v', { maxKeys: 100 })).versions.map((v) => v.versionId),
    );
    expect(p2.versions.length).toBe(2);
  });

  it('suspended: the null version is replaced, earlier versions stay', async () => {
    fx = await makeFixture({ drives: 4, standardParity: 2 });
    const { layer } = fx;
    await layer.makeBucket('s');
    await put(layer, 's', 'k', bytes(10, 1)); // null version while unversioned
    await layer.setBucketVersioning('s', 'Enabled');
    const v1 = await put(layer, 's', 'k', bytes(20, 2));
    await layer.setBucketVersioning('s', 'Suspended');
    const n1 = await put(layer, 's', 'k', bytes(2 * 1024 * 1024, 3));
    expect(n1.versionId).toBe('null');
    const n2 = await put(layer, 's', 'k', bytes(30, 4));
    expect(n2.versionId).toBe('null');
    const vs = await layer.listObjectVersions('s', { maxKeys: 100 });
    expect(vs.versions.map((v) => v.versionId)).toEqual(['null', v1.versionId]);
    expect((await get(layer, 's', 'k')).equals(bytes(30, 4))).toBe(true);
    // Suspended delete: a null delete marker replaces the null version.
    const d = await layer.deleteObject('s', 'k', {});
    expect(d).toEqual({ versionId: 'null', deleteMarker: true });
    const after = await layer.listObjectVersions('s', { maxKeys: 100 });
    expect(after.versions.map((v) => [v.versionId, v.deleteMarker])).toEqual([
      ['null', true],
      [v1.versionId, false],
    ]);
    expect((await get(layer, 's', 'k', { versionId: v1.versionId })).equals(bytes(20, 2))).toBe(true);
  });

  it('suspended: a null delete marker below quorum never costs the null version its data', async () => {
    fx = await makeFixture({ drives: 4, standardParity: 2 });
    const { layer } = fx;
    await layer.makeBucket('s');
    await layer.setBucketVersioning('s', 'Suspended');
    const data = bytes(2 * 1024 * 1024 + 5, 7);
    await put(layer, 's', 'k', data);
    // Two drives miss the marker: 2 of 4 is below its majority quorum.
    await fx.offline(2);
    await fx.offline(3);
    await expect(layer.deleteObject('s', 'k', {})).rejects.toMatchObject({ code: 'ErasureWriteQuorum' });
    // The drives that took the marker were rolled back with the null
    // version's data intact: they alone still serve the object.
    for (const d of fx.drives) await d.flush();
    expect((await get(layer, 's', 'k')).equals(data)).toBe(true);
    await fx.online(2);
    await fx.online(3);
    // At quorum the marker replaces the null version and its data goes.
    expect(await layer.deleteObject('s', 'k', {})).toEqual({ versionId: 'null', deleteMarker: true });
    for (const d of fx.drives) await d.flush();
    await expect(get(layer, 's', 'k')).rejects.toMatchObject({ code: 'NoSuchKey' });
    const vs = await layer.listObjectVersions('s', { maxKeys: 10 });
    expect(vs.versions.map((v) => [v.versionId, v.deleteMarker])).toEqual([['null', true]]);
    const { readdir } = await import('node:fs/promises');
    for (const r of fx.roots) expect(await readdir(`${r}/s/k`)).toEqual(['xl.meta']);
  });

  it('a version delete with too few drives reachable is refused and changes nothing', async () => {
    fx = await makeFixture({ drives: 4, standardParity: 2 });
    const { layer } = fx;
    await layer.makeBucket('u');
    const data = bytes(1024 * 1024 + 3, 5);
    await put(layer, 'u', 'k', data);
    await fx.offline(2);
    await fx.offline(3);
    await expect(layer.deleteObject('u', 'k', {})).rejects.toMatchObject({ code: 'ErasureWriteQuorum' });
    await expect(layer.deleteObject('u', 'k', { versionId: 'null' })).rejects.toMatchObject({ code: 'ErasureWriteQuorum' });
    // The two drives that answered still hold it whole.
    expect((await get(layer, 'u', 'k')).equals(data)).toBe(true);
    await fx.online(2);
    await fx.online(3);
    await layer.deleteObject('u', 'k', {});
    await expect(layer.getObjectInfo('u', 'k', {})).rejects.toMatchObject({ code: 'NoSuchKey' });
  });

  it('unversioned overwrite replaces data and frees the old data dir', async () => {
    fx = await makeFixture({ drives: 2, standardParity: 1 });
    const { layer } = fx;
    await layer.makeBucket('u');
    await put(layer, 'u', 'k', bytes(3 * 1024 * 1024, 1));
    await put(layer, 'u', 'k', bytes(2 * 1024 * 1024, 2));
    for (const d of fx.drives) await d.flush();
    const { readdir } = await import('node:fs/promises');
    for (const r of fx.roots) expect((await readdir(`${r}/u/k`)).length).toBe(2); // xl.meta + one data dir
    expect((await get(layer, 'u', 'k')).equals(bytes(2 * 1024 * 1024, 2))).toBe(true);
    await layer.deleteObject('u', 'k', {});
    for (const r of fx.roots) await expect(readdir(`${r}/u/k`)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
