import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { nativeAddon } from '../src/erasure/native.ts';
import { LocalDrive } from '../src/storage/local-drive.ts';
import { runDriveConformance } from './drive-conformance.ts';

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
