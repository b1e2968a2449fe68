/**
 * The identity store of a running node: the IAM document (`iam/state.ts`)
 * read from and written to the system area, the index every request
 * resolves its credential through (`iam/resolve.ts`), and keeping both
 * current across the cluster.
 *
 * - Durability: the document is one `.svc.sys` record
 *   (`config/iam/iam.json`), written like bucket metadata: on every pool,
 *   at the set's write quorum, newest copy wins on read.
 * - Loading: `load()` runs before the node reports the readiness stage
 *   `iam` ready (`iam-bootstrap.ts` retries it); a fresh deployment gets its
 *   document (and session key) created under the record's lock, so two
 *   nodes starting at once agree on one.
 * - Changes: `mutate()` is a read-modify-write of a fresh quorum read under
 *   the record's cluster-wide lock, so two nodes changing IAM at once never
 *   lose an update; the generation goes up by one; the new document is
 *   installed here and every peer is told to re-read (`iamReload`), and the
 *   call returns once they answered (bounded), so a change is in force on
 *   every reachable node when the admin API answers.
 * - A peer that missed the notice (down, partitioned) catches up: at start
 *   (it loads), and by a re-read every `refreshMs` that installs any newer
 *   generation.
 * - Secrets: sealed with the KMS's default key when a key store is
 *   configured (AES-256-GCM, bound to their purpose), in clear otherwise.
 * - Audit: every change logs `event=iam_change` with the operation, the
 *   caller and the target (never a secret).
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { RpcService } from '../cluster/rpc-server.ts';
import type { Kms } from '../crypto/kms.ts';
import { IamIndex, type ResolvedCredential, type RootKeys } from '../iam/resolve.ts';
import { type Ctx, decodeDoc, emptyDoc, encodeDoc, type IamDoc, type Secret } from '../iam/state.ts';
import type { Clock } from '../util/clock.ts';
import { SvcError, toSvcError } from '../util/errors.ts';
import type { Logger } from '../util/logger.ts';
import { type PeriodicProgress, periodicWorker, type Worker } from '../util/worker.ts';

export const IAM_DOC_PATH = 'config/iam/iam.json';
export const IAM_RELOAD_METHOD = 'iamReload';
/** How often a node re-reads the document on its own. */
export const IAM_REFRESH_MS = 5_000;
/** Longest wait for peers to acknowledge a change. */
export const IAM_NOTIFY_TIMEOUT_MS = 2_000;

export interface IamRecords {
  read(path: string): Promise<Uint8Array | undefined>;
  /** Read-modify-write under the record's lock; `fn` returns the new value, or null to write nothing. */
  update(path: string, fn: (cur: Uint8Array | undefined) => Promise<Uint8Array | null> | Uint8Array | null): Promise<unknown>;
}

export interface IamServiceOptions {
  readonly root: () => RootKeys;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly kms?: Kms;
  /** Tells every peer to re-read; resolves with the peers that did not answer. */
  readonly notifyPeers?: (generation: number) => Promise<{ peer: string; error?: string }[]>;
  readonly refreshMs?: number;
}

/** Who made a change (for the audit log). */
export interface Actor {
  readonly accessKey: string;
  readonly requestId?: string;
  readonly clientAddress?: string;
}

const SEAL_AAD = Buffer.from('svc-iam-secret-v1');

export class IamService {
  readonly #o: IamServiceOptions;
  #records: IamRecords | undefined;
  #index: IamIndex | undefined;
  /**
   * Re-reads the document every `refreshMs` (a change another node made,
   * its notice missed); started by the node's supervisor once the store
   * loaded (`iam-refresh`).
   */
  readonly refresher: Worker<PeriodicProgress>;

  constructor(o: IamServiceOptions) {
    this.#o = o;
    this.refresher = periodicWorker({
      name: 'iam-refresh',
      everyMs: o.refreshMs ?? IAM_REFRESH_MS,
      atStart: false,
      tick: () => this.reload().catch((err: unknown) => o.logger.debug({ event: 'iam_refresh_failed', err: toSvcError(err).message }, 'identity store re-read failed')),
      clock: o.clock,
      logger: o.logger,
    });
  }

  get loaded(): boolean {
    return this.#index !== undefined;
  }

  /** The current document (read-only: mutate through `mutate`). */
  doc(): IamDoc {
    return this.#need().doc;
  }

  index(): IamIndex {
    return this.#need();
  }

  #need(): IamIndex {
    if (this.#index === undefined) throw new SvcError('XSvcIamNotInitialized');
    return this.#index;
  }

  // ---- secrets

  seal(plain: string): Secret {
    const kms = this.#o.kms;
    if (kms === undefined) return { v: 'plain', s: plain };
    const k = kms.defaultKey();
    const iv = randomBytes(12);
    const c = createCipheriv('aes-256-gcm', k.key, iv);
    c.setAAD(SEAL_AAD);
    const body = Buffer.concat([c.update(plain, 'utf8'), c.final(), c.getAuthTag()]);
    return { v: 'kms', kid: k.id, s: Buffer.concat([iv, body]).toString('base64') };
  }

  open(s: Secret): string {
    if (s.v === 'plain') return s.s;
    const kms = this.#o.kms;
    if (kms === undefined) throw new SvcError('XSvcKMSNotConfigured', 'the identity store holds secrets sealed with a KMS key; configure the key store (SVC_KMS_SECRET_KEY or _FILE)');
    const raw = Buffer.from(s.s, 'base64');
    const d = createDecipheriv('aes-256-gcm', kms.key(s.kid).key, raw.subarray(0, 12));
    d.setAAD(SEAL_AAD);
    d.setAuthTag(raw.subarray(raw.length - 16));
    try {
      return Buffer.concat([d.update(raw.subarray(12, raw.length - 16)), d.final()]).toString('utf8');
    } catch (cause) {
      throw new SvcError('FileCorrupt', `an identity-store secret does not open with KMS key ${s.kid}`, undefined, { cause });
    }
  }

