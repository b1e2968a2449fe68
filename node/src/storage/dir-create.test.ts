import { mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { nativeAddon } from '../erasure/native.ts';
import { silentLogger } from '../util/logger.ts';
import { makeDirsBelow, pathBelow } from './dir-create.ts';
import { type FileVersion, SYS_VOL, TMP_DIR } from './drive.ts';
import { DriveFs, type FileJobs } from './local-fs.ts';
import { VersionJournal } from './local-journal.ts';

/**
 * A DriveFs whose directory fsyncs are recorded, and held while a gate for
 * that directory is closed (a test-side subclass: the production class has
 * no hook). On node:fs every directory fsync goes through `fsyncDir`.
 */
class CountingFs extends DriveFs {
  readonly synced: string[] = [];
  readonly gates = new Map<string, PromiseWithResolvers<void>>();
  readonly waiting = new Set<string>();
  override async fsyncDir(dir: string): Promise<void> {
    const gate = this.gates.get(dir);
    if (gate) {
      this.waiting.add(dir);
      await gate.promise;
    }
    await super.fsyncDir(dir);
    this.synced.push(dir);
  }
}

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-dircreate-'));
  await mkdir(join(root, SYS_VOL, TMP_DIR), { recursive: true });
  await mkdir(join(root, 'vol'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 2000 && !cond(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(cond()).toBe(true);
}

describe('makeDirsBelow', () => {
  it('makes the missing levels, never the floor, and says how many levels up it made', async () => {
    const vol = join(root, 'vol');
    expect(await makeDirsBelow(join(vol, 'a/b/c'), vol)).toBe(3);
    expect(await makeDirsBelow(join(vol, 'a/b/c'), vol)).toBe(0);
    expect(await makeDirsBelow(join(vol, 'a/x/y'), vol)).toBe(2);
    expect(await makeDirsBelow(vol, vol)).toBe(0);
    await expect(makeDirsBelow(join(root, 'novol/a/b'), join(root, 'novol'))).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(stat(join(root, 'novol'))).rejects.toMatchObject({ code: 'ENOENT' });
    expect(pathBelow('/r/v/a/b', '/r/v')).toEqual(['/r/v/a/b', '/r/v/a']);
  });
});

describe('atomicWrite of a deep new key: every new directory and its parent entry fsync’d', () => {
  const deep = 'a/b/c/d/key';
  const expectChain = (synced: string[]) => {
    const vol = join(root, 'vol');
    // the key's directory (the rename) and the parent of each directory made, up to the volume
    for (const d of [deep, 'a/b/c/d', 'a/b/c', 'a/b', 'a']) expect(synced).toContain(join(vol, d));
    expect(synced).toContain(vol);
  };

  it('on node:fs (no addon)', async () => {
    const fs = new CountingFs(root, 'e', silentLogger, undefined);
    await fs.atomicWrite('vol', join(root, 'vol', deep, 'xl.meta'), new Uint8Array([1, 2, 3]));
    expectChain(fs.synced);
    expect(fs.newDirs.pending).toBe(0);
  });

  it('through a commit (renameData) of a version with a data directory, on node:fs and with the addon', async () => {
    for (const jobs of [undefined, nativeAddon ?? undefined]) {
      if (jobs === null) continue;
      const fs = new CountingFs(root, 'e', silentLogger, jobs as FileJobs | undefined);
      const journal = new VersionJournal(fs);
      const stage = join(root, SYS_VOL, TMP_DIR, 'up1');
      await mkdir(join(stage, 'dd1'), { recursive: true });
      await writeFile(join(stage, 'dd1', 'part.1'), 'x');
      const key = `${jobs ? 'n' : 'f'}/${deep}`;
      const version: FileVersion = {
        versionId: 'null',
        modTime: 1,
        type: 'object',
        dataDir: 'dd1',
        size: 1,
        parts: [],
        etag: '',
        contentHeaders: {},
        userMeta: {},
        sysMeta: {},
        storageClass: 'STANDARD',
        tags: '',
        inline: false,
      };
      await journal.renameData(SYS_VOL, `${TMP_DIR}/up1`, version, 'vol', key);
      const vol = join(root, 'vol');
      // the native job syncs the key's directory and its parent itself; every level above goes through fsyncDir
      for (const d of [`${jobs ? 'n' : 'f'}/a/b/c`, `${jobs ? 'n' : 'f'}/a/b`, `${jobs ? 'n' : 'f'}/a`, jobs ? 'n' : 'f']) expect(fs.synced, `${d} (${jobs ? 'addon' : 'node:fs'})`).toContain(join(vol, d));
      expect(fs.synced).toContain(vol);
      await stat(join(vol, key, 'dd1', 'part.1'));
    }
  });
});

describe('a directory another commit made and has not synced yet (mkdir EEXIST or found there)', () => {
  it('the second commit resolves only after the first one synced the shared directories', async () => {
    const fs = new CountingFs(root, 'e', silentLogger, undefined);
    const vol = join(root, 'vol');
    // The first commit makes a/ and a/k1/; the fsync of the volume (a/'s entry) is held.
    const gate = Promise.withResolvers<void>();
    fs.gates.set(vol, gate);
    let firstDone = false;
    const first = fs.atomicWrite('vol', join(vol, 'a/k1/xl.meta'), new Uint8Array([1]), 2).then(() => (firstDone = true));
    await until(() => fs.waiting.has(vol));
    // The second finds a/ there (made by the first, its entry not durable yet), makes a/k2/ and syncs a/k2/ and a/.
    let secondDone = false;
    const second = fs.atomicWrite('vol', join(vol, 'a/k2/xl.meta'), new Uint8Array([2]), 2).then(() => (secondDone = true));
    await until(() => fs.synced.includes(join(vol, 'a/k2')) && fs.synced.includes(join(vol, 'a')));
    await new Promise((r) => setTimeout(r, 50));
    expect(firstDone).toBe(false);
    expect(secondDone).toBe(false);
    gate.resolve();
    await Promise.all([first, second]);
    expect(fs.synced).toContain(vol);
    expect(fs.newDirs.pending).toBe(0);
  });

  it('a directory a commit found existing is let go once its mkdir step returned: a neighbour does not wait for its fsyncs', async () => {
    const fs = new CountingFs(root, 'e', silentLogger, undefined);
    const vol = join(root, 'vol');
    await mkdir(join(vol, 'p'));
    // The first commit makes p/k1/ and is held in the fsync of p/k1/ (its own directory).
    const gate = Promise.withResolvers<void>();
    fs.gates.set(join(vol, 'p/k1'), gate);
    let firstDone = false;
    const first = fs.atomicWrite('vol', join(vol, 'p/k1/xl.meta'), new Uint8Array([1])).then(() => (firstDone = true));
    await until(() => fs.waiting.has(join(vol, 'p/k1')));
    // The second shares p/ (which neither made): it completes while the first is still held.
    await fs.atomicWrite('vol', join(vol, 'p/k2/xl.meta'), new Uint8Array([2]));
    expect(firstDone).toBe(false);
    gate.resolve();
    await first;
    expect(fs.newDirs.pending).toBe(0);
  });

  it('a lone commit into existing directories waits for nothing and holds nothing after', async () => {
    const fs = new CountingFs(root, 'e', silentLogger, undefined);
    await mkdir(join(root, 'vol/p'), { recursive: true });
    await fs.atomicWrite('vol', join(root, 'vol/p/k/xl.meta'), new Uint8Array([1]), 2);
    expect(fs.synced).toEqual([join(root, 'vol/p/k'), join(root, 'vol/p')]);
    expect(fs.newDirs.pending).toBe(0);
  });
});
