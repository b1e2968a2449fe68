/**
 * Composes bucket notifications on a node: the targets the configuration
 * names (`SVC_NOTIFY_*`), each with its queue (its `QUEUE_DIR`, by default
 * below the node's first local drive), the notification system as the
 * object layer's post-commit hook.
 */
import { changeExists, defaultQueueDir, NotificationSystem } from '../notify/notification-system.ts';
import { createTarget } from '../notify/targets/index.ts';
import type { ServerPools } from '../object/server-pools.ts';
import { type ClientTrust, staticTrust } from '../tls/trust.ts';
import type { Clock } from '../util/clock.ts';
import type { Config } from '../util/config.ts';
import { SvcError } from '../util/errors.ts';
import type { Logger } from '../util/logger.ts';
import { DEFAULT_QUEUE_LIMIT, type TargetSpec } from '../util/notify-config.ts';

export interface NotifyPlaneOptions {
  config: Config;
  layer: ServerPools;
  /** Roots of this node's local drives (the first holds default queue directories). */
  drives: readonly string[];
  /** The node's CA set (its certificate directory); the system roots without one. */
  trust: ClientTrust | undefined;
  ownerId: () => string;
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

export async function startNotifications(o: NotifyPlaneOptions): Promise<NotificationSystem> {
  const notify = new NotificationSystem({
    layer: {
      getBucketConfig: (bucket, kind) => o.layer.getBucketConfig(bucket, kind),
      changeExists: (ref) => changeExists(o.layer, ref),
    },
    clock: o.clock,
    logger: o.logger,
    region: o.config.region,
    ownerId: o.ownerId,
  });
  const trust = o.trust ?? staticTrust([]);
  for (const spec of o.config.notify) {
    if (!spec.enabled) continue;
    await notify.addTarget(await createTarget(spec, { trust }), queueOf(spec, o.drives));
  }
  o.layer.setPostCommitHook(notify);
  return notify;
}
