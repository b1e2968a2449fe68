import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hasCode } from '../util/errors.ts';
import type { FileVersion } from './drive.ts';
import { decodeXlMeta, encodeXlMeta, MAX_VERSIONS, mergeVersion } from './xl-meta.ts';

function version(id: string, modTime: number, extra: Partial<FileVersion> = {}): FileVersion {
  return {
    versionId: id,
    modTime,
    type: 'object',
    dataDir: 'dd-' + id,
    erasure: { data: 2, parity: 2, blockSize: 1 << 20, index: 3, distribution: [3, 4, 1, 2] },
    size: 5,
    parts: [{ number: 1, size: 5, etag: 'e', modTime }],
    etag: 'abc',
    contentHeaders: { contentType: 'text/plain' },
    userMeta: { a: 'b' },
    sysMeta: {},
    storageClass: 'STANDARD',
    tags: 'k=v',
    inline: false,
    ...extra,
  };
}

describe('xl.meta codec', () => {
  it('round-trips versions, inline data and checksums', () => {
    const vs = [
      version('v2', 2000, { inline: true, dataDir: '', inlineData: new Uint8Array([1, 2, 3]) }),
      version('v1', 1000, { checksum: { algorithm: 'CRC32', value: 'AAAA', type: 'FULL_OBJECT' } }),
      { ...version('dm', 500), type: 'delete' as const, erasure: undefined, parts: [], dataDir: '' },
    ].map((v) => {
      if (v.erasure === undefined) delete (v as Partial<FileVersion>).erasure;
      return v;
    });
    const back = decodeXlMeta(encodeXlMeta(vs));
    expect(back.map((v) => ({ ...v, inlineData: v.inlineData ? [...v.inlineData] : undefined }))).toEqual(
      vs.map((v) => ({ ...v, inlineData: v.inlineData ? [...v.inlineData] : undefined })),
    );
    const noData = decodeXlMeta(encodeXlMeta(vs), false);
    expect(noData[0]!.inlineData).toBeUndefined();
  });

  it('round-trips a 10 000-part version', () => {
    const parts = Array.from({ length: 10_000 }, (_, i) => ({ number: i + 1, size: 5 << 20, etag: `etag${i}`, modTime: i }));
    const v = version('big', 1, { parts, size: parts.length * (5 << 20) });
    const back = decodeXlMeta(encodeXlMeta([v]));
    expect(back[0]!.parts).toEqual(parts);
  });

  it('keeps versions newest first and replaces by id', () => {
    let vs: FileVersion[] = [];
    vs = mergeVersion(vs, version('a', 1)).versions;
    vs = mergeVersion(vs, version('b', 3)).versions;
    vs = mergeVersion(vs, version('c', 2)).versions;
    expect(vs.map((v) => v.versionId)).toEqual(['b', 'c', 'a']);
    const r = mergeVersion(vs, version('c', 4));
    expect(r.replaced?.modTime).toBe(2);
    expect(r.versions.map((v) => v.versionId)).toEqual(['c', 'b', 'a']);
  });

  it('refuses more than MAX_VERSIONS versions', () => {
    const vs = Array.from({ length: MAX_VERSIONS }, (_, i) => version(`v${i}`, i));
    expect(() => mergeVersion(vs, version('x', 1e9))).toThrow(/limit on the number of versions/);
  });

  it('decodes garbage into FileCorrupt, never a crash', () => {
    const good = encodeXlMeta([version('v1', 1, { inline: true, inlineData: new Uint8Array(100).fill(7) })]);
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        try {
          decodeXlMeta(bytes);
          return false;
        } catch (err) {
          return hasCode(err, 'FileCorrupt');
        }
      }),
    );
    fc.assert(
      fc.property(fc.nat(good.length - 1), fc.integer({ min: 1, max: 255 }), (pos, x) => {
        // Bytes 6..7 are the minor version: readers accept any minor by design.
        if (pos === 6 || pos === 7) return true;
        const bad = Uint8Array.from(good);
        bad[pos] = bad[pos]! ^ x;
        try {
          decodeXlMeta(bad);
          return false;
        } catch (err) {
          return hasCode(err, 'FileCorrupt');
        }
      }),
    );
    fc.assert(
      fc.property(fc.nat(good.length - 1), (len) => {
        try {
          decodeXlMeta(good.subarray(0, len));
          return false;
        } catch (err) {
          return hasCode(err, 'FileCorrupt');
        }
      }),
    );
  });
});
