/**
 * Per-bucket configuration documents in the bucket metadata record: set,
 * read, replace and delete each kind; old (v1) records still read and are
 * upgraded on their next change keeping versioning and tags; fields a newer
 * build wrote survive a rewrite; peers are told to drop their cached copy
 * and, once they do, see the change.
 */
import { pack, unpack } from 'msgpackr';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bucketRecordPath } from '../src/object/buckets.ts';
import { BUCKET_CONFIG_KINDS } from '../src/object/index.ts';
import { decodeLockConfig, encodeLockConfig } from '../src/object/object-lock.ts';
import { encodeBucketEncryption } from '../src/object/sse.ts';
import { codeOf } from './helpers/error-code.ts';
import { makePoolsFixture, type PoolsFixture } from './helpers/pools-fixture.ts';

const enc = (s: string) => new Uint8Array(Buffer.from(s));
/** Kinds the object layer stores as given; `object-lock` and `encryption` have rules of their own (below). */
const OPAQUE = BUCKET_CONFIG_KINDS.filter((k) => k !== 'object-lock' && k !== 'encryption');
const dec = (b: Uint8Array | undefined) => (b === undefined ? undefined : Buffer.from(b).toString());

describe('bucket configuration documents', () => {
  let fx: PoolsFixture;
  const changed: string[] = [];
  beforeEach(async () => {
    changed.length = 0;
    fx = await makePoolsFixture([
      { drives: 4, standardParity: 2 },
      { drives: 2, standardParity: 1 },
    ]);
    await fx.open(2, { onBucketMetaChanged: (b) => changed.push(b) });
  });
  afterEach(async () => fx.cleanup());

  it('every kind round-trips, is replaced, and is removed with undefined', async () => {
    const l = fx.layer;
    await l.makeBucket('cfg');
    for (const kind of BUCKET_CONFIG_KINDS) expect(await l.getBucketConfig('cfg', kind)).toBeUndefined();
    for (const kind of OPAQUE) await l.setBucketConfig('cfg', kind, enc(`<${kind}/>`));
    await l.setBucketConfig('cfg', 'policy', enc('{"Version":"2012-10-17"}'));
    // A fresh layer (a restart) reads them back from the drives.
    const again = await fx.open(2);
    for (const kind of OPAQUE) {
      expect(dec(await again.getBucketConfig('cfg', kind))).toBe(kind === 'policy' ? '{"Version":"2012-10-17"}' : `<${kind}/>`);
    }
    await again.setBucketConfig('cfg', 'cors', undefined);
    expect(await again.getBucketConfig('cfg', 'cors')).toBeUndefined();
    expect(dec(await again.getBucketConfig('cfg', 'lifecycle'))).toBe('<lifecycle/>');
  });

  it('config changes keep versioning and tags, and versioning/tag changes keep configs', async () => {
    const l = fx.layer;
    await l.makeBucket('mix');
    await l.setBucketVersioning('mix', 'Enabled');
    await l.setBucketConfig('mix', 'object-lock', encodeLockConfig({ enabled: true }));
    await l.setBucketTags('mix', 'a=1');
    const r = await fx.open(2);
    expect(await r.getBucketInfo('mix')).toMatchObject({ versioning: 'Enabled', tags: 'a=1' });
    expect(decodeLockConfig(await r.getBucketConfig('mix', 'object-lock'))).toEqual({ enabled: true });
    // documents with rules: object lock stays once set, junk is refused, default encryption needs a key store
    expect(await codeOf(r.setBucketConfig('mix', 'object-lock', undefined))).toBe('InvalidBucketState');
    expect(await codeOf(r.setBucketVersioning('mix', 'Suspended'))).toBe('InvalidBucketState');
    expect(await codeOf(r.setBucketConfig('mix', 'object-lock', enc('lock')))).toBe('InvalidArgument');
    expect(await codeOf(r.setBucketConfig('mix', 'encryption', enc('sse')))).toBe('InvalidArgument');
    expect(await codeOf(r.setBucketConfig('mix', 'encryption', encodeBucketEncryption({ algorithm: 'AES256' })))).toBe('XSvcKMSNotConfigured');
  });

  it('a v1 record reads, and its next change upgrades it to v2 keeping every field', async () => {
    const l = fx.layer;
    await l.makeBucket('old');
    const v1 = { v: 1, name: 'old', created: 1_600_000_000_000, versioning: 'Suspended', tags: 'k=v', location: 'eu-west-1' };
    await l.sysRecords.write(bucketRecordPath('old'), pack(v1));
    const r = await fx.open(2);
    expect(await r.getBucketInfo('old')).toEqual({
      name: 'old',
      created: new Date(1_600_000_000_000),
      versioning: 'Suspended',
      tags: 'k=v',
      location: 'eu-west-1',
    });
    expect(await r.getBucketConfig('old', 'policy')).toBeUndefined();
    await r.setBucketConfig('old', 'policy', enc('p'));
    const stored = unpack((await r.sysRecords.read(bucketRecordPath('old')))!) as Record<string, unknown>;
    expect(stored).toMatchObject({ v: 2, name: 'old', created: 1_600_000_000_000, versioning: 'Suspended', tags: 'k=v', location: 'eu-west-1' });
    expect(dec((stored.configs as Record<string, Uint8Array>).policy)).toBe('p');
  });

  it('fields from a newer build survive a rewrite; a newer record version is refused', async () => {
    const l = fx.layer;
    await l.makeBucket('fut');
    const raw = unpack((await l.sysRecords.read(bucketRecordPath('fut')))!) as Record<string, unknown>;
    await l.sysRecords.write(bucketRecordPath('fut'), pack({ ...raw, quota: { hard: 1024 } }));
    const r = await fx.open(2);
    await r.setBucketConfig('fut', 'notification', enc('n'));
    const stored = unpack((await r.sysRecords.read(bucketRecordPath('fut')))!) as Record<string, unknown>;
    expect(stored.quota).toEqual({ hard: 1024 });
    await r.sysRecords.write(bucketRecordPath('fut'), pack({ ...stored, v: 3 }));
    const r2 = await fx.open(2);
    expect(await codeOf(r2.getBucketInfo('fut'))).toBe('FileCorrupt');
  });

  it('refuses unknown kinds, oversize documents and missing buckets', async () => {
    const l = fx.layer;
    await l.makeBucket('b');
    expect(await codeOf(l.getBucketConfig('b', 'website'))).toBe('InvalidArgument');
    expect(await codeOf(l.setBucketConfig('b', 'versioning', enc('x')))).toBe('InvalidArgument');
    expect(await codeOf(l.setBucketConfig('b', 'policy', new Uint8Array(1024 * 1024 + 1)))).toBe('InvalidArgument');
    expect(await l.getBucketConfig('b', 'policy')).toBeUndefined();
    expect(await codeOf(l.getBucketConfig('nope', 'policy'))).toBe('NoSuchBucket');
    expect(await codeOf(l.setBucketConfig('nope', 'policy', enc('p')))).toBe('NoSuchBucket');
  });

  it('peers are told on every change, and see it once they drop their cached copy', async () => {
    const l = fx.layer;
    await l.makeBucket('shared');
    // A second layer over the same drives stands for another node.
    const peer = await fx.peer();
    try {
      expect(await peer.getBucketConfig('shared', 'cors')).toBeUndefined();
      changed.length = 0;
      await l.setBucketConfig('shared', 'cors', enc('<CORSConfiguration/>'));
      expect(changed).toEqual(['shared']);
      // Cached on the peer until it is told to forget.
      expect(await peer.getBucketConfig('shared', 'cors')).toBeUndefined();
      peer.forgetBucket('shared');
      expect(dec(await peer.getBucketConfig('shared', 'cors'))).toBe('<CORSConfiguration/>');
      await l.setBucketConfig('shared', 'cors', undefined);
      expect(changed).toEqual(['shared', 'shared']);
    } finally {
      await peer.close();
    }
  });
});
