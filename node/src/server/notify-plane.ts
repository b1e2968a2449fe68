/**
 * Composes bucket notifications on a node: the targets the environment
 * names (`SVC_NOTIFY_*`) and those set through the admin API, each with its
 * queue (its `QUEUE_DIR`, by default below the node's first local drive),
 * and the notification system as the object layer's post-commit hook.
 *
 * Targets set through the admin API live in one `.svc.sys` record
 * (`config/notify/targets.json`, written on every pool, locked
 * read-modify-write); the node that changes it applies the change at once
 * and tells its peers (`notifyReload`), which re-read the record; every node
 * also re-reads it every 30 s, so a node that missed the call catches up.
 * Environment targets cannot be changed through the API (the environment
 * would bring them back at the next start).
 */
import { changeExists, defaultQueueDir, NotificationSystem } from '../notify/notification-system.ts';
import type { NotifyTargetReport } from '../object/admin/services.ts';
import { AuditLog } from '../api/audit-log.ts';
import { createTarget } from '../notify/targets/index.ts';
import { WebhookTarget } from '../notify/targets/webhook.ts';
import type { ServerPools } from '../object/server-pools.ts';
import { type ClientTrust, staticTrust } from '../tls/trust.ts';
import type { Clock } from '../util/clock.ts';
import type { Config } from '../util/config.ts';
import { SvcError } from '../util/errors.ts';
import type { Logger } from '../util/logger.ts';
import { type PeriodicProgress, periodicWorker, type Worker } from '../util/worker.ts';
import { checkTargetSpec, DEFAULT_QUEUE_LIMIT, TARGET_TYPES, type TargetSpec, type TargetType } from '../util/notify-config.ts';

/** The record holding the targets set through the admin API. */
export const NOTIFY_TARGETS_RECORD = 'config/notify/targets.json';
/** The peer call that makes a node re-read it. */
export const NOTIFY_RELOAD_METHOD = 'notifyReload';
const RELOAD_EVERY_MS = 30_000;

export interface NotifyPlaneOptions {
  config: Config;
  layer: ServerPools;
  /** Roots of this node's local drives (the first holds default queue directories). */
  drives: readonly string[];
  /** The node's CA set (its certificate directory); the system roots without one. */
  trust: ClientTrust | undefined;
  ownerId: () => string;
  /** Tells the other nodes to re-read the targets record. */
  notifyPeers?: () => Promise<void>;
  clock: Clock;
  logger: Logger;
}

/** Where a target's queue lives and how many events it holds. */
export function queueOf(spec: TargetSpec, drives: readonly string[]): { dir: string; limit: number } {
  const limit = spec.settings.queue_limit ? Number(spec.settings.queue_limit) : DEFAULT_QUEUE_LIMIT;
  if (spec.settings.queue_dir) return { dir: spec.settings.queue_dir, limit };
  const first = drives[0];
  if (first === undefined) throw new SvcError('XSvcNotifyTargetInvalid', `${spec.type} target ${spec.id}: this node has no local drive for its queue; set queue_dir`);
  return { dir: defaultQueueDir(first, spec.type, spec.id), limit };
}

/** A target's status with where it was configured. */
export type TargetReport = NotifyTargetReport;

interface StoredTargets {
  targets: TargetSpec[];
}

function keyOf(s: Pick<TargetSpec, 'type' | 'id'>): string {
  return `${s.id}:${s.type}`;
}

/** Settings without secrets, for answers and logs. */
function redact(settings: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(settings)) out[k] = /password|token|secret/.test(k) ? '*****' : /connection_string|dsn_string|url/.test(k) ? v.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:*****@').replace(/^([^:@/]*):[^@/]*@/, '$1:*****@') : v;
  return out;
}

