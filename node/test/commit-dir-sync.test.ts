/**
 * The durability order of a new object's commit on one drive, with its
 * directory fsyncs shared between concurrent commits (`DirSyncGroups`):
 * the commit (what the object layer counts toward write quorum) resolves
 * only after an fsync of the directory its new object directory was made
 * in, and only one that *started after* that directory entry existed. A
 * test-side decorator around the drive's file jobs (native path) or its
 * directory fsync (node:fs path) logs every step in order and holds the
 * first shared fsync open until every commit has renamed its `xl.meta` in,
 * so the later commits must wait for a second fsync rather than ride on the
 * one already running. (Natively, a publish with no other one into the same
 * directory in flight syncs every directory in its own job.)
 */
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { nativeAddon } from '../src/erasure/native.ts';
import { type FileVersion, SYS_VOL, TMP_DIR, XL_META } from '../src/storage/drive.ts';
import { DriveFs, type FileJobs } from '../src/storage/local-fs.ts';
import { VersionJournal } from '../src/storage/local-journal.ts';
import { decodeXlMeta } from '../src/storage/xl-meta.ts';
import { silentLogger } from '../src/util/logger.ts';
import { version } from './drive-conformance.ts';

const KEYS = 16;

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-commit-dir-sync-'));
  await mkdir(join(root, SYS_VOL, TMP_DIR), { recursive: true });
  await mkdir(join(root, 'bucket', 'prefix'), { recursive: true });
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

/** Holds the first fsync of `dir` until released; logs starts and ends. */
class Gate {
  readonly log: string[] = [];
  #held = false;
  #release: (() => void) | undefined;
  readonly #dir: string;

  constructor(dir: string) {
    this.#dir = dir;
  }

