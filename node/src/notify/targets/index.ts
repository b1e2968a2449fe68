/**
 * Builds a target from its settings (`util/notify-config.ts`): one module
 * per protocol, each over its ecosystem's client library. Clients connect
 * on first use and reconnect after a failure, so building never waits on
 * the network. A protocol's module (and its client library) is loaded when
 * the first target of that type is built: a node without targets never
 * loads the Redis, NATS, AMQP, MQTT, PostgreSQL or MySQL clients (they
 * cost idle memory and start-up time; `node/test/lazy-libraries.test.ts`).
 */
import type { ClientTrust } from '../../tls/trust.ts';
import type { TargetSpec } from '../../util/notify-config.ts';
import { SvcError } from '../../util/errors.ts';
import type { Target } from './target.ts';
import { WebhookTarget } from './webhook.ts';

export interface TargetDeps {
  /** What https webhooks (and TLS brokers) are verified against: the node's CA set plus the system roots. */
  trust: ClientTrust;
}

export async function createTarget(spec: TargetSpec, deps: TargetDeps): Promise<Target> {
  const s = spec.settings;
  switch (spec.type) {
    case 'webhook':
      return new WebhookTarget({ id: spec.id, endpoint: s.endpoint!, ...(s.auth_token ? { authToken: s.auth_token } : {}), trust: deps.trust });
    case 'redis':
      return new (await import('./redis.ts')).RedisTarget({ id: spec.id, address: s.address!, key: s.key!, format: format(s.format), ...(s.user ? { user: s.user } : {}), ...(s.password ? { password: s.password } : {}) });
    case 'nats':
      return new (await import('./nats.ts')).NatsTarget({
        id: spec.id,
        address: s.address!,
        subject: s.subject!,
        ...(s.username ? { username: s.username } : {}),
        ...(s.password ? { password: s.password } : {}),
        ...(s.token ? { token: s.token } : {}),
      });
    case 'amqp':
      return new (await import('./amqp.ts')).AmqpTarget({
        id: spec.id,
        url: s.url!,
        ...(s.exchange ? { exchange: s.exchange } : {}),
        ...(s.exchange_type ? { exchangeType: s.exchange_type } : {}),
        ...(s.routing_key ? { routingKey: s.routing_key } : {}),
        ...(s.durable !== undefined ? { durable: on(s.durable) } : {}),
        ...(s.mandatory !== undefined ? { mandatory: on(s.mandatory) } : {}),
        ...(s.delivery_mode ? { deliveryMode: Number(s.delivery_mode) } : {}),
      });
    case 'mqtt':
      return new (await import('./mqtt.ts')).MqttTarget({
        id: spec.id,
        broker: s.broker!,
        topic: s.topic!,
        ...(s.qos !== undefined ? { qos: Number(s.qos) as 0 | 1 | 2 } : {}),
        ...(s.username ? { username: s.username } : {}),
        ...(s.password ? { password: s.password } : {}),
        ...(s.keep_alive_interval ? { keepAliveSeconds: seconds(s.keep_alive_interval) } : {}),
      });
    case 'postgresql':
      return new (await import('./postgresql.ts')).PostgresTarget({ id: spec.id, connectionString: s.connection_string!, table: s.table!, format: format(s.format), ...(s.max_open_connections ? { maxConnections: Number(s.max_open_connections) } : {}) });
    case 'mysql':
      return new (await import('./mysql.ts')).MysqlTarget({ id: spec.id, dsn: s.dsn_string!, table: s.table!, format: format(s.format), ...(s.max_open_connections ? { maxConnections: Number(s.max_open_connections) } : {}) });
    default:
      throw new SvcError('XSvcNotifyTargetInvalid', `unknown target type ${String(spec.type)}`);
  }
}

function format(v: string | undefined): 'namespace' | 'access' {
  return v === 'access' ? 'access' : 'namespace';
}

function on(v: string): boolean {
  return /^(on|true|1|yes)$/i.test(v.trim());
}

/** `10`, `10s`, `1m` as seconds. */
function seconds(v: string): number {
  const m = /^(\d+)(s|m)?$/.exec(v.trim());
  if (!m) throw new SvcError('XSvcNotifyTargetInvalid', `not a duration: ${v}`);
  return Number(m[1]) * (m[2] === 'm' ? 60 : 1);
}
