/**
 * Crash simulation: a commit frozen at each named step (a hook that never
 * resolves), then a restart over the same drives. Whatever the step, the
 * object is either the old one or the new one, byte-exact, and the listing
 * agrees with what GET serves: never a half-visible object.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { CommitStep } from './helpers/faulty-drive.ts';
import type { ObjectLayer } from '../src/object/types.ts';
import { bytes, type Fixture, get, makeFixture, put } from './engine-helpers.ts';

const MiB = 1024 * 1024;
let fx: Fixture | undefined;
afterEach(async () => {
  await fx?.cleanup();
  fx = undefined;
});

const never = () => new Promise<void>(() => {});

/**
 * 4 drives EC:2 whose renameData freezes on every drive from `committed` on,
 * once armed: a commit that reached exactly `committed` drives, then a crash.
 */
async function frozenAfterRenames(committed: number): Promise<{ fx: Fixture; arm(): void }> {
  let armed = false;
  const fixture = await makeFixture({
    drives: 4,
    standardParity: 2,
    driveHooks: (i) => ({ step: (name) => (armed && name === 'rename-data:start' && i >= committed ? never() : undefined) }),
  });
  return {
    fx: fixture,
    arm: () => {
      armed = true;
    },
  };
}

async function settleFrozen(p: Promise<unknown>): Promise<void> {
  // Let the frozen operation reach its hook and every other drive finish.
  p.catch(() => undefined);
  for (let i = 0; i < 20; i++) await new Promise((r) => setTimeout(r, 5));
}

async function assertOldOrNew(layer: ObjectLayer, key: string, oldData: Buffer, newData: Buffer): Promise<'old' | 'new'> {
  const got = await get(layer, 'b', key);
  const which = got.equals(oldData) ? 'old' : got.equals(newData) ? 'new' : 'neither';
  expect(which).not.toBe('neither');
  const listed = (await layer.listObjects('b', { maxKeys: 100 })).objects.find((o) => o.name === key);
  expect(listed).toBeDefined();
  const head = await layer.getObjectInfo('b', key, {});
  expect(listed!.etag).toBe(head.etag);
  expect(listed!.size).toBe(got.length);
  return which as 'old' | 'new';
}

