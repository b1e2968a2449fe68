/**
 * Notification target settings, pure: the `SVC_NOTIFY_<TYPE>_<KEY>[_<ID>]`
 * environment variables (MinIO's names with svc's prefix; no `_<ID>` is
 * the target `_`) and the same settings as the admin API takes them
 * (`{type, id, settings: {endpoint: ...}}`), checked against each type's
 * keys. No I/O: the composition root builds the targets from the specs.
 */
import { SvcError } from './errors.ts';

/** Kafka is not among them: no broker can run where svc is built and tested (Debian ships none), and svc ships no target it cannot test. */
export const TARGET_TYPES = ['webhook', 'nats', 'amqp', 'mqtt', 'redis', 'postgresql', 'mysql'] as const;
export type TargetType = (typeof TARGET_TYPES)[number];

/** Keys every type takes: on/off, the queue directory and its limit. */
const COMMON = ['enable', 'queue_dir', 'queue_limit', 'comment'] as const;

/** Each type's keys (lower case, as the admin API takes them) and the ones it needs. */
export const TARGET_KEYS: Record<TargetType, { keys: readonly string[]; required: readonly string[] }> = {
  webhook: { keys: ['endpoint', 'auth_token', 'client_cert', 'client_key'], required: ['endpoint'] },
  nats: { keys: ['address', 'subject', 'username', 'password', 'token', 'tls', 'tls_skip_verify', 'jetstream'], required: ['address', 'subject'] },
  amqp: {
    keys: ['url', 'exchange', 'exchange_type', 'routing_key', 'mandatory', 'durable', 'delivery_mode', 'publisher_confirms'],
    required: ['url'],
  },
  mqtt: { keys: ['broker', 'topic', 'username', 'password', 'qos', 'keep_alive_interval', 'reconnect_interval'], required: ['broker', 'topic'] },
  redis: { keys: ['address', 'key', 'format', 'password', 'user'], required: ['address', 'key'] },
  postgresql: { keys: ['connection_string', 'table', 'format', 'max_open_connections'], required: ['connection_string', 'table'] },
  mysql: { keys: ['dsn_string', 'table', 'format', 'max_open_connections'], required: ['dsn_string', 'table'] },
};

export interface TargetSpec {
  type: TargetType;
  /** `_` for settings without an id suffix. */
  id: string;
  enabled: boolean;
  settings: Record<string, string>;
}

/** Default queue limit (MinIO's). */
export const DEFAULT_QUEUE_LIMIT = 100_000;

const ID = /^[A-Za-z0-9_-]{1,64}$/;

function bad(message: string): SvcError {
  return new SvcError('XSvcNotifyTargetInvalid', message);
}

function isOn(v: string | undefined): boolean {
  return v !== undefined && /^(on|true|1|yes|enable|enabled)$/i.test(v.trim());
}

