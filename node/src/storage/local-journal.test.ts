/**
 * The version journal's commit of a new inline object without a read first
 * (`renameData` publishing only if absent) against the read-merge-publish it
 * stands for, on real files with the real addon's jobs, counted.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { version } from '../../test/drive-conformance.ts';
import { nativeAddon } from '../erasure/native.ts';
import { silentLogger } from '../util/logger.ts';
import { type FileVersion, SYS_VOL, TMP_DIR, XL_META } from './drive.ts';
import { DriveFs, type FileJobs } from './local-fs.ts';
import { VersionJournal } from './local-journal.ts';
import { decodeXlMeta } from './xl-meta.ts';

const real = nativeAddon!;

/** An inline version (the conformance suite's version, its data in the journal). */
const inline = (over: Partial<FileVersion> = {}): FileVersion => version({ dataDir: '', inline: true, inlineData: new Uint8Array([1, 2, 3]), size: 3, ...over });

/** The real jobs, each read and each publish item (with its noReplace flag) recorded; `refuse` answers noReplace items EINVAL as a file system without it would. */
function counted(opts: { noReplace: boolean; refuse?: boolean }) {
  const reads: string[] = [];
  const publishes: { dst: string; noReplace: boolean }[] = [];
  const jobs: FileJobs = {
    fileRead: real.fileRead,
    fileWriteDurable: real.fileWriteDurable,
    fileSyncDir: real.fileSyncDir,
    fileReadBatch: (paths, cb) => {
      reads.push(...paths);
      real.fileReadBatch(paths, cb);
    },
    fileWriteDurableBatch: (items, cb) => {
      for (const it of items) publishes.push({ dst: it[1], noReplace: it[5] === true });
      if (!opts.refuse) return real.fileWriteDurableBatch!(items, cb);
      const einval = Object.assign(new Error('EINVAL: invalid argument, rename'), { code: 'EINVAL', errno: -22, syscall: 'rename' });
      const rest = items.filter((it) => it[5] !== true);
      if (rest.length === 0) return cb(null, items.map(() => einval));
      real.fileWriteDurableBatch!(rest, (err, results) => {
        if (err) return cb(err);
        let k = 0;
        cb(null, items.map((it) => (it[5] === true ? einval : results![k++]!)));
      });
    },
    ...(opts.noReplace ? { fileWriteNoReplace: true } : {}),
  };
  return { jobs, reads, publishes };
}

const roots: string[] = [];
afterEach(async () => {
  for (const r of roots.splice(0)) await rm(r, { recursive: true, force: true });
});

async function journalOn(jobs: FileJobs) {
  const root = await mkdtemp(join(tmpdir(), 'svc-journal-'));
  roots.push(root);
  await mkdir(join(root, SYS_VOL, TMP_DIR), { recursive: true });
  await mkdir(join(root, 'bkt'));
  const fs = new DriveFs(root, 'e', silentLogger, jobs);
  const read = async (key: string) => decodeXlMeta(await readFile(join(root, 'bkt', key, XL_META)));
  return { root, fs, journal: new VersionJournal(fs), read };
}

const commit = (j: VersionJournal, v: FileVersion, key: string) => j.renameData(SYS_VOL, `${TMP_DIR}/${randomUUID()}`, v, 'bkt', key);

describe('VersionJournal.renameData of an inline version', () => {
  it('commits a new object with one publish that refuses to replace, and no read', async () => {
    const { jobs, reads, publishes } = counted({ noReplace: true });
    const { journal, read, root } = await journalOn(jobs);
    const v = inline();
    expect(await commit(journal, v, 'photos/new-key')).toEqual({});
    expect(reads).toEqual([]);
    expect(publishes).toEqual([{ dst: join(root, 'bkt', 'photos/new-key', XL_META), noReplace: true }]);
    expect((await read('photos/new-key')).map((x) => x.versionId)).toEqual([v.versionId]);
    expect(await readdir(join(root, SYS_VOL, TMP_DIR))).toEqual([]);
  });

  it('an object that has a journal here is read and merged as before, with the same results as without the shortcut', async () => {
    const fast = counted({ noReplace: true });
    const plain = counted({ noReplace: false });
    const a = await journalOn(fast.jobs);
    const b = await journalOn(plain.jobs);
    const v1 = inline({ modTime: 1 });
    const v2 = inline({ modTime: 2 });
    // the same version id again (an unversioned overwrite): the replaced copy is kept as superseded
    const v2again = { ...v2, inlineData: new Uint8Array([9]), modTime: 3 };
    const out: [unknown, unknown][] = [];
    for (const v of [v1, v2, v2again]) out.push([await commit(a.journal, v, 'k'), await commit(b.journal, v, 'k')]);
    for (const [x, y] of out) expect(x).toEqual(y);
    expect(out[2]![0]).toMatchObject({ replaced: { versionId: v2.versionId } });
    expect(await a.read('k')).toEqual(await b.read('k'));
    expect((await a.read('k')).length).toBe(3);
    // the first commit went without a read; the later ones tried, found the journal (EEXIST), then read
    expect(fast.publishes.map((p) => p.noReplace)).toEqual([true, true, false, true, false]);
    expect(fast.reads).toHaveLength(2);
    expect(plain.publishes.every((p) => !p.noReplace)).toBe(true);
    expect(plain.reads).toHaveLength(3);
    expect(await readdir(join(a.root, SYS_VOL, TMP_DIR))).toEqual([]);
  });

  it('a key with a UUID segment is read first (a data folder of an object above must be refused)', async () => {
    const { jobs, reads, publishes } = counted({ noReplace: true });
    const { journal } = await journalOn(jobs);
    await commit(journal, inline(), `a/${randomUUID()}/b`);
    expect(reads.length).toBeGreaterThan(0);
    expect(publishes.every((p) => !p.noReplace)).toBe(true);
  });

  it('a file system that cannot refuse a replacing rename: the commit still lands (read, merge, publish) and the drive stops asking', async () => {
    const { jobs, reads, publishes } = counted({ noReplace: true, refuse: true });
    const { journal, read, fs } = await journalOn(jobs);
    const v1 = inline({ modTime: 1 });
    expect(await commit(journal, v1, 'k1')).toEqual({});
    expect(fs.noReplaceRefused).toBe(true);
    expect(fs.canPublishIfAbsent).toBe(false);
    const v2 = inline({ modTime: 2 });
    expect(await commit(journal, v2, 'k2')).toEqual({});
    expect(publishes.map((p) => p.noReplace)).toEqual([true, false, false]);
    expect(reads).toHaveLength(2);
    expect((await read('k1')).map((x) => x.versionId)).toEqual([v1.versionId]);
    expect((await read('k2')).map((x) => x.versionId)).toEqual([v2.versionId]);
  });
});