describe('crash between commit steps', () => {
  const oldData = bytes(MiB + 11, 1);
  const newData = bytes(2 * MiB + 5, 2);

  const setSteps: { step: CommitStep; expectNew?: boolean }[] = [
    { step: 'shards-written' },
    { step: 'shards-verified' },
    { step: 'rename-data' },
    { step: 'committed', expectNew: true },
  ];
  for (const { step, expectNew } of setSteps) {
    it(`set step ${step}`, async () => {
      let armed = false;
      fx = await makeFixture({
        drives: 4,
        standardParity: 2,
        commitHooks: { afterStep: (s) => (armed && s === step ? never() : undefined) },
      });
      await fx.layer.makeBucket('b');
      await put(fx.layer, 'b', 'k', oldData);
      armed = true;
      await settleFrozen(put(fx.layer, 'b', 'k', newData));
      const restarted = await fx.reopen();
      const which = await assertOldOrNew(restarted, 'k', oldData, newData);
      if (expectNew) expect(which).toBe('new');
      if (step === 'shards-written' || step === 'shards-verified') expect(which).toBe('old');
      // A fresh key crashed before commit is simply absent.
      armed = true;
      await settleFrozen(put(restarted, 'b', 'fresh', newData).catch(() => undefined));
    });
  }

  for (const committed of [0, 1, 2, 3]) {
    it(`renameData reached ${committed} of 4 drives`, async () => {
      const frozen = await frozenAfterRenames(committed);
      fx = frozen.fx;
      await fx.layer.makeBucket('b');
      await put(fx.layer, 'b', 'k', oldData);
      await put(fx.layer, 'b', 'other', oldData);
      frozen.arm();
      await settleFrozen(put(fx.layer, 'b', 'k', newData));
      await settleFrozen(put(fx.layer, 'b', 'fresh', newData));
      const restarted = await fx.reopen();
      const which = await assertOldOrNew(restarted, 'k', oldData, newData);
      // K = 2: with fewer than K drives committed the new version cannot be authoritative.
      if (committed < 2) expect(which).toBe('old');
      else expect(which).toBe('new');
      if (committed < 2) await expect(restarted.getObjectInfo('b', 'fresh', {})).rejects.toMatchObject({ code: 'NoSuchKey' });
      else expect((await get(restarted, 'b', 'fresh')).equals(newData)).toBe(true);
      expect((await get(restarted, 'b', 'other')).equals(oldData)).toBe(true);
      // Restart swept the staging area.
      for (const r of fx.roots) expect((await readdir(join(r, '.svc.sys/tmp'))).filter((n) => n !== '.trash')).toEqual([]);
    });
  }

  it('K > N/2 (4 drives EC:1): a crash with neither old nor new at quorum still serves the old object', async () => {
    let armed = false;
    fx = await makeFixture({
      drives: 4,
      standardParity: 1,
      driveHooks: (i) => ({ step: (name) => (armed && name === 'rename-data:start' && i >= 2 ? never() : undefined) }),
    });
    await fx.layer.makeBucket('b');
    await put(fx.layer, 'b', 'k', oldData);
    armed = true;
    await settleFrozen(put(fx.layer, 'b', 'k', newData));
    const restarted = await fx.reopen();
    // Two drives hold the new version (K = 3 needed), all four still hold the old one.
    expect((await get(restarted, 'b', 'k')).equals(oldData)).toBe(true);
    const vs = await restarted.listObjectVersions('b', { maxKeys: 10 });
    expect(vs.versions.map((v) => [v.versionId, v.size])).toEqual([['null', oldData.length]]);
    // The next overwrite commits and leaves a single clean version on every drive.
    await put(restarted, 'b', 'k', newData);
    expect((await get(restarted, 'b', 'k')).equals(newData)).toBe(true);
    const { decodeXlMeta } = await import('../src/storage/xl-meta.ts');
    const { readFile } = await import('node:fs/promises');
    for (const r of fx.roots) {
      const j = decodeXlMeta(await readFile(join(r, 'b/k/xl.meta')));
      expect(j.map((v) => v.versionId)).toEqual(['null']);
    }
    await restarted.deleteObject('b', 'k', {});
    await expect(restarted.getObjectInfo('b', 'k', {})).rejects.toMatchObject({ code: 'NoSuchKey' });
  });

  for (const step of ['rename-data:data-moved', 'rename-data:meta-written']) {
    it(`inside a drive's renameData: ${step} on every drive`, async () => {
      let armed = false;
      fx = await makeFixture({
        drives: 4,
        standardParity: 2,
        driveHooks: () => ({ step: (name) => (armed && name === step ? never() : undefined) }),
      });
      await fx.layer.makeBucket('b');
      await put(fx.layer, 'b', 'k', oldData);
      armed = true;
      await settleFrozen(put(fx.layer, 'b', 'k', newData));
      const restarted = await fx.reopen();
      const which = await assertOldOrNew(restarted, 'k', oldData, newData);
      expect(which).toBe(step === 'rename-data:data-moved' ? 'old' : 'new');
    });
  }

  for (const committed of [1, 2, 3]) {
    it(`suspended bucket: a null delete marker that reached ${committed} of 4 drives before a crash`, async () => {
      const frozen = await frozenAfterRenames(committed);
      fx = frozen.fx;
      await fx.layer.makeBucket('b');
      await fx.layer.setBucketVersioning('b', 'Suspended');
      await put(fx.layer, 'b', 'k', oldData);
      frozen.arm();
      await settleFrozen(fx.layer.deleteObject('b', 'k', {}));
      const restarted = await fx.reopen();
      if (committed < 3) {
        // Below the marker's majority: the object is served whole, and the
        // drives that took the marker kept its data as a superseded copy.
        expect((await get(restarted, 'b', 'k')).equals(oldData)).toBe(true);
        // With a drive offline too, the marker could still be the latest
        // (ErasureReadQuorum) unless it is on one drive only.
        await fx.offline(3);
        if (committed === 1) expect((await get(restarted, 'b', 'k')).equals(oldData)).toBe(true);
        else await expect(get(restarted, 'b', 'k')).rejects.toMatchObject({ code: 'ErasureReadQuorum' });
        await fx.online(3);
        const { decodeXlMeta } = await import('../src/storage/xl-meta.ts');
        const { readFile } = await import('node:fs/promises');
        for (let i = 0; i < committed; i++) {
          const journal = decodeXlMeta(await readFile(join(fx.roots[i]!, 'b/k/xl.meta')));
          const kept = journal.find((v) => v.type === 'object')!;
          expect(kept.versionId).toMatch(/^null~/);
          expect(await readdir(join(fx.roots[i]!, 'b/k', kept.dataDir))).toEqual(['part.1']);
        }
      } else {
        // At majority the marker is the newest version: the delete happened.
        await expect(restarted.getObjectInfo('b', 'k', {})).rejects.toMatchObject({ code: 'NoSuchKey' });
      }
      // The next delete settles it everywhere.
      await restarted.deleteObject('b', 'k', {});
      await expect(restarted.getObjectInfo('b', 'k', {})).rejects.toMatchObject({ code: 'NoSuchKey' });
      const vs = await restarted.listObjectVersions('b', { maxKeys: 10 });
      expect(vs.versions.map((v) => [v.versionId, v.deleteMarker])).toEqual([['null', true]]);
    });
  }

  it('commit below write quorum (drives failing at rename) is undone everywhere', async () => {
    let armed = false;
    fx = await makeFixture({
      drives: 4,
      standardParity: 2,
      driveHooks: (i) => ({
        step: (name) => {
          if (armed && name === 'rename-data:start' && i >= 2) throw new Error('drive failed');
        },
      }),
    });
    await fx.layer.makeBucket('b');
    await put(fx.layer, 'b', 'k', oldData);
    armed = true;
    await expect(put(fx.layer, 'b', 'k', newData)).rejects.toMatchObject({ code: 'ErasureWriteQuorum' });
    await expect(put(fx.layer, 'b', 'new', newData)).rejects.toMatchObject({ code: 'ErasureWriteQuorum' });
    armed = false;
    // Every drive holds the old version again (not only a quorum of them).
    for (let i = 0; i < 4; i++) {
      const { decodeXlMeta } = await import('../src/storage/xl-meta.ts');
      const { readFile } = await import('node:fs/promises');
      const vs = decodeXlMeta(await readFile(join(fx.roots[i]!, 'b/k/xl.meta')));
      expect(vs.length).toBe(1);
      expect(vs[0]!.size).toBe(oldData.length);
      await expect(readdir(join(fx.roots[i]!, 'b/new'))).rejects.toMatchObject({ code: 'ENOENT' });
    }
    expect((await get(fx.layer, 'b', 'k')).equals(oldData)).toBe(true);
    for (const r of fx.roots) expect((await readdir(join(r, '.svc.sys/tmp'))).filter((n) => n !== '.trash')).toEqual([]);
  });
});
