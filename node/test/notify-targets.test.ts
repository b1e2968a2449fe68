/**
 * Bucket events to every queue and database target, against real servers
 * from Debian's packages started here in temp directories on their own
 * loopback ports (nats-server, rabbitmq-server, mosquitto, redis-server,
 * PostgreSQL, MariaDB), through one real `svc` process. Each target's
 * bucket runs the same workload (PUT, multipart complete, copy, delete,
 * delete marker, writes the filters drop): the message targets and the
 * access formats receive exactly the expected AWS records in order; the
 * namespace formats hold one entry per live object (the deleted ones gone).
 */
import { join } from 'node:path';
import { connect as natsConnect } from '@nats-io/transport-node';
import amqp from 'amqplib';
import mqtt from 'mqtt';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Expected, expectRecords, runStandardWorkload, s3Client, startNotifyServer, until } from './helpers/notify.ts';
import { type Service, startAll, startMariaDb, startMosquitto, startNats, startPostgres, startRabbitMq, startRedis } from './helpers/services.ts';
import { type SvcRun, tempDir } from './svc-process.ts';

let work: string;
let srv: SvcRun;
let endpoint: string;
const services: Service[] = [];
let redis: Service;
let nats: Service;
let mosq: Service;
let rabbit: Service & { url: string };
let postgres: Service & { url: string };
let maria: Service & { dsn: string; url: string };
const cleanup: (() => Promise<unknown>)[] = [];

/** Bodies received by the message targets' subscribers. */
const natsGot: Record<string, unknown>[] = [];
const mqttGot: Record<string, unknown>[] = [];
const amqpGot: Record<string, unknown>[] = [];

/** A JSON column as mysql2 hands it over: parsed already (MySQL's JSON type) or as text (MariaDB's JSON is LONGTEXT). */
function json<T>(v: unknown): T {
  return (typeof v === 'string' ? JSON.parse(v) : v) as T;
}

function firstRecord(text: string): Record<string, unknown> {
  return (JSON.parse(text) as { Records: Record<string, unknown>[] }).Records[0]!;
}

