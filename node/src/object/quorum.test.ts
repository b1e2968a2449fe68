import { describe, expect, it } from 'vitest';
import type { FileVersion } from '../storage/drive.ts';
import { supersededId } from '../storage/xl-meta.ts';
import { groupVersions, resolveVersion, type SlotMeta } from './quorum.ts';

function version(over: Partial<FileVersion> = {}): FileVersion {
  return {
    versionId: 'null',
    modTime: 1_700_000_000_000,
    type: 'object',
    dataDir: '',
    erasure: { data: 2, parity: 2, blockSize: 1 << 20, index: 1, distribution: [1, 2, 3, 4] },
    size: 10,
    parts: [{ number: 1, size: 10, etag: 'e', modTime: 1_700_000_000_000 }],
    etag: 'e',
    contentHeaders: { 'content-type': 'text/plain' },
    userMeta: { a: '1' },
    sysMeta: {},
    storageClass: 'STANDARD',
    tags: '',
    checksum: { algorithm: 'CRC32', value: 'AAAAAA==', type: 'FULL_OBJECT' },
    inline: true,
    ...over,
  };
}
const slots = (...vs: FileVersion[]): SlotMeta[] => vs.map((v) => ({ ok: true, versions: [v] }));

describe('the vote picks the most common metadata', () => {
  it('every drive agreeing: one group, all four votes, that metadata', () => {
    const { groups } = groupVersions(slots(version(), version(), version(), version()));
    expect(groups).toHaveLength(1);
    expect(groups[0]!.votes).toBe(4);
    expect(groups[0]!.version.userMeta).toEqual({ a: '1' });
  });

  for (const [what, odd] of [
    ['tags', { tags: 'k=v' }],
    ['user metadata', { userMeta: { a: '2' } }],
    ['user metadata key order', { userMeta: { b: '2', a: '1' } as Record<string, string> }],
    ['content headers', { contentHeaders: { 'content-type': 'image/png' } }],
    ['system metadata', { sysMeta: { 'x-svc-internal-lock-mode': 'GOVERNANCE' } }],
    ['storage class', { storageClass: 'REDUCED_REDUNDANCY' }],
    ['checksum', { checksum: { algorithm: 'CRC32', value: 'BBBBBB==', type: 'FULL_OBJECT' } }],
    ['no checksum', { checksum: undefined }],
  ] as const) {
    it(`one drive's copy differing in ${what} (in slot 0) loses to the other three`, () => {
      const common = version({ userMeta: { a: '1', b: '2' } });
      const oddOne = version({ userMeta: { a: '1', b: '2' }, ...odd });
      const { groups } = groupVersions(slots(oddOne, common, { ...common }, { ...common }));
      expect(groups).toHaveLength(1);
      expect(groups[0]!.votes).toBe(4);
      expect(groups[0]!.version).toBe(groups[0]!.perSlot[1]);
    });
  }

  it('a superseded copy stands for its base id, whether or not the drives agree on its metadata', () => {
    for (const tags of ['', 'k=v']) {
      const copy = version({ versionId: 'v1' });
      const sup = supersededId(copy);
      const res = resolveVersion(slots(version({ versionId: sup, tags }), version({ versionId: sup }), version({ versionId: sup })));
      expect(res.kind).toBe('found');
      if (res.kind === 'found') {
        expect(res.group.version.versionId).toBe('v1');
        expect(res.group.version.tags).toBe('');
      }
    }
  });
});