  // ---- loading

  #install(doc: IamDoc): void {
    this.#index = new IamIndex({ doc, open: (s) => this.open(s), root: this.#o.root });
  }

  /** One load attempt (the readiness `iam` stage): reads the document, creating it on a fresh deployment. */
  async load(records: IamRecords): Promise<string> {
    this.#records = records;
    const raw = await records.read(IAM_DOC_PATH);
    if (raw === undefined) {
      await records.update(IAM_DOC_PATH, (cur) => (cur !== undefined ? null : encodeDoc(emptyDoc(this.seal(randomBytes(32).toString('base64')), this.#o.clock.now()))));
      const created = await records.read(IAM_DOC_PATH);
      if (created === undefined) throw new SvcError('ErasureReadQuorum', 'the identity store was created but cannot be read back yet');
      this.#install(decodeDoc(created, IAM_DOC_PATH));
    } else {
      this.#install(decodeDoc(raw, IAM_DOC_PATH));
    }
    this.#reportUnknownActions();
    const d = this.doc();
    return `identity store generation ${d.generation}: ${Object.keys(d.users).length} users, ${Object.keys(d.groups).length} groups, ${Object.keys(d.policies).length} custom policies, ${Object.keys(d.accessKeys).length} access keys`;
  }

  /** Stored policies that name actions no service has (written before svc checked them) load and grant nothing: said once, at start-up. */
  #reportUnknownActions(): void {
    for (const u of this.#index?.unknownActions() ?? []) {
      const what = u.policy !== undefined ? `policy ${u.policy}` : `the policy of access key ${u.accessKey}`;
      this.#o.logger.warn(
        { event: 'iam_policy_unknown_actions', ...u },
        `${what} names actions no service has (they grant and deny nothing); correct them and write the policy again`,
      );
    }
  }

  /** Re-reads the document and installs it when newer (peer notice, periodic refresh). */
  async reload(): Promise<number> {
    if (this.#records === undefined) throw new SvcError('XSvcIamNotInitialized');
    const raw = await this.#records.read(IAM_DOC_PATH);
    if (raw === undefined) return this.#index?.doc.generation ?? 0;
    const doc = decodeDoc(raw, IAM_DOC_PATH);
    const cur = this.#index?.doc.generation ?? -1;
    if (doc.generation > cur) {
      this.#install(doc);
      this.#o.logger.info({ event: 'iam_reloaded', generation: doc.generation, previous: cur }, 'identity store re-read');
    }
    return this.#index!.doc.generation;
  }

  async close(): Promise<void> {
    await this.refresher.stop();
  }

  // ---- changes

  /**
   * Applies `fn` to a fresh copy of the document under the record's lock,
   * stores it (generation + 1), installs it here and tells the peers. `fn`
   * throws to refuse (nothing is written). Returns what `fn` returned.
   */
  async mutate<R>(op: string, actor: Actor, target: Record<string, unknown>, fn: (d: IamDoc, c: Ctx) => R): Promise<R> {
    const records = this.#records;
    if (records === undefined) throw new SvcError('XSvcIamNotInitialized');
    let result!: R;
    let next!: IamDoc;
    await records.update(IAM_DOC_PATH, (cur) => {
      if (cur === undefined) throw new SvcError('XSvcIamNotInitialized', 'the identity store record is missing');
      const d = decodeDoc(cur, IAM_DOC_PATH);
      const now = this.#o.clock.now();
      result = fn(d, { now, rootAccessKey: this.#o.root().accessKey });
      d.generation += 1;
      d.updatedAt = now;
      next = d;
      return encodeDoc(d);
    });
    if (next.generation > (this.#index?.doc.generation ?? -1)) this.#install(next);
    this.#o.logger.info(
      { event: 'iam_change', op, actor: actor.accessKey, requestId: actor.requestId, client: actor.clientAddress, ...target, generation: next.generation },
      `IAM change: ${op}`,
    );
    if (this.#o.notifyPeers) {
      const missed = (await this.#o.notifyPeers(next.generation)).filter((r) => r.error !== undefined);
      for (const m of missed) {
        this.#o.logger.warn({ event: 'iam_notify_failed', peer: m.peer, generation: next.generation, err: m.error }, 'peer not told about an IAM change; it catches up on its next re-read');
      }
    }
    return result;
  }

  /** The credential an access key (and session token) stands for: the root credential alone until the store loaded. */
  lookup(accessKey: string, sessionToken?: string): ResolvedCredential | undefined {
    if (this.#index !== undefined) return this.#index.lookup(accessKey, sessionToken);
    const root = this.#o.root();
    if (sessionToken !== undefined || accessKey !== root.accessKey) return undefined;
    return { accessKey, secretKey: root.secretKey, principal: { kind: 'user', accessKey, canonicalId: accessKey, root: true, userName: accessKey, credential: 'root' } };
  }
}

/** The peer RPC method: "the identity store changed, re-read it" (answers the generation now installed). */
export function iamPeerService(iam: IamService): RpcService {
  return {
    [IAM_RELOAD_METHOD]: {
      kind: 'unary',
      handle: async () => {
        if (!iam.loaded) throw new SvcError('ServiceUnavailable', 'this node has not loaded its identity store yet (it reads it when it does)');
        return { generation: await iam.reload() };
      },
    },
  };
}
