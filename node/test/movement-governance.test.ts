/**
 * Decommission and rebalance move encrypted and locked versions, never drop
 * them: after a pool is drained (or rebalanced), SSE-S3 and SSE-C versions
 * read back (SSE-C only with its key), each version keeps its retention and
 * legal hold, and a locked version still refuses a permanent delete on its
 * new pool.
 */
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type { DataMovement } from '../src/background/movement/data-movement.ts';
import { putDataFromBuffer } from '../src/object/put-data.ts';
import { bytes } from './engine-helpers.ts';
import { codeOf } from './helpers/error-code.ts';
import { DAY_MS, kmsKeyLine, testKms } from './helpers/governance.ts';
import { adminOver, movementOver, objectJournals, snapshotBucket, waitForEntry } from './helpers/movement.ts';
import { makePoolsFixture, type PoolsFixture } from './helpers/pools-fixture.ts';
import { canMountTmpfs } from './helpers/tmpfs.ts';

const MiB = 1024 * 1024;
const tmpfs = canMountTmpfs();
if (!tmpfs) console.log('skipped: cannot mount tmpfs (needs root) for the rebalance case');

let fx: PoolsFixture | undefined;
let dm: DataMovement | undefined;
afterEach(async () => {
  await dm?.close();
  dm = undefined;
  await fx?.cleanup();
  fx = undefined;
});

describe('decommission of encrypted and locked versions', { timeout: 180_000 }, () => {
  it('moves them exactly: readable (SSE-C with its key only), retention and legal hold kept and enforced on the new pool', async () => {
    fx = await makePoolsFixture(
      [
        { drives: 2, standardParity: 1 },
        { drives: 2, standardParity: 1 },
      ],
      2,
      // Drives of their own size (root): on temp dirs every drive reports the host disk, and the
      // decommission's capacity rule (free of the remaining pool >= 1.3 x use of the drained one)
      // then refuses the start once that disk is more than about 43 % full.
      { kms: testKms(kmsKeyLine('k1')), ...(tmpfs ? { tmpfsBytes: 64 * MiB } : {}) },
    );
    const layer = fx.layer;
    layer.setPoolAdmission(1, false, 'setup');
    await layer.makeBucket('worm', { objectLock: true });
    const until = Date.now() + 30 * DAY_MS;
    const customer = randomBytes(32);
    const s3 = await layer.putObject('worm', 'enc', putDataFromBuffer(bytes(300 * 1024, 1)), { sse: { type: 'SSE-S3' }, lock: { mode: 'COMPLIANCE', retainUntil: until } });
    const c = await layer.putObject('worm', 'cust', putDataFromBuffer(bytes(5000, 2)), { sse: { type: 'SSE-C', key: customer }, lock: { legalHold: 'ON' } });
    await layer.putObject('worm', 'gov', putDataFromBuffer(bytes(100, 3)), { lock: { mode: 'GOVERNANCE', retainUntil: until } });
    layer.setPoolAdmission(1, true);
    const before = await snapshotBucket(layer, 'worm', { cust: customer });

    const cmdlines = fx.roots.map((r, i) => `${fx!.base}/p${i}/d{0...${r.length - 1}}`);
    dm = movementOver(layer, cmdlines);
    await dm.start();
    await dm.decommission.start([0]);
    const done = await waitForEntry(layer, cmdlines[0]!, (e) => e !== null && e.state !== 'active' && e.state !== 'queued', 120_000);
    expect(done).toMatchObject({ state: 'completed', lastError: null, objectsDecommissionedFailed: 0 });
    for (const r of fx.roots[0]!) expect(await objectJournals(r)).toEqual([]);

    expect(await snapshotBucket(layer, 'worm', { cust: customer })).toEqual(before);
    const enc = await layer.getObjectInfo('worm', 'enc', {});
    expect(enc.sse?.type).toBe('SSE-S3');
    expect(enc.lock).toMatchObject({ mode: 'COMPLIANCE', retainUntil: new Date(until) });
    expect((await layer.getObjectInfo('worm', 'cust', { sseCustomerKey: customer })).lock?.legalHold).toBe('ON');
    expect(await codeOf(layer.getObject('worm', 'cust', {}))).toBeDefined();
    // Still locked where they now live.
    expect(await codeOf(layer.deleteObject('worm', 'enc', { versionId: s3.versionId! }))).toBe('AccessDenied');
    expect(await codeOf(layer.deleteObject('worm', 'cust', { versionId: c.versionId! }))).toBe('AccessDenied');
  });
});

