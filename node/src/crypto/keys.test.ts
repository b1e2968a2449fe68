import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { keyedEtag, newObjectKey, partKey, sealKey, unsealKey } from './keys.ts';
import { LocalKms, parseKeys, plainKeyId } from './kms.ts';

describe('object key sealing', () => {
  it('opens only with the same key-encryption key and binding', () => {
    const kek = randomBytes(32);
    const ok = newObjectKey();
    const sealed = sealKey(kek, ok, 'S3\0k1\0\0b/obj');
    expect(unsealKey(kek, sealed, 'S3\0k1\0\0b/obj')).toEqual(ok);
    expect(unsealKey(randomBytes(32), sealed, 'S3\0k1\0\0b/obj')).toBeUndefined();
    expect(unsealKey(kek, sealed, 'S3\0k1\0\0b/other')).toBeUndefined();
    const raw = Buffer.from(sealed, 'base64');
    raw[40]! ^= 1;
    expect(unsealKey(kek, raw.toString('base64'), 'S3\0k1\0\0b/obj')).toBeUndefined();
    expect(sealKey(kek, ok, 'x')).not.toBe(sealKey(kek, ok, 'x'));
  });

  it('derives distinct part keys and a keyed ETag that is not the MD5', () => {
    const ok = newObjectKey();
    expect(partKey(ok, 1).equals(partKey(ok, 2))).toBe(false);
    const md5 = 'd41d8cd98f00b204e9800998ecf8427e';
    const e = keyedEtag(ok, md5);
    expect(e).toMatch(/^[0-9a-f]{32}$/);
    expect(e).not.toBe(md5);
    expect(keyedEtag(ok, md5)).toBe(e);
  });
});

describe('local key store', () => {
  const k1 = randomBytes(32).toString('base64');
  const k2 = randomBytes(32).toString('base64');

  it('parses key lines; the first is the default', () => {
    const p = parseKeys(`# keys\nmy-key:${k1}\n\narn:aws:kms:us-east-1:1:key/second:${k2}\n`, 'file');
    expect(p.defaultKeyId).toBe('my-key');
    expect([...p.keys.keys()]).toEqual(['my-key', 'arn:aws:kms:us-east-1:1:key/second']);
    expect(() => parseKeys('nokey', 'SVC_KMS_SECRET_KEY')).toThrow(/expected <key-id>/);
    expect(() => parseKeys(`a:${Buffer.alloc(16).toString('base64')}`, 'x')).toThrow(/16 bytes/);
    expect(() => parseKeys(`a:${k1}\na:${k2}`, 'x')).toThrow(/twice/);
    expect(() => parseKeys('# nothing', 'x')).toThrow(/no key/);
    expect(plainKeyId('arn:aws:kms:us-east-1:123:key/abc')).toBe('abc');
    expect(plainKeyId('alias/abc')).toBe('abc');
  });

  it('a file store is not ready until its file reads, keeps its keys when a later read fails', async () => {
    let content: string | undefined;
    const kms = new LocalKms({
      secretKeyFile: '/keys',
      readFile: async () => {
        if (content === undefined) throw Object.assign(new Error('no such file'), { code: 'ENOENT' });
        return content;
      },
      now: () => 5,
    });
    expect(kms.ready()).toBe(false);
    expect(await kms.reload()).toBe(false);
    expect(kms.status()).toMatchObject({ ready: false, source: 'file', lastError: expect.stringContaining('ENOENT') });
    expect(() => kms.defaultKey()).toThrow(expect.objectContaining({ code: 'XSvcKMSNotReady' }));
    content = `main:${k1}\nother:${k2}`;
    expect(await kms.reload()).toBe(true);
    expect(kms.defaultKey().id).toBe('main');
    expect(kms.key('arn:aws:kms:r:a:key/other').key).toEqual(Buffer.from(k2, 'base64'));
    expect(() => kms.key('nope')).toThrow(expect.objectContaining({ code: 'KMS.NotFoundException' }));
    content = 'garbage';
    expect(await kms.reload()).toBe(true);
    expect(kms.status()).toMatchObject({ ready: true, keyIds: ['main', 'other'], lastError: expect.stringContaining('key id') });
  });

  it('a key given directly is ready at once; both or neither source is refused', () => {
    expect(new LocalKms({ secretKey: `k:${k1}`, readFile: async () => '', now: () => 0 }).ready()).toBe(true);
    expect(() => new LocalKms({ readFile: async () => '', now: () => 0 })).toThrow();
    expect(() => new LocalKms({ secretKey: `k:${k1}`, secretKeyFile: '/f', readFile: async () => '', now: () => 0 })).toThrow();
  });
});
