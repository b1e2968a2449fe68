import { describe, expect, it } from 'vitest';
import type { FileVersion } from '../../storage/drive.ts';
import { classifySlot, NO_PARITY, planVersion, type SlotRead, voteObject, worse } from './plan.ts';

const N = 4;

function v(over: Partial<FileVersion> = {}): FileVersion {
  return {
    versionId: 'null',
    modTime: 1000,
    type: 'object',
    dataDir: 'dd-1',
    erasure: { data: 2, parity: 2, blockSize: 1 << 20, index: 1, distribution: [1, 2, 3, 4] },
    size: 10,
    parts: [{ number: 1, size: 10, etag: 'e', modTime: 1000 }],
    etag: 'e',
    contentHeaders: {},
    userMeta: {},
    sysMeta: {},
    storageClass: 'STANDARD',
    tags: '',
    inline: false,
    ...over,
  };
}

const j = (...versions: FileVersion[]): SlotRead => ({ kind: 'journal', versions });
const absent: SlotRead = { kind: 'absent' };
const offline: SlotRead = { kind: 'offline' };

describe('voteObject', () => {
  it('a version on every drive is authoritative, nothing else', () => {
    const vote = voteObject([j(v()), j(v()), j(v()), j(v())]);
    expect(vote.authoritative).toHaveLength(1);
    expect(vote).toMatchObject({ stale: [], undecided: [], offline: 0 });
    expect(vote.dangling.copies).toEqual([]);
  });

  it('an older copy a drive kept loses to the version at quorum (stale on that drive)', () => {
    const old = v({ modTime: 500, dataDir: 'old' });
    const vote = voteObject([j(v()), j(v()), j(v()), j(old)]);
    expect(vote.authoritative[0]!.version.dataDir).toBe('dd-1');
    expect(vote.stale).toEqual([{ slot: 3, id: 'null' }]);
  });

  it('a version below quorum for good is dangling; one the offline drives could carry is undecided', () => {
    const gone = v({ versionId: 'a' });
    expect(voteObject([j(gone), absent, absent, absent]).dangling.copies).toEqual([{ slot: 0, id: 'a' }]);
    const maybe = voteObject([j(gone), offline, absent, absent]);
    expect(maybe.undecided).toEqual(['a']);
    expect(maybe.dangling.copies).toEqual([]);
  });

  it('a newer copy the offline drives could still bring to quorum makes the id undecided (never served stale)', () => {
    const newer = v({ modTime: 2000, dataDir: 'new' });
    const vote = voteObject([j(newer), offline, j(v()), j(v())]);
    expect(vote.undecided).toEqual(['null']);
    expect(vote.authoritative).toEqual([]);
  });

  it('a zero-parity version below quorum is never dangling: nothing proves it gone (no-parity)', () => {
    const ec0 = v({ versionId: 'z', erasure: { data: 4, parity: 0, blockSize: 1 << 20, index: 1, distribution: [1, 2, 3, 4] } });
    const vote = voteObject([j(ec0), j(ec0), j(ec0), absent]);
    expect(vote.noParity).toEqual(['z']);
    expect(vote.dangling.copies).toEqual([]);
    expect(vote.authoritative).toEqual([]);
  });

  it('damaged drives (unreadable journal, missing bucket folder) that could make up the quorum leave the id unproven, never dangling', () => {
    const x = v({ versionId: 'x' });
    const corrupt: SlotRead = { kind: 'corrupt' };
    const noVolume: SlotRead = { kind: 'no-volume' };
    const a = voteObject([j(x), corrupt, absent, absent]);
    expect(a.unproven).toEqual(['x']);
    expect(a.dangling.copies).toEqual([]);
    const b = voteObject([j(x), noVolume, absent, absent]);
    expect(b.unproven).toEqual(['x']);
    // Without the damaged drive it is proven: nobody else can hold the second copy.
    expect(voteObject([j(x), absent, absent, absent]).dangling.copies).toEqual([{ slot: 0, id: 'x' }]);
  });

  it('a drive without the bucket folder reads as no-volume, not as a clean "not here"', () => {
    expect(classifySlot({ ok: false, notFound: true, noVolume: true })).toEqual({ kind: 'no-volume' });
    expect(classifySlot({ ok: false, notFound: true })).toEqual({ kind: 'absent' });
  });

  it('delete markers vote with a majority', () => {
    const m = v({ versionId: 'm', type: 'delete', dataDir: '', erasure: undefined, size: 0, parts: [] });
    expect(voteObject([j(m), j(m), absent, absent]).dangling.groups).toHaveLength(1);
    expect(voteObject([j(m), j(m), j(m), absent]).authoritative).toHaveLength(1);
  });

  it('a superseded copy of a crashed commit stands for its version', () => {
    const sup = v({ versionId: 'null~sup~dd-1' });
    const failed = v({ modTime: 3000, dataDir: 'dd-2' });
    const vote = voteObject([j(failed, sup), j(v()), j(v()), absent]);
    expect(vote.authoritative).toHaveLength(1);
    expect(vote.authoritative[0]!.perSlot[0]!.versionId).toBe('null~sup~dd-1');
    expect(vote.stale).toEqual([{ slot: 0, id: 'null' }]);
  });
});

