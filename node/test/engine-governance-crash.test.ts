/**
 * Crash simulation for data governance: an encrypted multipart complete, and
 * a lifecycle deletion (a noncurrent version removed, a current version
 * expired under a delete marker, an unversioned object removed), each frozen
 * at every step on some drives (a hook that never resolves = a crash there),
 * then a restart over the same drives. Whatever the step, the object is the
 * old state or the new state, byte-exact and decryptable, and the listing
 * agrees with what GET serves: never a half state.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { putDataFromBuffer } from '../src/object/put-data.ts';
import type { ServerPools } from '../src/object/server-pools.ts';
import type { ObjectLayer } from '../src/object/types.ts';
import type { LifecycleConfig } from '../src/object/lifecycle/rules.ts';
import { bytes, type Fixture, get, makeFixture } from './engine-helpers.ts';
import { DAY_MS, kmsKeyLine, testKms } from './helpers/governance.ts';

const MiB = 1024 * 1024;
const kms = testKms(kmsKeyLine('crash-key'));
let fx: Fixture | undefined;
afterEach(async () => {
  await fx?.cleanup();
  fx = undefined;
});

const never = () => new Promise<void>(() => {});

async function settleFrozen(p: Promise<unknown>): Promise<void> {
  p.catch(() => undefined);
  for (let i = 0; i < 30; i++) await new Promise((r) => setTimeout(r, 5));
}

/** 4 drives, EC:2; once armed, drive i ≥ `from` never finishes step `step` (its process "died" there). */
async function frozen(step: string, from: number): Promise<{ fx: Fixture; arm(): void }> {
  let armed = false;
  const f = await makeFixture({
    drives: 4,
    standardParity: 2,
    kms,
    driveHooks: (i) => ({ step: (name) => (armed && name === step && i >= from ? never() : undefined) }),
  });
  return { fx: f, arm: () => (armed = true) };
}

/** The listing and GET agree on `key`: absent from both, or listed with the size and ETag GET serves. */
async function consistent(layer: ObjectLayer, key: string): Promise<Buffer | undefined> {
  const listed = (await layer.listObjects('b', { maxKeys: 100 })).objects.find((o) => o.name === key);
  let got: Buffer | undefined;
  try {
    got = await get(layer, 'b', key);
  } catch (err) {
    expect((err as { code?: string }).code).toBe('NoSuchKey');
  }
  if (got === undefined) expect(listed).toBeUndefined();
  else {
    expect(listed).toBeDefined();
    expect(listed!.size).toBe(got.length);
    expect(listed!.etag).toBe((await layer.getObjectInfo('b', key, {})).etag);
  }
  return got;
}

describe('crash during an encrypted (SSE-S3) multipart complete', () => {
  const oldData = bytes(300_000, 1);
  const p1 = bytes(5 * MiB + 1, 2);
  const p2 = bytes(70_001, 3);
  const newData = Buffer.concat([p1, p2]);

  const cases: { step: string; from: number; expect?: 'old' | 'new' }[] = [
    ...[0, 1, 2, 3].map((from) => ({ step: 'rename-data:start', from, expect: (from < 2 ? 'old' : 'new') as 'old' | 'new' })),
    { step: 'rename-data:data-moved', from: 0, expect: 'old' },
    { step: 'rename-data:meta-written', from: 0, expect: 'new' },
  ];
  for (const c of cases) {
    it(`${c.step} frozen from drive ${c.from}: old or new, never half`, async () => {
      const f = await frozen(c.step, c.from);
      fx = f.fx;
      const layer = fx.layer;
      await layer.makeBucket('b');
      await layer.putObject('b', 'k', putDataFromBuffer(oldData), { sse: { type: 'SSE-S3' } });
      const up = await layer.newMultipartUpload('b', 'k', { sse: { type: 'SSE-S3' } });
      const r1 = await layer.putObjectPart('b', 'k', up.uploadId, 1, putDataFromBuffer(p1));
      const r2 = await layer.putObjectPart('b', 'k', up.uploadId, 2, putDataFromBuffer(p2));
      f.arm();
      await settleFrozen(layer.completeMultipartUpload('b', 'k', up.uploadId, [{ number: 1, etag: r1.etag }, { number: 2, etag: r2.etag }]));
      const restarted = await fx.reopen();
      const got = await consistent(restarted, 'k');
      const which = got?.equals(oldData) ? 'old' : got?.equals(newData) ? 'new' : 'neither';
      expect(which).toBe(c.expect);
      const info = await restarted.getObjectInfo('b', 'k', {});
      expect(info.sse?.type).toBe('SSE-S3');
      // a range across the part boundary decrypts too
      if (which === 'new') expect((await get(restarted, 'b', 'k', { range: { start: p1.length - 5, end: p1.length + 5 } })).equals(newData.subarray(p1.length - 5, p1.length + 6))).toBe(true);
    });
  }
});

