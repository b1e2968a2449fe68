/**
 * Healing, composed over one object layer: the engine (`Healer`) and four
 * background jobs under the supervisor (`supervisor.ts`): the background heal
 * of the read-repair queue, the admin heal sequences (persisted root heals
 * resumed), the drive-replacement monitor (it starts rebuild sequences, so it
 * runs after them) and the scanner (it feeds the background heal and asks the
 * monitor to check on each cycle), started in that dependency order and
 * stopped in reverse (a graceful stop persists running root heals). The
 * lifecycle executor rides the scanner as its hook: bucket lifecycle rules
 * are applied on scanner cycles (lag: docs/governance.md).
 */
import type { Clock } from '../util/clock.ts';
import type { HealConfig } from '../util/heal-config.ts';
import { SPEED_TRANQUILITY } from '../util/heal-config.ts';
import type { Logger } from '../util/logger.ts';
import { eventual } from '../util/eventual.ts';
import type { HealingDrives, HealWorker } from '../object/admin/services.ts';
import { LifecycleExecutor } from './lifecycle-executor.ts';
import { Scanner, type ScannerProgress } from './scanner.ts';
import { readUsage, type UsageReport } from '../object/usage.ts';
import type { ServerPools } from '../object/server-pools.ts';
import { BackgroundHeal, type BackgroundHealProgress } from './heal/background.ts';
import { DriveHealer } from './heal/drive-healer.ts';
import { Healer } from './heal/healer.ts';
import { HealSequences } from './heal/sequences.ts';
import { Supervisor, workerJob } from './supervisor.ts';

export interface HealingOptions {
  layer: ServerPools;
  clock: Clock;
  logger: Logger;
  config: HealConfig;
  /** This node (`host:port`) and its index in the cluster's node list (heal tokens, usage records). */
  node: string;
  nodeIndex: number;
  /** True when this node scans `pool`/`set` (the first online node of the set's drives). */
  scans: (pool: number, set: number) => boolean;
}

/** What this node's healing reports to the admin API (aggregated over nodes there). */
export interface LocalHealInfo {
  node: string;
  background: BackgroundHealProgress;
  scanner: ScannerProgress;
  /** Endpoints this node is rebuilding. */
  healing: string[];
  /** Admin heal sequences running on this node. */
  sequences: number;
}

export interface Healing {
  readonly healer: Healer;
  readonly background: BackgroundHeal;
  readonly sequences: HealSequences;
  readonly drives: DriveHealer;
  readonly scanner: Scanner;
  /** Lifecycle rules, applied on the scanner's cycles. */
  readonly lifecycle: LifecycleExecutor;
  /** The admin route's worker ports. */
  readonly healWorker: HealWorker;
  readonly healingDrives: HealingDrives;
  /** The supervisor its jobs are registered with (their order and state). */
  readonly jobs: Supervisor;
  local(): LocalHealInfo;
  /** The data usage the scanners recorded (every node's), merged. */
  usage(): Promise<UsageReport | undefined>;
  /** Stops the supervisor's jobs (with `startHealing`: healing's own). */
  close(): Promise<void>;
}

/** Healing with a supervisor of its own, started (a node registers it with the node's supervisor instead: `registerHealing`). */
export async function startHealing(o: HealingOptions): Promise<Healing> {
  const healing = registerHealing(new Supervisor({ logger: o.logger }), o);
  await healing.jobs.start();
  return healing;
}

/** Builds healing and registers its four jobs with `jobs`; they run from its next `start()`. */
export function registerHealing(jobs: Supervisor, o: HealingOptions): Healing {
  const { layer, clock, logger, config } = o;
  const healer = new Healer({ pools: layer.pools, locker: layer.locker, records: layer.sysRecords, clock, logger, lockClock: () => layer.governance.lockClock() });
  const background = new BackgroundHeal({ healer, mrf: layer.mrf, clock, logger, tranquility: SPEED_TRANQUILITY[config.healSpeed] });
  // The drive healer and the heal sequences need each other (it starts rebuilds, they format
  // replaced drives through it): the sequences, built second, reach it as a settle-once value.
  const rebuilds = eventual<HealSequences>('the heal sequences');
  const drives = new DriveHealer({
    sequences: rebuilds.eventual,
    pools: layer.pools,
    clock,
    logger,
    selfId: o.node,
    buckets: {
      list: async () => (await layer.listBuckets()).map((b) => b.name),
      exists: (bucket) =>
        layer.getBucketInfo(bucket).then(
          () => true,
          () => false,
        ),
    },
    // A recreated folder shows as healing until the scanner has had two cycles to queue its objects.
    volumeIssueMs: 2 * config.scannerIntervalMs + 60_000,
  });
  const sequences = new HealSequences({
    healer,
    records: layer.sysRecords,
    formats: drives,
    clock,
    logger,
    nodeIndex: o.nodeIndex,
    // An admin heal was asked for: it runs twice as hard as background work.
    tranquility: SPEED_TRANQUILITY[config.healSpeed] / 2,
    rebuildTranquility: SPEED_TRANQUILITY[config.healSpeed],
    // Flat out, a rebuild overlaps objects; paced, one at a time keeps its bursts short.
    rebuildConcurrency: config.healSpeed === 'fastest' ? 4 : config.healSpeed === 'fast' ? 2 : 1,
  });
  rebuilds.settle(sequences);
  const lifecycle = new LifecycleExecutor({ layer, logger });
  const scanner = new Scanner({
    healer,
    background,
    clock,
    logger,
    node: o.node,
    nodeIndex: o.nodeIndex,
    scans: o.scans,
    intervalMs: config.scannerIntervalMs,
    tranquility: SPEED_TRANQUILITY[config.scannerSpeed],
    deepSample: config.scannerDeepSample,
    onCycle: () => drives.check(),
    hooks: [lifecycle],
    orphanAgeMs: config.orphanAgeMs,
  });
  jobs.register(workerJob('heal-background', 'heals what reads and partial writes queued (MRF) and what the scanner found', background.worker, { start: () => background.start(), stop: () => background.stop() }));
  jobs.register({
    name: 'heal-sequences',
    description: 'admin heal sequences and drive rebuilds; persisted root heals resume at start',
    start: async () => {
      await sequences.resume().catch((err: unknown) => logger.warn({ event: 'heal_resume_failed', err }, 'could not resume persisted root heals'));
    },
    stop: () => sequences.close(),
    workers: () => sequences.running().map((s) => s.worker),
  });
  jobs.register(workerJob('drive-monitor', 'finds replaced or emptied drives and starts their rebuild', drives.worker, { after: ['heal-sequences'] }));
  jobs.register(
    workerJob('scanner', 'walks the namespace: usage, heal checks, lifecycle rules', scanner.worker, {
      after: ['heal-background', 'drive-monitor'],
      start: () => {
        scanner.start();
        logger.info(
          { event: 'healing_started', scannerIntervalMs: config.scannerIntervalMs, scannerSpeed: config.scannerSpeed, healSpeed: config.healSpeed, deepSample: config.scannerDeepSample },
          'background heal, drive monitor and scanner running',
        );
      },
      stop: () => scanner.stop(),
    }),
  );
  return {
    healer,
    background,
    sequences,
    drives,
    scanner,
    lifecycle,
    healWorker: sequences,
    healingDrives: { healing: () => drives.healing() },
    local: () => ({ node: o.node, background: background.progress(), scanner: scanner.progress(), healing: [...drives.healing()], sequences: sequences.running().length }),
    usage: () => readUsage(layer.sysRecords, layer.pools.count),
    jobs,
    close: () => jobs.stop(),
  };
}
