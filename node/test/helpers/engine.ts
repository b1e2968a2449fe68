/**
 * The real storage engine for S3 integration tests: LocalDrives on
 * directories under `root`, one erasure set, `createObjectLayer`.
 */
import { randomUUID } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { createObjectLayer } from '../../src/object/index.ts';
import type { ObjectLayer } from '../../src/object/types.ts';
import { LocalDrive } from '../../src/storage/local-drive.ts';
import { systemClock } from '../../src/util/clock.ts';
import { silentLogger } from '../../src/util/logger.ts';

export interface EngineOptions {
  drives: number;
  standardParity: number;
  rrsParity: number;
}

export async function buildEngine(root: string, o: EngineOptions): Promise<ObjectLayer> {
  const drives: LocalDrive[] = [];
  for (let i = 0; i < o.drives; i++) {
    const dir = join(root, `d${i}`);
    await mkdir(dir);
    const d = new LocalDrive(dir);
    await d.init();
    drives.push(d);
  }
  return createObjectLayer({
    deploymentId: randomUUID(),
    pools: [{ cmdline: `${root}/d{0...${o.drives - 1}}`, sets: [drives], standardParity: o.standardParity, rrsParity: o.rrsParity }],
    logger: silentLogger,
    clock: systemClock,
  });
}
