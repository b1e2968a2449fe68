/**
 * The root credential of a running node, as one source every consumer asks:
 * S3 and admin SigV4 verification, the admin authorizer, internode RPC
 * tokens (and, later, identity lookup on top of it).
 *
 * Given as values (`SVC_ACCESS_KEY` / `SVC_SECRET_KEY`) it never changes.
 * Given as files (`SVC_ACCESS_KEY_FILE` / `SVC_SECRET_KEY_FILE`, e.g. a
 * Kubernetes Secret volume, whose files the kubelet swaps atomically when the
 * Secret is edited) the files are re-read every `reloadMs`; a changed,
 * complete pair replaces the credential at once:
 *
 * - S3, admin and console requests are verified against the new pair only:
 *   the old key is refused from the moment this node switched;
 * - internode RPC tokens keep being accepted with the previous secret for
 *   `graceMs` and are signed with both while it lasts, because peers see the
 *   new files at different moments (a kubelet updates each pod's volume on
 *   its own sync): a node that switched and one that has not yet still
 *   authenticate each other, so data movement (a drain, a rebalance) goes on
 *   through a rotation.
 *
 * A file that cannot be read, is empty, or was caught mid-swap (the access
 * key changed between the two reads) leaves the current credential in place
 * and is tried again on the next tick.
 */
import type { Clock } from './clock.ts';
import type { Credentials } from './config.ts';
import type { Logger } from './logger.ts';
import { type PeriodicProgress, periodicWorker, type Worker } from './worker.ts';

export interface RootCredential {
  readonly accessKey: string;
  readonly secretKey: string;
}

export interface RootCredentialSource {
  /** The credential requests are verified against now. */
  current(): RootCredential;
  /** The credential replaced less than the grace period ago (internode tokens only). */
  previous(): RootCredential | undefined;
  /** The current credential when `accessKey` is its access key. */
  lookup(accessKey: string): RootCredential | undefined;
  /** Called after every switch; returns the unsubscribe function. */
  onChange(listener: (c: RootCredential) => void): () => void;
  /** The loop re-reading the key files (none when the credential is fixed). */
  readonly reloader?: Worker<PeriodicProgress>;
  /** Stops re-reading the files. */
  close(): void;
}

/** How often the key files are looked at. */
export const ROOT_CREDENTIAL_RELOAD_MS = 2_000;
/** How long the previous secret still authenticates internode calls after a switch. */
export const ROOT_CREDENTIAL_RPC_GRACE_MS = 10 * 60_000;

export interface RootCredentialOptions {
  readonly clock: Clock;
  readonly logger: Logger;
  readonly readFile: (path: string) => Promise<string>;
  readonly reloadMs?: number;
  readonly graceMs?: number;
}

/** A credential file's value: the content without one trailing newline (as at start-up). */
const fileValue = (text: string): string => text.replace(/\r?\n$/, '');

/** A source over the configured credential: static, or re-read from its files. */
export function rootCredentialSource(creds: Credentials, o: RootCredentialOptions): RootCredentialSource {
  let cur: RootCredential = { accessKey: creds.accessKey, secretKey: creds.secretKey };
  let prev: { c: RootCredential; until: number } | undefined;
  const listeners = new Set<(c: RootCredential) => void>();
  const graceMs = o.graceMs ?? ROOT_CREDENTIAL_RPC_GRACE_MS;
  let lastProblem: string | undefined;

  const read = async (): Promise<RootCredential | string> => {
    const files = creds.files ?? {};
    const one = async (which: 'accessKey' | 'secretKey'): Promise<string> => {
      const path = files[which];
      return path === undefined ? cur[which] : fileValue(await o.readFile(path));
    };
    try {
      const accessKey = await one('accessKey');
      const secretKey = await one('secretKey');
      // Caught between the kubelet's swaps of the two files: read again next tick.
      if ((await one('accessKey')) !== accessKey) return 'the key files changed while being read';
      if (accessKey === '' || secretKey === '') return 'a key file is empty';
      return { accessKey, secretKey };
    } catch (err) {
      return `a key file cannot be read: ${(err as Error).message}`;
    }
  };

  const check = async (): Promise<void> => {
    const next = await read();
    if (typeof next === 'string') {
      if (next !== lastProblem) o.logger.warn({ event: 'root_credential_reload_failed', reason: next }, `root credential not re-read (${next}); keeping the current one`);
      lastProblem = next;
      return;
    }
    lastProblem = undefined;
    if (next.accessKey === cur.accessKey && next.secretKey === cur.secretKey) return;
    prev = { c: cur, until: o.clock.now() + graceMs };
    cur = next;
    o.logger.info(
      { event: 'root_credential_rotated', accessKey: next.accessKey, previousAccessKey: prev.c.accessKey, rpcGraceMs: graceMs },
      'root credential changed: requests signed with the previous one are refused; internode calls accept it during the grace period',
    );
    for (const l of listeners) l(cur);
  };

  let reloader: Worker<PeriodicProgress> | undefined;
  if (creds.files !== undefined && (creds.files.accessKey !== undefined || creds.files.secretKey !== undefined)) {
    reloader = periodicWorker({ name: 'root-credential-reload', everyMs: o.reloadMs ?? ROOT_CREDENTIAL_RELOAD_MS, atStart: false, tick: () => check(), clock: o.clock, logger: o.logger });
    reloader.start();
  }

  return {
    current: () => cur,
    previous: () => (prev !== undefined && o.clock.now() < prev.until ? prev.c : undefined),
    lookup: (accessKey) => (accessKey === cur.accessKey ? cur : undefined),
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    ...(reloader !== undefined ? { reloader } : {}),
    close: () => void reloader?.stop(),
  };
}

/** A source that never changes (tests, embedded servers). */
export function staticRootCredential(c: RootCredential): RootCredentialSource {
  const fixed = { accessKey: c.accessKey, secretKey: c.secretKey };
  return {
    current: () => fixed,
    previous: () => undefined,
    lookup: (k) => (k === fixed.accessKey ? fixed : undefined),
    onChange: () => () => undefined,
    close: () => undefined,
  };
}