beforeAll(async () => {
  work = tempDir('notify-targets');
  // The servers start in parallel (RabbitMQ's Erlang VM takes the longest).
  [redis, nats, mosq, rabbit, postgres, maria] = await startAll([
    startRedis(join(work, 'redis')),
    startNats(join(work, 'nats')),
    startMosquitto(join(work, 'mosquitto')),
    startRabbitMq(join(work, 'rabbitmq')),
    startPostgres(),
    startMariaDb(join(work, 'mariadb')),
  ] as const);
  services.push(redis, nats, mosq, rabbit, postgres, maria);
  const my = await mysql.createConnection(maria.url.replace(/\/events$/, '/'));
  await my.query('CREATE DATABASE events');
  await my.end();

  // Subscribers first, so nothing published is missed.
  const nc = await natsConnect({ servers: `127.0.0.1:${nats.port}` });
  const sub = nc.subscribe('svc.events');
  void (async () => {
    for await (const m of sub) natsGot.push(firstRecord(m.string()));
  })();
  cleanup.push(() => nc.close());
  const mc = await mqtt.connectAsync(`mqtt://127.0.0.1:${mosq.port}`);
  await mc.subscribeAsync('svc/events', { qos: 1 });
  mc.on('message', (_t, p) => mqttGot.push(firstRecord(p.toString())));
  cleanup.push(() => mc.endAsync());
  const ac = await amqp.connect(rabbit.url);
  const ch = await ac.createChannel();
  await ch.assertExchange('svc-events', 'fanout', { durable: true });
  const q = await ch.assertQueue('', { exclusive: true });
  await ch.bindQueue(q.queue, 'svc-events', '');
  await ch.consume(q.queue, (m) => {
    if (m) {
      amqpGot.push(firstRecord(m.content.toString()));
      ch.ack(m);
    }
  });
  cleanup.push(() => ac.close());

  ({ srv, endpoint } = await startNotifyServer(work, {
    SVC_NOTIFY_NATS_ENABLE_n1: 'on',
    SVC_NOTIFY_NATS_ADDRESS_n1: `127.0.0.1:${nats.port}`,
    SVC_NOTIFY_NATS_SUBJECT_n1: 'svc.events',
    SVC_NOTIFY_MQTT_ENABLE_m1: 'on',
    SVC_NOTIFY_MQTT_BROKER_m1: `tcp://127.0.0.1:${mosq.port}`,
    SVC_NOTIFY_MQTT_TOPIC_m1: 'svc/events',
    SVC_NOTIFY_MQTT_QOS_m1: '1',
    SVC_NOTIFY_AMQP_ENABLE_a1: 'on',
    SVC_NOTIFY_AMQP_URL_a1: rabbit.url,
    SVC_NOTIFY_AMQP_EXCHANGE_a1: 'svc-events',
    SVC_NOTIFY_AMQP_EXCHANGE_TYPE_a1: 'fanout',
    SVC_NOTIFY_REDIS_ENABLE_ns: 'on',
    SVC_NOTIFY_REDIS_ADDRESS_ns: `127.0.0.1:${redis.port}`,
    SVC_NOTIFY_REDIS_KEY_ns: 'bucketevents',
    SVC_NOTIFY_REDIS_FORMAT_ns: 'namespace',
    SVC_NOTIFY_REDIS_ENABLE_acc: 'on',
    SVC_NOTIFY_REDIS_ADDRESS_acc: `127.0.0.1:${redis.port}`,
    SVC_NOTIFY_REDIS_KEY_acc: 'eventlog',
    SVC_NOTIFY_REDIS_FORMAT_acc: 'access',
    SVC_NOTIFY_POSTGRESQL_ENABLE_ns: 'on',
    SVC_NOTIFY_POSTGRESQL_CONNECTION_STRING_ns: postgres.url,
    SVC_NOTIFY_POSTGRESQL_TABLE_ns: 'bucketevents',
    SVC_NOTIFY_POSTGRESQL_FORMAT_ns: 'namespace',
    SVC_NOTIFY_POSTGRESQL_ENABLE_acc: 'on',
    SVC_NOTIFY_POSTGRESQL_CONNECTION_STRING_acc: postgres.url,
    SVC_NOTIFY_POSTGRESQL_TABLE_acc: 'eventlog',
    SVC_NOTIFY_POSTGRESQL_FORMAT_acc: 'access',
    SVC_NOTIFY_MYSQL_ENABLE_ns: 'on',
    SVC_NOTIFY_MYSQL_DSN_STRING_ns: maria.dsn,
    SVC_NOTIFY_MYSQL_TABLE_ns: 'bucketevents',
    SVC_NOTIFY_MYSQL_FORMAT_ns: 'namespace',
    SVC_NOTIFY_MYSQL_ENABLE_acc: 'on',
    SVC_NOTIFY_MYSQL_DSN_STRING_acc: maria.dsn,
    SVC_NOTIFY_MYSQL_TABLE_acc: 'eventlog',
    SVC_NOTIFY_MYSQL_FORMAT_acc: 'access',
  }));
}, 180_000);

afterAll(async () => {
  await srv?.stop();
  for (const c of cleanup) await c().catch(() => undefined);
  await Promise.all(services.map((s) => s.stop()));
});

/** Runs the standard workload on a bucket of its own sending to `arn`. */
async function workload(bucket: string, arn: string): Promise<Expected[]> {
  return runStandardWorkload(s3Client(endpoint), bucket, arn);
}

async function settle<T>(what: string, read: () => Promise<T[]>, n: number): Promise<T[]> {
  const got = await until(what, async () => {
    const r = await read();
    return r.length >= n ? r : undefined;
  });
  // and no more than that
  await new Promise((r) => setTimeout(r, 300));
  expect((await read()).length).toBe(n);
  return got;
}