  async around(dir: string, fsync: () => Promise<void>): Promise<void> {
    this.log.push(`sync-start ${dir}`);
    if (dir === this.#dir && !this.#held) {
      this.#held = true;
      await new Promise<void>((r) => (this.#release = r));
    }
    try {
      await fsync();
    } finally {
      this.log.push(`sync-end ${dir}`);
    }
  }

  release(): void {
    this.#release?.();
  }
}

/**
 * The drive's real file jobs, each step logged; the shared directory fsyncs
 * pass through `gate`. The first publish's callback waits until all `KEYS`
 * publishes were handed to the jobs, so every later one has another in
 * flight and leaves its parent directory's fsync to the shared one (the first
 * had none in flight, so its job syncs every directory itself).
 */
function recordingJobs(real: FileJobs, gate: Gate): FileJobs {
  const write = real.fileWriteDurable as (...a: unknown[]) => void;
  let calls = 0;
  let releaseFirst: (() => void) | undefined;
  return {
    fileRead: (path, cb) => real.fileRead(path, cb),
    fileWriteDurable: ((...args: unknown[]) => {
      const first = calls++ === 0;
      if (calls === KEYS) releaseFirst?.();
      const cb = args.at(-1) as (err: NodeJS.ErrnoException | null, top?: string | null) => void;
      write(...args.slice(0, -1), (err: NodeJS.ErrnoException | null, top?: string | null) => {
        const report = () => {
          if (!err) gate.log.push(`${top ? 'published' : 'published-self'} ${String(args[1])}`);
          cb(err, top);
        };
        if (first && calls < KEYS) releaseFirst = report;
        else report();
      });
    }) as FileJobs['fileWriteDurable'],
    fileSyncDir: (dir, cb) => {
      gate.around(dir, () => new Promise<void>((res, rej) => real.fileSyncDir!(dir, (e) => (e ? rej(e) : res())))).then(
        () => cb(null),
        (e: NodeJS.ErrnoException) => cb(e),
      );
    },
  };
}

/** The node:fs path's directory fsync, logged; the object directory's own fsync (after the rename) marks the publish. */
class RecordingFs extends DriveFs {
  readonly gate: Gate;

  constructor(gate: Gate) {
    super(root, 'test-drive', silentLogger, undefined);
    this.gate = gate;
  }

  override async fsyncDir(dir: string): Promise<void> {
    if (dir.startsWith(join(root, 'bucket', 'prefix') + '/')) {
      await super.fsyncDir(dir);
      this.gate.log.push(`published ${join(dir, XL_META)}`);
      return;
    }
    await this.gate.around(dir, () => super.fsyncDir(dir));
  }
}

function inline(i: number): FileVersion {
  return version({ versionId: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, dataDir: '', inline: true, inlineData: new Uint8Array([i]), size: 1 });
}

async function until(cond: () => boolean): Promise<void> {
  const end = Date.now() + 20_000;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not reached in 20 s');
    await new Promise((r) => setTimeout(r, 5));
  }
}

/**
 * 16 concurrent commits of new inline objects under bucket/prefix/; every
 * step's order checked. `selfSynced`: how many publishes synced every
 * directory in their own job (they have no shared fsync to wait for).
 */
async function commitsInOrder(fs: DriveFs, gate: Gate, selfSynced: number): Promise<void> {
  const journal = new VersionJournal(fs);
  const prefixDir = join(root, 'bucket', 'prefix');
  const acks = Array.from({ length: KEYS }, (_, i) =>
    journal.renameData(SYS_VOL, `${TMP_DIR}/stage-${i}`, inline(i), 'bucket', `prefix/k${i}`).then(() => gate.log.push(`ack k${i}`)),
  );
  // Every commit has its xl.meta in place while the first shared fsync is still held open.
  await until(() => gate.log.filter((e) => e.startsWith('published')).length === KEYS);
  // Only a commit whose own job synced every directory may have resolved yet.
  const selfKeys = gate.log.filter((e) => e.startsWith('published-self')).map((e) => `ack ${e.split('/').at(-2)!}`);
  expect(gate.log.filter((e) => e.startsWith('ack') && !selfKeys.includes(e))).toEqual([]);
  gate.release();
  await Promise.all(acks);

  const log = gate.log;
  const syncs: { start: number; end: number }[] = [];
  log.forEach((e, i) => {
    if (e === `sync-start ${prefixDir}`) syncs.push({ start: i, end: log.indexOf(`sync-end ${prefixDir}`, i) });
  });
  expect(log.filter((e) => e.startsWith('published-self'))).toHaveLength(selfSynced);
  for (let i = 0; i < KEYS; i++) {
    const dst = join(prefixDir, `k${i}`, XL_META);
    const meta = decodeXlMeta(await readFile(dst));
    expect(meta.map((v) => v.versionId)).toEqual([inline(i).versionId]);
    if (log.includes(`published-self ${dst}`)) continue;
    const published = log.indexOf(`published ${dst}`);
    const ack = log.indexOf(`ack k${i}`);
    expect(published).toBeGreaterThanOrEqual(0);
    // A shared fsync of the prefix directory that started after this commit's
    // directory entry existed, and ended before the commit resolved.
    const covering = syncs.filter((s) => s.start > published && s.end >= 0 && s.end < ack);
    expect(covering, `k${i}: ${log.join(' | ')}`).not.toEqual([]);
  }
  // The other commits, two fsyncs of their shared directory: the held one and the one after it.
  expect(syncs).toHaveLength(2);
}

describe('a new object commit waits for a directory fsync that started after its rename', () => {
  it.runIf(typeof nativeAddon?.fileSyncDir === 'function')('native file jobs', async () => {
    const gate = new Gate(join(root, 'bucket', 'prefix'));
    await commitsInOrder(new DriveFs(root, 'test-drive', silentLogger, recordingJobs(nativeAddon!, gate)), gate, 1);
  });

  it('node:fs', async () => {
    const gate = new Gate(join(root, 'bucket', 'prefix'));
    await commitsInOrder(new RecordingFs(gate), gate, 0);
  });
});
