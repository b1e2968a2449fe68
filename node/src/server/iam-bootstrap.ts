/**
 * IAM bootstrap: the IAM state lives in the deployment's own storage
 * (`.svc.sys/config/iam/`, erasure-coded like every internal record), so it
 * can only be loaded once storage answers at quorum. Today it holds the IAM
 * format record (`config/iam/format.json`, `{"version":1}`, written on first
 * start) beside the root credential from the configuration; users and
 * policies will live beside it.
 *
 * `runIamBootstrap` is the recovery loop of SPEC "Log events": each failed
 * load logs `event=iam_bootstrap_retry_failed` with a `hint` for the
 * operator, at WARN for the first `errorAfter` failures and at ERROR after
 * that, and retries with backoff (1 s doubling to 30 s) for as long as the
 * process runs; the process never exits for it. Readiness stays pending `iam`
 * (`iam_not_ready`) until a load succeeds.
 */
import type { Clock } from '../util/clock.ts';
import { SvcError, toSvcError } from '../util/errors.ts';
import type { Logger } from '../util/logger.ts';

/** Small internal records under `.svc.sys`, read and written at quorum (the object layer). */
export interface ConfigStore {
  /** The record, or undefined when it does not exist. */
  readConfig(path: string): Promise<Uint8Array | undefined>;
  writeConfig(path: string, data: Uint8Array): Promise<void>;
}

export const IAM_FORMAT_PATH = 'config/iam/format.json';
export const IAM_FORMAT_VERSION = 1;

/**
 * Loads the IAM state: reads the IAM format record, creating it on a fresh
 * deployment. Throws when storage cannot answer at quorum or the record is
 * not one this build reads. Returns a human detail for the readiness JSON.
 */
export async function loadIamState(store: ConfigStore): Promise<string> {
  const raw = await store.readConfig(IAM_FORMAT_PATH);
  if (raw === undefined) {
    await store.writeConfig(IAM_FORMAT_PATH, Buffer.from(`${JSON.stringify({ version: IAM_FORMAT_VERSION })}\n`));
    return `IAM format v${IAM_FORMAT_VERSION} created`;
  }
  let version: unknown;
  try {
    version = (JSON.parse(Buffer.from(raw).toString('utf8')) as { version?: unknown }).version;
  } catch (cause) {
    throw new SvcError('FileCorrupt', `IAM format record ${IAM_FORMAT_PATH} is not valid JSON`, { path: IAM_FORMAT_PATH }, { cause });
  }
  if (version !== IAM_FORMAT_VERSION) {
    throw new SvcError('FileCorrupt', `IAM format record ${IAM_FORMAT_PATH} has version ${JSON.stringify(version)}; this build reads version ${IAM_FORMAT_VERSION}`, {
      path: IAM_FORMAT_PATH,
    });
  }
  return `IAM format v${IAM_FORMAT_VERSION} loaded`;
}

/** What the operator should look at, by the failure's code. */
export function iamHint(err: SvcError): string {
  switch (err.code) {
    case 'ErasureReadQuorum':
    case 'ErasureWriteQuorum':
    case 'DiskNotFound':
      return 'IAM data is stored on the erasure sets under .svc.sys/config/iam: bring enough drives and nodes online for read and write quorum (see /health/ready details.storage and the drive and peer logs); the node keeps retrying';
    case 'FileCorrupt':
      return `the IAM record ${IAM_FORMAT_PATH} is unreadable by this build: check that every node runs the same version, or restore the record; the node keeps retrying`;
    default:
      return 'check drive and peer connectivity and the errors above; the node keeps retrying';
  }
}

/** The readiness flags this loop owns (structurally `Readiness`). */
export interface IamReadinessTarget {
  update(patch: { iam: boolean; iamFailed: boolean }, notes?: { iam?: string }): void;
}

export interface IamBootstrapOptions {
  /** One load attempt; resolves with a detail for the readiness JSON. */
  readonly load: () => Promise<string>;
  readonly readiness: IamReadinessTarget;
  readonly logger: Logger;
  readonly clock: Clock;
  /** Stops the retries (shutdown). */
  readonly signal: AbortSignal;
  /** Failures logged at WARN before the level rises to ERROR (default 3). */
  readonly errorAfter?: number;
  readonly baseDelayMs?: number;
  readonly maxDelayMs?: number;
}

export interface IamBootstrap {
  /** Resolves after the first attempt: true when IAM loaded. */
  readonly first: Promise<boolean>;
  /** Resolves when IAM loaded, or false when stopped first. */
  readonly done: Promise<boolean>;
}

export function runIamBootstrap(o: IamBootstrapOptions): IamBootstrap {
  const errorAfter = o.errorAfter ?? 3;
  const maxDelay = o.maxDelayMs ?? 30_000;
  let settleFirst!: (ok: boolean) => void;
  const first = new Promise<boolean>((r) => {
    settleFirst = r;
  });
  const attempt = async (n: number, delayMs: number): Promise<boolean> => {
    try {
      const detail = await o.load();
      o.readiness.update({ iam: true, iamFailed: false }, { iam: `root credential; ${detail}` });
      if (n > 1) o.logger.info({ event: 'iam_bootstrap_recovered', attempts: n }, 'IAM loaded after retrying');
      return true;
    } catch (err) {
      const e = toSvcError(err);
      o.readiness.update({ iam: false, iamFailed: true }, { iam: `IAM not loaded: ${e.message}` });
      const fields = {
        event: 'iam_bootstrap_retry_failed',
        attempt: n,
        code: e.code,
        err: e.cause instanceof Error ? `${e.message}: ${e.cause.message}` : e.message,
        hint: iamHint(e),
        retryInMs: delayMs,
      };
      if (n > errorAfter) o.logger.error(fields, 'IAM bootstrap failed again; still retrying');
      else o.logger.warn(fields, 'IAM bootstrap failed; retrying');
      return false;
    }
  };
  const done = (async () => {
    let delay = o.baseDelayMs ?? 1_000;
    for (let n = 1; ; n++) {
      const ok = await attempt(n, delay);
      if (n === 1) settleFirst(ok);
      if (ok) return true;
      try {
        await o.clock.sleep(delay, o.signal);
      } catch {
        return false;
      }
      delay = Math.min(delay * 2, maxDelay);
    }
  })();
  return { first, done };
}