describe('queue and database targets against real servers', () => {
  it('NATS: each event published on the subject', async () => {
    const want = await workload('to-nats', 'arn:svc:sqs::n1:nats');
    expectRecords(await settle('NATS messages', async () => natsGot, want.length), want);
  });

  it('MQTT (mosquitto): each event published on the topic at QoS 1', async () => {
    const want = await workload('to-mqtt', 'arn:svc:sqs::m1:mqtt');
    expectRecords(await settle('MQTT messages', async () => mqttGot, want.length), want);
  });

  it('AMQP 0-9-1 (RabbitMQ): each event published to the exchange with publisher confirms', async () => {
    const want = await workload('to-amqp', 'arn:svc:sqs::a1:amqp');
    expectRecords(await settle('AMQP messages', async () => amqpGot, want.length), want);
  });

  it('Redis: access format appends every event, namespace format keeps one field per live object', async () => {
    const wantNs = await workload('to-redis-ns', 'arn:svc:sqs::ns:redis');
    const wantAcc = await workload('to-redis-acc', 'arn:svc:sqs::acc:redis');
    const rc = createClient({ url: `redis://127.0.0.1:${redis.port}` });
    await rc.connect();
    try {
      const list = await settle('Redis list entries', () => rc.lRange('eventlog', 0, -1), wantAcc.length);
      const entries = list.map((l) => JSON.parse(l) as [{ Event: Record<string, unknown>[]; EventTime: string }]);
      expect(entries.every((e) => typeof e[0].EventTime === 'string')).toBe(true);
      expectRecords(
        entries.map((e) => e[0].Event[0]!),
        wantAcc,
      );
      // namespace: the PUT object stays; the copy (deleted) and the multipart object (delete marker) are gone
      const hash = await until('the Redis hash to settle', async () => {
        const h = await rc.hGetAll('bucketevents');
        return Object.keys(h).length === 1 ? h : undefined;
      });
      expect(Object.keys(hash)).toEqual(['to-redis-ns/img/a b+é.jpg']);
      const body = JSON.parse(hash['to-redis-ns/img/a b+é.jpg']!) as { EventName: string; Key: string; Records: Record<string, unknown>[] };
      expect(body.EventName).toBe('s3:ObjectCreated:Put');
      expectRecords(body.Records, [wantNs[0]!]);
    } finally {
      await rc.quit();
    }
  });

  it('PostgreSQL: access format inserts every event, namespace format upserts and deletes per object', async () => {
    const wantNs = await workload('to-pg-ns', 'arn:svc:sqs::ns:postgresql');
    const wantAcc = await workload('to-pg-acc', 'arn:svc:sqs::acc:postgresql');
    const c = new pg.Client({ connectionString: postgres.url });
    await c.connect();
    try {
      const rows = await settle(
        'PostgreSQL access rows',
        async () => (await c.query<{ event_time: Date; event_data: { Records: Record<string, unknown>[] } }>('SELECT event_time, event_data FROM eventlog ORDER BY event_time, ctid').catch(() => ({ rows: [] }))).rows,
        wantAcc.length,
      );
      expect(rows.every((r) => r.event_time instanceof Date)).toBe(true);
      expectRecords(
        rows.map((r) => r.event_data.Records[0]!),
        wantAcc,
      );
      const ns = await until('the PostgreSQL namespace table to settle', async () => {
        const r = await c.query<{ key: string; value: { Records: Record<string, unknown>[] } }>('SELECT key, value FROM bucketevents').catch(() => ({ rows: [] }));
        return r.rows.length === 1 ? r.rows : undefined;
      });
      expect(ns[0]!.key).toBe('to-pg-ns/img/a b+é.jpg');
      expectRecords(ns[0]!.value.Records, [wantNs[0]!]);
    } finally {
      await c.end();
    }
  });

  it('MySQL (MariaDB): access format inserts every event, namespace format upserts and deletes per object', async () => {
    const wantNs = await workload('to-my-ns', 'arn:svc:sqs::ns:mysql');
    const wantAcc = await workload('to-my-acc', 'arn:svc:sqs::acc:mysql');
    const c = await mysql.createConnection(maria.url);
    try {
      const rows = await settle(
        'MariaDB access rows',
        async () => ((await c.query('SELECT event_time, event_data FROM eventlog').catch(() => [[]]))[0] as { event_data: unknown }[]),
        wantAcc.length,
      );
      expectRecords(
        rows.map((r) => json<{ Records: Record<string, unknown>[] }>(r.event_data).Records[0]!),
        wantAcc,
      );
      const ns = await until('the MariaDB namespace table to settle', async () => {
        const [r] = (await c.query('SELECT key_name, value FROM bucketevents').catch(() => [[]])) as unknown as [{ key_name: string; value: unknown }[]];
        return r.length === 1 ? r : undefined;
      });
      expect(ns[0]!.key_name).toBe('to-my-ns/img/a b+é.jpg');
      expectRecords(json<{ Records: Record<string, unknown>[] }>(ns[0]!.value).Records, [wantNs[0]!]);
    } finally {
      await c.end();
    }
  });
});
