/**
 * Run under strace by `commit-batch.test.ts`: `KEYS` concurrent commits of
 * new inline objects below `bucket/prefix/` on one drive at `argv[2]`,
 * through the native file jobs as the server uses them. After each commit
 * resolves, an `access` of `<root>/ack-k<i>` puts a marker into the trace.
 */
import { accessSync } from 'node:fs';
import { join } from 'node:path';
import { nativeAddon } from '../../src/erasure/native.ts';
import { type FileVersion, SYS_VOL, TMP_DIR } from '../../src/storage/drive.ts';
import { DriveFs } from '../../src/storage/local-fs.ts';
import { VersionJournal } from '../../src/storage/local-journal.ts';
import { silentLogger } from '../../src/util/logger.ts';
import { version } from '../drive-conformance.ts';

const root = process.argv[2]!;
const keys = Number(process.argv[3]);
if (!nativeAddon) throw new Error('the native addon is not built');
const journal = new VersionJournal(new DriveFs(root, 'trace-drive', silentLogger, nativeAddon));
const inline = (i: number): FileVersion =>
  version({ versionId: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, dataDir: '', inline: true, inlineData: new Uint8Array([i]), size: 1 });
await Promise.all(
  Array.from({ length: keys }, (_, i) =>
    journal.renameData(SYS_VOL, `${TMP_DIR}/stage-${i}`, inline(i), 'bucket', `prefix/k${i}`).then(() => {
      try {
        accessSync(join(root, `ack-k${i}`));
      } catch {
        // The marker file does not exist: the call is only there to be traced.
      }
    }),
  ),
);