export class NotifyPlane {
  readonly system: NotificationSystem;
  readonly #o: NotifyPlaneOptions;
  readonly #envKeys = new Set<string>();
  /** Admin-set targets applied on this node, by key, with the settings they were built from. */
  readonly #applied = new Map<string, string>();
  /** Re-reads the admin-set targets every `RELOAD_EVERY_MS` (a change another node made, its notice missed). */
  readonly reloader: Worker<PeriodicProgress>;
  #reloading: Promise<void> = Promise.resolve();

  private constructor(o: NotifyPlaneOptions) {
    this.#o = o;
    this.system = new NotificationSystem({
      layer: {
        getBucketConfig: (bucket, kind) => o.layer.getBucketConfig(bucket, kind),
        changeExists: (ref) => changeExists(o.layer, ref),
      },
      clock: o.clock,
      logger: o.logger,
      region: o.config.region,
      ownerId: o.ownerId,
    });
    this.reloader = periodicWorker({
      name: 'notify-reload',
      everyMs: RELOAD_EVERY_MS,
      atStart: false,
      tick: () => this.reload().catch((err: unknown) => o.logger.warn({ event: 'notify_reload_failed', err }, 'could not re-read the notification targets')),
      clock: o.clock,
      logger: o.logger,
    });
  }

  /** The re-read of admin-set targets and every target's delivery worker. */
  workers(): Worker<unknown>[] {
    return [this.reloader, ...this.system.workers()];
  }

  static async start(o: NotifyPlaneOptions): Promise<NotifyPlane> {
    const plane = new NotifyPlane(o);
    for (const spec of o.config.notify) {
      if (!spec.enabled) continue;
      await plane.#add(spec);
      plane.#envKeys.add(keyOf(spec));
    }
    // Admin-set targets: read now when the record is readable; the periodic re-read catches up otherwise.
    await plane.reload().catch((err: unknown) => o.logger.warn({ event: 'notify_reload_failed', err }, 'could not read the notification targets set through the admin API yet'));
    o.layer.setPostCommitHook(plane.system);
    return plane;
  }

