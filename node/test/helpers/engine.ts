/**
 * The real storage engine for S3 integration tests: LocalDrives on
 * directories under `root`, one erasure set, `createObjectLayer`.
 */
import { randomUUID } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Kms } from '../../src/crypto/kms.ts';
import { createObjectLayer, type ServerPools } from '../../src/object/index.ts';
import { LocalDrive } from '../../src/storage/local-drive.ts';
import { type Clock, systemClock } from '../../src/util/clock.ts';
import { silentLogger } from '../../src/util/logger.ts';

export interface EngineOptions {
  drives: number;
  standardParity: number;
  rrsParity: number;
  /** The engine's clock (object times, retention, lifecycle); default the system clock. */
  clock?: Clock;
  /** Key store for SSE-S3 / SSE-KMS. */
  kms?: Kms;
}

export async function buildEngine(root: string, o: EngineOptions): Promise<ServerPools> {
  const drives: LocalDrive[] = [];
  for (let i = 0; i < o.drives; i++) {
    const dir = join(root, `d${i}`);
    await mkdir(dir, { recursive: true });
    const d = new LocalDrive(dir);
    await d.init();
    drives.push(d);
  }
  return createObjectLayer({
    deploymentId: randomUUID(),
    pools: [{ cmdline: `${root}/d{0...${o.drives - 1}}`, sets: [drives], standardParity: o.standardParity, rrsParity: o.rrsParity }],
    logger: silentLogger,
    clock: o.clock ?? systemClock,
    ...(o.kms ? { kms: o.kms } : {}),
  });
}