/** Checks one target's settings (unknown keys, missing required ones, formats); throws `XSvcNotifyTargetInvalid`. */
export function checkTargetSpec(spec: TargetSpec): TargetSpec {
  const def = TARGET_KEYS[spec.type];
  if (!def) throw bad(`unknown target type ${String(spec.type)} (one of ${TARGET_TYPES.join(', ')})`);
  if (!ID.test(spec.id)) throw bad(`target id ${JSON.stringify(spec.id)} must be 1-64 letters, digits, _ or -`);
  const allowed = new Set([...COMMON, ...def.keys]);
  for (const k of Object.keys(spec.settings)) {
    if (!allowed.has(k)) throw bad(`${spec.type} target ${spec.id}: unknown setting ${k} (known: ${[...allowed].join(', ')})`);
  }
  if (!spec.enabled) return spec;
  for (const k of def.required) {
    if (!spec.settings[k]) throw bad(`${spec.type} target ${spec.id}: ${k} is required`);
  }
  const limit = spec.settings.queue_limit;
  if (limit !== undefined && !(/^\d{1,9}$/.test(limit) && Number(limit) > 0)) throw bad(`${spec.type} target ${spec.id}: queue_limit must be a positive integer`);
  const format = spec.settings.format;
  if (format !== undefined && format !== 'namespace' && format !== 'access') throw bad(`${spec.type} target ${spec.id}: format must be namespace or access`);
  if (spec.type === 'webhook') {
    let u: URL;
    try {
      u = new URL(spec.settings.endpoint!);
    } catch {
      throw bad(`webhook target ${spec.id}: endpoint is not a URL`);
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw bad(`webhook target ${spec.id}: endpoint must be http:// or https://`);
  }
  if (spec.type === 'mqtt' && spec.settings.qos !== undefined && !/^[012]$/.test(spec.settings.qos)) throw bad(`mqtt target ${spec.id}: qos must be 0, 1 or 2`);
  return spec;
}

/**
 * Every target the environment configures. A target exists once its
 * `ENABLE` variable is set (on or off); settings of a target without one
 * are refused, so a typo does not leave a target silently unconfigured.
 */
export function targetsFromEnv(env: Readonly<Record<string, string | undefined>>, prefix = 'SVC_NOTIFY_'): TargetSpec[] {
  const found = new Map<string, TargetSpec>();
  const stray: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (!name.startsWith(prefix) || value === undefined) continue;
    const rest = name.slice(prefix.length);
    const type = TARGET_TYPES.find((t) => rest.startsWith(`${t.toUpperCase()}_`));
    if (!type) {
      stray.push(name);
      continue;
    }
    const tail = rest.slice(type.length + 1);
    const keys = [...COMMON, ...TARGET_KEYS[type].keys].sort((a, b) => b.length - a.length);
    const key = keys.find((k) => tail === k.toUpperCase() || tail.startsWith(`${k.toUpperCase()}_`));
    if (!key) {
      stray.push(name);
      continue;
    }
    const id = tail.length === key.length ? '_' : tail.slice(key.length + 1);
    const ref = `${type}:${id}`;
    let spec = found.get(ref);
    if (!spec) {
      spec = { type, id, enabled: false, settings: {} };
      found.set(ref, spec);
    }
    if (key === 'enable') spec.enabled = isOn(value);
    spec.settings[key] = value;
  }
  if (stray.length > 0) throw bad(`unknown notification variables: ${stray.join(', ')}`);
  const out: TargetSpec[] = [];
  for (const spec of found.values()) {
    if (spec.settings.enable === undefined) {
      throw bad(`${prefix}${spec.type.toUpperCase()}_ENABLE${spec.id === '_' ? '' : `_${spec.id}`} is not set, but other settings of that target are`);
    }
    delete spec.settings.enable;
    out.push(checkTargetSpec(spec));
  }
  return out.sort((a, b) => `${a.type}:${a.id}`.localeCompare(`${b.type}:${b.id}`));
}

/** `SVC_AUDIT_WEBHOOK_*[_<ID>]`: audit log webhooks (ENABLE, ENDPOINT, AUTH_TOKEN, QUEUE_DIR, QUEUE_LIMIT). */
export function parseAuditTargets(env: Readonly<Record<string, string | undefined>>): TargetSpec[] {
  const audit: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(env)) if (k.startsWith('SVC_AUDIT_')) audit[k] = v;
  let specs: TargetSpec[];
  try {
    specs = targetsFromEnv(audit, 'SVC_AUDIT_');
  } catch (err) {
    if (err instanceof SvcError) throw new SvcError('InvalidConfig', err.message, { variable: 'SVC_AUDIT_*' });
    throw err;
  }
  const other = specs.find((s) => s.type !== 'webhook');
  if (other) throw new SvcError('InvalidConfig', `SVC_AUDIT_${other.type.toUpperCase()}_*: the audit log goes to webhook targets only (SVC_AUDIT_WEBHOOK_*)`, { variable: 'SVC_AUDIT_*' });
  return specs;
}

/** `--help` lines for the notification variables. */
export const NOTIFY_CONFIG_VARIABLES: readonly (readonly [string, string])[] = [
  ['SVC_AUDIT_WEBHOOK_ENABLE[_<ID>]', 'on/off: an audit log webhook receiving one JSON record per S3 and admin request (ENDPOINT, AUTH_TOKEN, QUEUE_DIR, QUEUE_LIMIT as for notification webhooks)'],
  ['SVC_NOTIFY_<TYPE>_ENABLE[_<ID>]', `on/off: a bucket notification target (types: ${TARGET_TYPES.join(', ')}); ARN arn:svc:sqs::<ID>:<type>, ID _ without a suffix`],
  ['SVC_NOTIFY_<TYPE>_<KEY>[_<ID>]', 'the target\'s settings as MinIO names them (WEBHOOK_ENDPOINT, WEBHOOK_AUTH_TOKEN, REDIS_ADDRESS, ...; QUEUE_DIR, QUEUE_LIMIT for every type); see docs/notifications.md'],
];

/** `targetsFromEnv` for the start-up configuration: a bad setting stops start-up with `InvalidConfig`. */
export function parseNotifyTargets(env: Readonly<Record<string, string | undefined>>): TargetSpec[] {
  try {
    return targetsFromEnv(env);
  } catch (err) {
    if (err instanceof SvcError) throw new SvcError('InvalidConfig', err.message, { variable: 'SVC_NOTIFY_*' });
    throw err;
  }
}
