/**
 * The node's background jobs are registered with one supervisor, and it
 * lists every one of them with its state: the healing composition a node
 * starts (`background/healing.ts`) over a real engine on temp-dir drives.
 * Started in dependency order, each job's worker runs; after close every one
 * reports stopped.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type Healing, startHealing } from '../src/background/healing.ts';
import { systemClock } from '../src/util/clock.ts';
import { silentLogger } from '../src/util/logger.ts';
import { makePoolsFixture, type PoolsFixture } from './helpers/pools-fixture.ts';

let fx: PoolsFixture | undefined;
let healing: Healing | undefined;
afterEach(async () => {
  await healing?.close();
  await fx?.cleanup();
  healing = undefined;
  fx = undefined;
});

describe('background jobs under the supervisor', () => {
  it('lists every registered job with its state, in dependency order, and stops them all', async () => {
    fx = await makePoolsFixture([{ drives: 4, standardParity: 2 }]);
    await fx.layer.makeBucket('b');
    healing = await startHealing({
      layer: fx.layer,
      clock: systemClock,
      logger: silentLogger,
      config: { scannerIntervalMs: 60_000, scannerSpeed: 'fastest', scannerDeepSample: 0, healSpeed: 'fastest', orphanAgeMs: 3_600_000 },
      node: '127.0.0.1:9000',
      nodeIndex: 0,
      scans: () => true,
    });
    const jobs = healing.jobs.list();
    expect(jobs.map((j) => [j.name, j.after])).toEqual([
      ['heal-background', []],
      ['heal-sequences', []],
      ['drive-monitor', ['heal-sequences']],
      ['scanner', ['heal-background', 'drive-monitor']],
    ]);
    expect(healing.jobs.order().map((j) => j.name)).toEqual(['heal-background', 'heal-sequences', 'drive-monitor', 'scanner']);
    for (const j of jobs) {
      expect(j.description.length).toBeGreaterThan(0);
      expect(['running', 'idle']).toContain(j.state);
    }
    // Each loop job reports its own worker; no root heal runs, so the sequences job has none.
    expect(jobs.map((j) => j.workers.map((w) => w.name))).toEqual([['background-heal'], [], ['drive-monitor'], ['scanner']]);

    await healing.close();
    expect(healing.jobs.list().map((j) => [j.name, j.state])).toEqual([
      ['heal-background', 'stopped'],
      ['heal-sequences', 'stopped'],
      ['drive-monitor', 'stopped'],
      ['scanner', 'stopped'],
    ]);
  });
});