  async #add(spec: TargetSpec): Promise<void> {
    await this.system.addTarget(await createTarget(spec, { trust: this.#o.trust ?? staticTrust([]) }), queueOf(spec, this.#o.drives));
  }

  async #read(): Promise<StoredTargets> {
    const raw = await this.#o.layer.sysRecords.read(NOTIFY_TARGETS_RECORD);
    if (!raw) return { targets: [] };
    const doc = JSON.parse(Buffer.from(raw).toString('utf8')) as StoredTargets;
    return { targets: Array.isArray(doc.targets) ? doc.targets : [] };
  }

  /** Re-reads the admin-set targets and applies the difference (added, changed, removed). One at a time. */
  reload(): Promise<void> {
    const next = this.#reloading.then(async () => {
      const want = new Map((await this.#read()).targets.filter((t) => t.enabled).map((t) => [keyOf(t), t]));
      for (const [key, spec] of want) {
        if (this.#envKeys.has(key)) continue;
        const fingerprint = JSON.stringify(spec.settings);
        if (this.#applied.get(key) === fingerprint) continue;
        try {
          await this.#add(spec);
          this.#applied.set(key, fingerprint);
          this.#o.logger.info({ event: 'notify_target_applied', target: key, settings: redact(spec.settings) }, `notification target ${key} set`);
        } catch (err) {
          this.#o.logger.error({ event: 'notify_target_invalid', target: key, err }, `notification target ${key} could not be set up`);
        }
      }
      for (const key of [...this.#applied.keys()]) {
        if (want.has(key)) continue;
        await this.system.removeTarget(key);
        this.#applied.delete(key);
        this.#o.logger.info({ event: 'notify_target_removed', target: key }, `notification target ${key} removed`);
      }
    });
    this.#reloading = next.catch(() => undefined);
    return next;
  }

  /** Sets (adds or replaces) a target through the admin API; checked and applied here before it is stored. */
  async set(type: string, id: string, settings: Record<string, string>): Promise<void> {
    if (!(TARGET_TYPES as readonly string[]).includes(type)) throw new SvcError('XSvcNotifyTargetInvalid', `unknown target type ${type} (one of ${TARGET_TYPES.join(', ')})`);
    const enable = settings.enable;
    const rest = { ...settings };
    delete rest.enable;
    const spec = checkTargetSpec({ type: type as TargetType, id, enabled: enable === undefined || /^(on|true|1|yes)$/i.test(enable), settings: rest });
    if (this.#envKeys.has(keyOf(spec))) throw new SvcError('XSvcNotifyTargetInvalid', `target ${keyOf(spec)} is configured by SVC_NOTIFY_* variables; change it there`);
    // The settings must build a target (a bad URL, table name) before anything is stored.
    if (spec.enabled) await (await createTarget(spec, { trust: this.#o.trust ?? staticTrust([]) })).close();
    await this.#o.layer.sysRecords.update(NOTIFY_TARGETS_RECORD, (cur) => {
      const doc: StoredTargets = cur ? (JSON.parse(Buffer.from(cur).toString('utf8')) as StoredTargets) : { targets: [] };
      const targets = (doc.targets ?? []).filter((t) => keyOf(t) !== keyOf(spec));
      targets.push(spec);
      return Buffer.from(JSON.stringify({ targets }));
    });
    await this.reload();
    await this.#o.notifyPeers?.();
  }

  /** Removes a target set through the admin API (its queue directory stays, with what it held). */
  async remove(type: string, id: string): Promise<void> {
    const key = `${id}:${type}`;
    if (this.#envKeys.has(key)) throw new SvcError('XSvcNotifyTargetInvalid', `target ${key} is configured by SVC_NOTIFY_* variables; remove it there`);
    let found = false;
    await this.#o.layer.sysRecords.update(NOTIFY_TARGETS_RECORD, (cur) => {
      const doc: StoredTargets = cur ? (JSON.parse(Buffer.from(cur).toString('utf8')) as StoredTargets) : { targets: [] };
      const targets = (doc.targets ?? []).filter((t) => keyOf(t) !== key);
      found = targets.length !== (doc.targets ?? []).length;
      return Buffer.from(JSON.stringify({ targets }));
    });
    if (!found) throw new SvcError('XSvcNotifyNoSuchTarget', `no target ${key} was set through the admin API`);
    await this.reload();
    await this.#o.notifyPeers?.();
  }

  /** Every target of this node with its status (reachability checked now) and where it was configured. */
  targets(): Promise<TargetReport[]> {
    return this.status();
  }

  async status(): Promise<TargetReport[]> {
    return (await this.system.checkedStatus()).map((s) => ({ ...s, source: this.#envKeys.has(`${s.id}:${s.type}`) ? 'env' : 'admin' }));
  }

  async close(): Promise<void> {
    await this.reloader.stop();
    await this.#reloading;
    this.#o.layer.setPostCommitHook(undefined);
    await this.system.close();
  }
}

/** The audit log with the webhooks `SVC_AUDIT_WEBHOOK_*` names (default queues below the first local drive, `audit-<id>`). */
export async function startAuditLog(o: { config: Config; drives: readonly string[]; trust: ClientTrust | undefined; deploymentId: () => string; clock: Clock; logger: Logger }): Promise<AuditLog> {
  const audit = new AuditLog({ clock: o.clock, logger: o.logger, deploymentId: o.deploymentId });
  for (const spec of o.config.audit) {
    if (!spec.enabled) continue;
    const s = spec.settings;
    const target = new WebhookTarget({ id: spec.id, type: 'audit-webhook', endpoint: s.endpoint!, ...(s.auth_token ? { authToken: s.auth_token } : {}), trust: o.trust ?? staticTrust([]) });
    await audit.addWebhook(target, queueOf({ ...spec, type: 'audit' as TargetType, settings: s }, o.drives));
    o.logger.info({ event: 'audit_webhook_added', target: spec.id, endpoint: s.endpoint }, `audit log webhook ${spec.id} ready`);
  }
  return audit;
}
