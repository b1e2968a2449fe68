import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalDrive } from '../src/storage/local-drive.ts';
import { runDriveConformance } from './drive-conformance.ts';

runDriveConformance('LocalDrive', async () => {
  const root = await mkdtemp(join(tmpdir(), 'svc-drive-local-'));
  const drive = new LocalDrive(root);
  await drive.init();
  return {
    drive,
    cleanup: async () => {
      await drive.flush();
      await rm(root, { recursive: true, force: true });
    },
  };
});
