/**
 * `svc_start_total`: process starts of this node, persisted so the counter
 * keeps rising across restarts (a per-process counter would read 1 after
 * every restart and `increase()` would never see a crash loop).
 *
 * The count lives in `.svc.sys/node-starts.json` on the first of this node's
 * local drives that takes the write, beside `format.json` (drive-local state,
 * never an object). It is bumped in start-up step 2, once the local drive
 * roots are known to exist, so starts that fail later (format quorum, a
 * layout mismatch) are counted too. A drive that refuses the write costs
 * nothing but a warning: the node then reports 1 for this process.
 */
import { randomUUID } from 'node:crypto';
import { constants } from 'node:fs';
import { mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { SYS_VOL } from '../storage/drive.ts';
import { type ProcessStartMessage, processStart } from '../util/diagnostics.ts';
import type { Logger } from '../util/logger.ts';

export const START_COUNT_FILE = 'node-starts.json';

interface StartCountRecord {
  /** Process starts so far, the latest included. */
  starts: number;
}

async function bump(root: string): Promise<number> {
  const dir = join(root, SYS_VOL);
  const file = join(dir, START_COUNT_FILE);
  let previous = 0;
  try {
    const rec = JSON.parse(await readFile(file, 'utf8')) as Partial<StartCountRecord>;
    if (Number.isSafeInteger(rec.starts) && rec.starts! > 0) previous = rec.starts!;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT' && !(err instanceof SyntaxError)) throw err;
  }
  const starts = previous + 1;
  await mkdir(dir, { recursive: true });
  const tmp = `${file}.tmp-${randomUUID()}`;
  try {
    const fh = await open(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o644);
    try {
      await fh.writeFile(`${JSON.stringify({ starts } satisfies StartCountRecord)}\n`);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, file);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
  return starts;
}

/** Counts this process start on the first local drive root that takes it; publishes `svc:process:start`. */
export async function countStart(roots: readonly string[], log: Logger): Promise<number> {
  let starts = 1;
  for (const root of roots) {
    try {
      starts = await bump(root);
      break;
    } catch (err) {
      log.warn({ event: 'start_count_failed', drive: root, err: String(err) }, 'could not record the process start on this drive');
    }
  }
  if (processStart.hasSubscribers) processStart.publish({ starts } satisfies ProcessStartMessage);
  return starts;
}