describe('planVersion', () => {
  const reads = [j(v()), j(v()), j(v()), absent];
  const g = () => voteObject(reads).authoritative[0]!;

  it('a drive lacking the version gets data; good drives are sources', () => {
    const p = planVersion(g(), reads, [['ok'], ['ok'], ['ok'], undefined], N);
    expect(p).toMatchObject({ states: ['ok', 'ok', 'ok', 'missing'], dataTargets: [3], metaTargets: [], sources: [0, 1, 2] });
    expect(p.refusal).toBeUndefined();
  });

  it('corrupt or missing parts make a target; offline drives are left alone', () => {
    const rs = [j(v()), j(v()), j(v()), offline];
    const p = planVersion(voteObject(rs).authoritative[0]!, rs, [['corrupt'], ['missing'], ['ok'], undefined], N);
    expect(p.states).toEqual(['corrupt', 'missing', 'ok', 'offline']);
    expect(p.dataTargets).toEqual([0, 1]);
    expect(p.refusal).toMatch(/more shards missing than parity can rebuild: 1 of 4 shards are good, 2 needed/);
    expect(p.dataLost).toBe(false);
  });

  it('the loss is proven when even the offline drives could not make K', () => {
    const rs = [j(v()), j(v()), j(v()), j(v())];
    const p = planVersion(voteObject(rs).authoritative[0]!, rs, [['corrupt'], ['missing'], ['corrupt'], ['ok']], N);
    expect(p.dataLost).toBe(true);
  });

  it('zero parity is refused with the SPEC message, never dangling', () => {
    const z = v({ erasure: { data: 4, parity: 0, blockSize: 1 << 20, index: 1, distribution: [1, 2, 3, 4] } });
    const rs = [j(z), j(z), j(z), j(z)];
    const p = planVersion(voteObject(rs).authoritative[0]!, rs, [['ok'], ['ok'], ['missing'], ['ok']], N);
    expect(p.refusal).toBe(NO_PARITY);
    expect(p.dataLost).toBeUndefined();
    // Intact: nothing to do, nothing refused.
    expect(planVersion(voteObject(rs).authoritative[0]!, rs, [['ok'], ['ok'], ['ok'], ['ok']], N).refusal).toBeUndefined();
  });

  it('stored geometry that does not match the set is refused', () => {
    const odd = v({ erasure: { data: 3, parity: 2, blockSize: 1 << 20, index: 1, distribution: [1, 2, 3, 4, 5] } });
    const rs = [j(odd), j(odd), j(odd), j(odd)];
    expect(planVersion(voteObject(rs).authoritative[0]!, rs, [['ok'], ['ok'], ['ok'], ['ok']], N).refusal).toMatch(/does not match the set of 4 drives/);
  });

  it('outdated metadata over good shards is rewritten, not rebuilt', () => {
    const rs = [j(v({ tags: 'a=1' })), j(v({ tags: 'a=1' })), j(v({ tags: 'a=1' })), j(v())];
    const p = planVersion(voteObject(rs).authoritative[0]!, rs, [['ok'], ['ok'], ['ok'], ['ok']], N);
    expect(p).toMatchObject({ dataTargets: [], metaTargets: [3], sources: [0, 1, 2, 3] });
  });

  it('worse orders drive states offline > corrupt > missing > ok', () => {
    expect(worse('ok', 'missing')).toBe('missing');
    expect(worse('corrupt', 'missing')).toBe('corrupt');
    expect(worse('corrupt', 'offline')).toBe('offline');
  });
});
