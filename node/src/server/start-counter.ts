/**
 * `svc_start_total`: process starts of this node, persisted so the counter
 * keeps rising across restarts (a per-process counter would read 1 after
 * every restart and `increase()` would never see a crash loop).
 *
 * The count lives in `.svc.sys/node-starts.json` on the node's local drives,
 * beside `format.json` (drive-local state, never an object). A start reads
 * every drive, counts on from the highest, and writes the new count (fsync'd,
 * renamed into place) to each drive that already has a `.svc.sys` folder, or
 * to the first drive when none has one yet (a new deployment). Drives this
 * node never used stay untouched (a start refused for a layout mismatch
 * leaves them as they were), and replacing any drive, the first one
 * included, keeps the count: the others carry it, and the new drive takes it
 * at the first start after it was formatted.
 * It is bumped in start-up step 2, once the local drive roots are known to
 * exist, so starts that fail later (format quorum, a layout mismatch) are
 * counted too. A drive that cannot be read or written costs a warning; with
 * no drive taking the write the count is still reported for this process.
 */
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { SYS_VOL } from '../storage/drive.ts';
import { writeSysFile } from '../storage/format.ts';
import { type ProcessStartMessage, processStart } from '../util/diagnostics.ts';
import type { Logger } from '../util/logger.ts';

export const START_COUNT_FILE = 'node-starts.json';

interface StartCountRecord {
  /** Process starts so far, the latest included. */
  starts: number;
}

/** The count on `root`, 0 when it has none (or an unreadable record, which the next write replaces). */
async function readCount(root: string): Promise<number> {
  try {
    const rec = JSON.parse(await readFile(join(root, SYS_VOL, START_COUNT_FILE), 'utf8')) as Partial<StartCountRecord>;
    return Number.isSafeInteger(rec.starts) && rec.starts! > 0 ? rec.starts! : 0;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || err instanceof SyntaxError) return 0;
    throw err;
  }
}

function writeCount(root: string, starts: number): Promise<void> {
  return writeSysFile(root, START_COUNT_FILE, `${JSON.stringify({ starts } satisfies StartCountRecord)}\n`);
}

/** Counts this process start on the node's local drive roots; publishes `svc:process:start`. */
export async function countStart(roots: readonly string[], log: Logger): Promise<number> {
  const warn = (root: string, err: unknown, what: string) => log.warn({ event: 'start_count_failed', drive: root, err: String(err) }, what);
  // One look per drive: is it in use (has its .svc.sys folder), and what count does it hold.
  const drives = await Promise.all(
    roots.map(async (root) => {
      const used = (await stat(join(root, SYS_VOL)).catch(() => undefined))?.isDirectory() === true;
      const starts = used
        ? await readCount(root).catch((err: unknown) => {
            warn(root, err, 'could not read the start count on this drive');
            return 0;
          })
        : 0;
      return { root, used, starts };
    }),
  );
  const starts = Math.max(0, ...drives.map((d) => d.starts)) + 1;
  const used = drives.filter((d) => d.used).map((d) => d.root);
  const targets = used.length > 0 ? used : roots.slice(0, 1);
  await Promise.all(
    targets.map((root) =>
      writeCount(root, starts).catch((err: unknown) => {
        warn(root, err, 'could not record the process start on this drive');
      }),
    ),
  );
  if (processStart.hasSubscribers) processStart.publish({ starts } satisfies ProcessStartMessage);
  return starts;
}
