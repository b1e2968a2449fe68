import { spawnSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { constants, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { mkdtemp, open, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { nativeAddon } from '../src/erasure/native.ts';
import { LocalDrive } from '../src/storage/local-drive.ts';
import { SYS_VOL } from '../src/storage/drive.ts';
import { runDriveConformance, version } from './drive-conformance.ts';
import { canMountTmpfs, mountTmpfs, unmountTmpfs } from './helpers/tmpfs.ts';

// Both ways a local drive reads and publishes whole files: the native pool
// jobs (native/fileio.c, the default when the addon is built) with O_DIRECT
// shard files (also the default), and node:fs with page-cache shard files.
for (const nativeFiles of [true, false]) {
  runDriveConformance(`LocalDrive (${nativeFiles ? 'native file jobs, O_DIRECT shard files' : 'node:fs, buffered shard files'})`, async () => {
    const root = await mkdtemp(join(tmpdir(), 'svc-drive-local-'));
    const drive = new LocalDrive(root, { nativeFiles, directIo: nativeFiles });
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

/** Whether this process holds `path` open with O_DIRECT (its flags in /proc/self/fdinfo, octal); undefined when it is not open. */
function openWithDirect(path: string): boolean | undefined {
  for (const fd of readdirSync('/proc/self/fd')) {
    let target: string;
    try {
      target = readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      continue;
    }
    if (target !== path) continue;
    const flags = /^flags:\s+([0-7]+)/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'));
    return flags !== null && (Number.parseInt(flags[1]!, 8) & constants.O_DIRECT) !== 0;
  }
  return undefined;
}

describe.skipIf(process.platform !== 'linux' || typeof nativeAddon?.alignOffset !== 'function')('LocalDrive O_DIRECT shard files', () => {
  const MiB = 1 << 20;
  it('writes large files with O_DIRECT and reads them back byte-exact, every size around the 4 KiB alignment, any range', async () => {
    const root = await mkdtemp(join(tmpdir(), 'svc-drive-direct-'));
    try {
      const drive = new LocalDrive(root);
      await drive.init();
      const sizes = [MiB, MiB + 1, MiB + 4095, MiB + 4096, MiB + 4097, 3 * MiB + 7, 5 * MiB - 4096];
      for (const size of sizes) {
        const data = randomBytes(size);
        const path = `tmp/direct-${size}`;
        let seenDirect: boolean | undefined;
        // Odd pieces, as frames and sockets give them; the file is checked while it is being written.
        async function* pieces(): AsyncGenerator<Uint8Array> {
          for (let off = 0, i = 0; off < size; i++) {
            const n = Math.min([524_296, 65_536, 1, 777_777][i % 4]!, size - off);
            yield data.subarray(off, off + n);
            off += n;
            if (seenDirect === undefined) seenDirect = openWithDirect(join(root, SYS_VOL, path));
          }
        }
        await drive.createFile(SYS_VOL, path, size, pieces());
        expect(seenDirect).toBe(true);
        const onDisk = await readFile(join(root, SYS_VOL, path));
        expect(onDisk.length).toBe(size);
        expect(onDisk.equals(data)).toBe(true);
        // Large reads into reused buffers go through O_DIRECT too, at unaligned offsets and lengths.
        const tail = Math.min(size, MiB + 5);
        for (const [off, len] of [[0, size], [1, size - 1], [4095, MiB + 3], [size - tail, tail]] as const) {
          const got: Buffer[] = [];
          for await (const c of await drive.readFileStream(SYS_VOL, path, off, len, { chunkSize: 524_296, reuse: true })) got.push(Buffer.from(c));
          expect(Buffer.concat(got).equals(data.subarray(off, off + len))).toBe(true);
        }
      }
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it('chunks placed at their file offset within a page are written from where they lie, mixed with staged ones, byte-exact though the producer reuses each chunk once the next is pulled', async () => {
    const root = await mkdtemp(join(tmpdir(), 'svc-drive-direct-placed-'));
    const probe = await open(join(root, 'probe'), 'w');
    const proto = Object.getPrototypeOf(probe) as { writev: (...a: unknown[]) => unknown };
    await probe.close();
    const writev = vi.spyOn(proto, 'writev');
    try {
      const drive = new LocalDrive(root);
      await drive.init();
      const size = 5 * 524_296 + 12_345;
      const data = randomBytes(size);
      const raw = Buffer.allocUnsafeSlow(MiB + 3 * 4096);
      const base = nativeAddon!.alignOffset!(raw, 4096);
      async function* pieces(): AsyncGenerator<Uint8Array> {
        for (let off = 0, i = 0; off < size; i++) {
          const n = Math.min([524_296, 524_296, 65_536, 524_296, 3, 524_296][i % 6]!, size - off);
          // Every third piece off its page place (the staged path); the rest where the file puts them.
          const at = base + (off % 4096) + (i % 3 === 2 ? 1 : 0);
          const piece = raw.subarray(at, at + n);
          piece.set(data.subarray(off, off + n));
          yield piece;
          piece.fill(0xee);
          off += n;
        }
      }
      await drive.createFile(SYS_VOL, 'tmp/placed', size, pieces());
      expect(writev.mock.calls.length).toBeGreaterThanOrEqual(3);
      const onDisk = await readFile(join(root, SYS_VOL, 'tmp/placed'));
      expect(onDisk.length).toBe(size);
      expect(onDisk.equals(data)).toBe(true);
    } finally {
      writev.mockRestore();
      await rm(root, { recursive: true, force: true });
    }
  });

  it('a file of the wrong length is refused and removed, as on the buffered path', async () => {
    const root = await mkdtemp(join(tmpdir(), 'svc-drive-direct-short-'));
    try {
      const drive = new LocalDrive(root);
      await drive.init();
      const data = randomBytes(2 * MiB + 3);
      await expect(
        drive.createFile(SYS_VOL, 'tmp/short', data.length + 1, (async function* () {
          yield data;
        })()),
      ).rejects.toMatchObject({ code: 'IncompleteBody' });
      await expect(readFile(join(root, SYS_VOL, 'tmp/short'))).rejects.toMatchObject({ code: 'ENOENT' });
    } finally {
      await rm(root, { recursive: true, force: true });
    }
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

describe.skipIf(!canMountTmpfs())('LocalDrive on a file system remounted read-only', () => {
  it('says read-only while writes are refused, and stops saying it once the file system takes writes again', async () => {
    const root = await mkdtemp(join(tmpdir(), 'svc-drive-ro-'));
    mountTmpfs(root, 8 << 20);
    try {
      const drive = new LocalDrive(root);
      await drive.init();
      await drive.makeVol('b');
      expect(spawnSync('mount', ['-o', 'remount,ro', root]).status).toBe(0);
      await expect(drive.writeAll('b', 'k/xl.meta', Buffer.from('x'))).rejects.toMatchObject({ code: 'DiskNotFound' });
      expect((await drive.diskInfo()).issues?.map((i) => i.kind)).toContain('read-only');
      expect(spawnSync('mount', ['-o', 'remount,rw', root]).status).toBe(0);
      // Not a minute later: the next probe (readiness, placement, the set's write check) sees it writable.
      expect((await drive.diskInfo()).issues?.map((i) => i.kind) ?? []).not.toContain('read-only');
      await drive.writeAll('b', 'k/xl.meta', Buffer.from('x'));
    } finally {
      unmountTmpfs(root);
      await rm(root, { recursive: true, force: true });
    }
  });
});