describe.skipIf(!tmpfs)('rebalance of encrypted and locked versions', { timeout: 180_000 }, () => {
  it('moves some to the empty pool exactly: readable (SSE-C with its key only), retention and legal hold kept and enforced there', async () => {
    fx = await makePoolsFixture(
      [
        { drives: 2, standardParity: 1 },
        { drives: 2, standardParity: 1 },
      ],
      2,
      { kms: testKms(kmsKeyLine('k1')), tmpfsBytes: 32 * MiB },
    );
    const layer = fx.layer;
    layer.setPoolAdmission(1, false, 'setup');
    await layer.makeBucket('worm', { objectLock: true });
    const until = Date.now() + 30 * DAY_MS;
    const customer = randomBytes(32);
    const customerKeys: Record<string, Uint8Array> = {};
    const versions = new Map<string, string>();
    // Every kind of protected version, 48 × 256 KiB: pool 0 well above pool 1.
    for (let i = 0; i < 48; i++) {
      const key = `v${String(i).padStart(2, '0')}`;
      const body = putDataFromBuffer(bytes(256 * 1024, i));
      const kind = i % 4;
      if (kind === 1) customerKeys[key] = customer;
      const r = await layer.putObject(
        'worm',
        key,
        body,
        kind === 0
          ? { sse: { type: 'SSE-S3' }, lock: { mode: 'COMPLIANCE', retainUntil: until } }
          : kind === 1
            ? { sse: { type: 'SSE-C', key: customer }, lock: { legalHold: 'ON' } }
            : kind === 2
              ? { lock: { mode: 'GOVERNANCE', retainUntil: until } }
              : { lock: { mode: 'COMPLIANCE', retainUntil: until } },
      );
      versions.set(key, r.versionId!);
    }
    layer.setPoolAdmission(1, true);
    const before = await snapshotBucket(layer, 'worm', customerKeys);

    const cmdlines = fx.roots.map((r, i) => `${fx!.base}/p${i}/d{0...${r.length - 1}}`);
    dm = movementOver(layer, cmdlines);
    await dm.start();
    const admin = adminOver(layer, cmdlines, dm);
    await admin.startRebalance();
    const end = Date.now() + 120_000;
    let status = await admin.rebalanceStatus();
    while (status.status === 'running' && Date.now() < end) {
      await new Promise((r) => setTimeout(r, 50));
      status = await admin.rebalanceStatus();
    }
    expect(status.status).toBe('completed');
    expect(status.pools[0]!.lastError).toBeNull();

    // Some versions now live on pool 1, and nothing was lost or changed.
    const moved = (await objectJournals(fx.roots[1]![0]!)).filter((k) => k.startsWith('worm/')).map((k) => k.slice('worm/'.length));
    expect(moved.length).toBeGreaterThan(5);
    expect(await snapshotBucket(layer, 'worm', customerKeys)).toEqual(before);
    // On their new pool: still encrypted, still locked.
    for (const key of moved) {
      const kind = Number(key.slice(1)) % 4;
      const info = await layer.getObjectInfo('worm', key, kind === 1 ? { sseCustomerKey: customer } : {});
      if (kind === 0) expect(info.sse?.type).toBe('SSE-S3');
      if (kind === 1) {
        expect(info.lock?.legalHold).toBe('ON');
        expect(await codeOf(layer.getObject('worm', key, {}))).toBeDefined();
      } else {
        expect(info.lock).toMatchObject({ mode: kind === 2 ? 'GOVERNANCE' : 'COMPLIANCE', retainUntil: new Date(until) });
      }
      expect(await codeOf(layer.deleteObject('worm', key, { versionId: versions.get(key)! }))).toBe('AccessDenied');
    }
  });
});
