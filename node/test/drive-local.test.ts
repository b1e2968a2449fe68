import { randomUUID } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { nativeAddon } from '../src/erasure/native.ts';
import { LocalDrive } from '../src/storage/local-drive.ts';
import { SYS_VOL } from '../src/storage/drive.ts';
import { runDriveConformance, version } from './drive-conformance.ts';

// Both ways a local drive reads and publishes whole files: the native pool
// jobs (native/fileio.c, the default when the addon is built) and node:fs.
for (const nativeFiles of [true, false]) {
  runDriveConformance(`LocalDrive (${nativeFiles ? 'native file jobs' : 'node:fs'})`, async () => {
    const root = await mkdtemp(join(tmpdir(), 'svc-drive-local-'));
    const drive = new LocalDrive(root, { nativeFiles });
    await drive.init();
    return {
      drive,
      cleanup: async () => {
        await drive.flush();
        await rm(root, { recursive: true, force: true });
      },
    };
  });
}

describe('the native file jobs are in use where the addon is built', () => {
  it('the addon exports them (the build in CI includes native/fileio.c)', () => {
    expect(nativeAddon).not.toBeNull();
    expect(typeof nativeAddon!.fileRead).toBe('function');
    expect(typeof nativeAddon!.fileWriteDurable).toBe('function');
  });
});

describe.each([true, false])('LocalDrive whole-file writes (native jobs: %s)', (nativeFiles) => {
  it('formats a wiped drive again (nothing under its root, not even the system volume)', async () => {
    const root = await mkdtemp(join(tmpdir(), 'svc-drive-wiped-'));
    try {
      const drive = new LocalDrive(root, { nativeFiles });
      await drive.writeAll(SYS_VOL, 'format.json', Buffer.from('{"id":"x"}'));
      expect(await readFile(join(root, SYS_VOL, 'format.json'), 'utf8')).toBe('{"id":"x"}');
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it('never brings back a drive whose root is gone: writes fail with DiskNotFound and create nothing', async () => {
    const root = await mkdtemp(join(tmpdir(), 'svc-drive-gone-'));
    const drive = new LocalDrive(root, { nativeFiles });
    await drive.init();
    await drive.makeVol('b');
    await rm(root, { recursive: true, force: true });
    await expect(drive.writeAll(SYS_VOL, 'pool.bin', Buffer.from('x'))).rejects.toMatchObject({ code: 'DiskNotFound' });
    await expect(drive.writeAll('b', 'k/xl.meta', Buffer.from('x'))).rejects.toMatchObject({ code: 'DiskNotFound' });
    const inline = version({ dataDir: '', inline: true, inlineData: new Uint8Array([1]), size: 1 });
    await expect(drive.renameData(SYS_VOL, `tmp/${randomUUID()}`, inline, 'b', 'new-key')).rejects.toMatchObject({ code: 'DiskNotFound' });
    await expect(readdir(root)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('creates every missing level of a deep path inside a volume, never the volume', async () => {
    const root = await mkdtemp(join(tmpdir(), 'svc-drive-deep-'));
    try {
      const drive = new LocalDrive(root, { nativeFiles });
      await drive.init();
      await drive.makeVol('deep');
      const path = `${'a/'.repeat(300)}xl.meta`;
      await drive.writeAll('deep', path, Buffer.from('deep'));
      expect((await drive.readAll('deep', path)).toString()).toBe('deep');
      await drive.deleteVol('deep', true);
      if (nativeFiles) {
        await expect(drive.writeAll('deep', 'k/xl.meta', Buffer.from('x'))).rejects.toMatchObject({ code: 'VolumeNotFound' });
        expect((await readdir(root)).includes('deep')).toBe(false);
      }
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
