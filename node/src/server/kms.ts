/**
 * The key store of SSE-S3 / SSE-KMS in the running node: built from the
 * configuration before any disk is touched (a malformed
 * `SVC_KMS_SECRET_KEY` stops start-up), then watched: a key file is re-read
 * every `reloadMs` (every 2 s while it could not be read yet), and the readiness `kms` dependency follows whether the
 * store is usable (`kms_not_ready` until a configured key file could be read).
 */
import { readFile } from 'node:fs/promises';
import { LocalKms } from '../crypto/kms.ts';
import type { Clock } from '../util/clock.ts';
import type { KmsConfig } from '../util/config.ts';
import type { Logger } from '../util/logger.ts';
import { type Job, workerJob } from '../background/supervisor.ts';
import { periodicWorker } from '../util/worker.ts';
import type { Readiness } from './readiness.ts';

export const KMS_RELOAD_MS = 10_000;
/** Re-read period while the store is not ready. */
export const KMS_RETRY_MS = 2_000;

/** The configured key store, or undefined when none is configured. */
export function createKms(config: KmsConfig, clock: Clock): LocalKms | undefined {
  if (config.secretKey === undefined && config.secretKeyFile === undefined) return undefined;
  return new LocalKms({
    ...(config.secretKey !== undefined ? { secretKey: config.secretKey } : {}),
    ...(config.secretKeyFile !== undefined ? { secretKeyFile: config.secretKeyFile } : {}),
    readFile: (p) => readFile(p, 'utf8'),
    now: () => clock.now(),
  });
}

function note(kms: LocalKms): string {
  const s = kms.status();
  const where = s.source === 'file' ? `SVC_KMS_SECRET_KEY_FILE ${s.file}` : 'SVC_KMS_SECRET_KEY';
  if (!s.ready) return `${where}: not loaded${s.lastError ? `: ${s.lastError}` : ''}`;
  return `${s.keyIds.length} key(s) from ${where}, default ${s.defaultKeyId}${s.lastError ? `; last re-read failed: ${s.lastError}` : ''}`;
}

/**
 * The key store watch as a background job (`kms-watch`): its start loads the
 * store and sets readiness's `kms` entry; its worker re-reads the key file
 * every `reloadMs` (every `KMS_RETRY_MS` while the store is not ready).
 */
export function kmsWatchJob(kms: LocalKms, readiness: Readiness, clock: Clock, log: Logger, reloadMs = KMS_RELOAD_MS): Job {
  let wasReady: boolean | undefined;
  let lastError: string | undefined;
  const check = async () => {
    const ready = await kms.reload();
    readiness.update({ kms: ready }, { kms: note(kms) });
    const err = kms.status().lastError;
    if (ready !== wasReady || err !== lastError) {
      if (ready) log.info({ event: 'kms_ready', keys: kms.status().keyIds.length, default: kms.status().defaultKeyId, lastError: err }, 'key store ready');
      else log.warn({ event: 'kms_not_ready', err }, 'key store not available: SSE-S3 and SSE-KMS are refused, readiness reports kms_not_ready');
    }
    wasReady = ready;
    lastError = err;
  };
  // A store that is not ready is looked at more often (a key file mounted late).
  const worker = periodicWorker({
    name: 'kms-watch',
    everyMs: () => (kms.ready() ? reloadMs : Math.min(reloadMs, KMS_RETRY_MS)),
    atStart: false,
    tick: () => check().catch((err: unknown) => log.error({ event: 'kms_check_failed', err: String(err) }, 'key store re-check failed')),
    clock,
    logger: log,
  });
  return workerJob('kms-watch', 'key store: re-reads the SSE key file and keeps readiness\'s kms entry current', worker, {
    start: async () => {
      await check();
      worker.start();
    },
  });
}