describe('crash during a lifecycle deletion', () => {
  const v1 = bytes(200_000, 11);
  const v2 = bytes(150_000, 12);
  const noncurrent: LifecycleConfig = { rules: [{ id: 'nc', enabled: true, filter: {}, noncurrentExpiration: { days: 1 } }] };
  const current: LifecycleConfig = { rules: [{ id: 'cur', enabled: true, filter: {}, expiration: { days: 1 } }] };
  const later = () => Date.now() + 3 * DAY_MS;

  for (const step of ['delete-version:start', 'delete-version:meta-written']) {
    for (const from of [0, 1, 2, 3]) {
      it(`a noncurrent version's delete, ${step} frozen from drive ${from}: whole or gone`, async () => {
        const f = await frozen(step, from);
        fx = f.fx;
        const layer = fx.layer as unknown as ServerPools;
        await layer.makeBucket('b');
        await layer.setBucketVersioning('b', 'Enabled');
        const old = await layer.putObject('b', 'k', putDataFromBuffer(v1), { sse: { type: 'SSE-S3' } });
        await layer.putObject('b', 'k', putDataFromBuffer(v2), {});
        f.arm();
        await settleFrozen(layer.applyLifecycle('b', 'k', noncurrent, later()));
        const restarted = await fx.reopen();
        expect((await consistent(restarted, 'k'))?.equals(v2)).toBe(true);
        const listed = (await restarted.listObjectVersions('b', { maxKeys: 10 })).versions.map((v) => v.versionId);
        let oldBytes: Buffer | undefined;
        try {
          oldBytes = await get(restarted, 'b', 'k', { versionId: old.versionId });
        } catch (err) {
          expect((err as { code?: string }).code).toBe('NoSuchVersion');
        }
        // listed exactly when readable, and then byte-exact
        expect(listed.includes(old.versionId)).toBe(oldBytes !== undefined);
        if (oldBytes) expect(oldBytes.equals(v1)).toBe(true);
        // the deletion stopped on fewer than a majority of drives: the version is still there, else it is gone
        if (step === 'delete-version:start') expect(oldBytes !== undefined).toBe(from < 3);
      });
    }
  }

  for (const from of [0, 1, 2, 3]) {
    it(`a current version expired under a delete marker, the marker's commit frozen from drive ${from}: old or new`, async () => {
      const f = await frozen('rename-data:start', from);
      fx = f.fx;
      const layer = fx.layer as unknown as ServerPools;
      await layer.makeBucket('b');
      await layer.setBucketVersioning('b', 'Enabled');
      const v = await layer.putObject('b', 'k', putDataFromBuffer(v1), {});
      f.arm();
      await settleFrozen(layer.applyLifecycle('b', 'k', current, later()));
      const restarted = await fx.reopen();
      const got = await consistent(restarted, 'k');
      // the marker needs a majority (3 of 4) to be the latest version
      if (from < 3) expect(got?.equals(v1)).toBe(true);
      else expect(got).toBeUndefined();
      // the expired version itself is intact either way
      expect((await get(restarted, 'b', 'k', { versionId: v.versionId })).equals(v1)).toBe(true);
    });
  }

  const unversioned = [
    { step: 'delete-version:start', from: 0, gone: false },
    { step: 'delete-version:start', from: 2, gone: false },
    { step: 'delete-version:start', from: 3, gone: true },
    { step: 'delete-version:meta-written', from: 0, gone: true },
  ];
  for (const c of unversioned) {
    it(`an unversioned object's expiry, ${c.step} frozen from drive ${c.from}: whole or gone`, async () => {
      const f = await frozen(c.step, c.from);
      fx = f.fx;
      const layer = fx.layer as unknown as ServerPools;
      await layer.makeBucket('b');
      await layer.putObject('b', 'k', putDataFromBuffer(v1), { sse: { type: 'SSE-S3' } });
      f.arm();
      await settleFrozen(layer.applyLifecycle('b', 'k', current, later()));
      const restarted = await fx.reopen();
      const got = await consistent(restarted, 'k');
      if (got !== undefined) expect(got.equals(v1)).toBe(true);
      // K = 2 of 4: the version stays readable while two drives still list it
      expect(got === undefined).toBe(c.gone);
    });
  }
});
