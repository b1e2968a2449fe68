/**
 * The heal and scanner members of the SPEC's ten metrics, from a real `svc
 * server` exporting to a real OTLP/HTTP receiver, driven by real heals:
 *
 * - the scanner's objects and cycles counters advance with each cycle and
 *   the last cycle's duration is a gauge;
 * - a read that finds bitrot queues a read-repair heal
 *   (`svc_heal_task_start_total{type="mrf"}`, its queue delay, the running
 *   gauge back at 0 once it ran);
 * - an admin heal starts `bucket` and `object` tasks; its request is an
 *   `admin Heal` span, and the heal it started runs outside that trace
 *   (no heal drive spans in it, no trace id on the heal's own log records);
 * - a wiped drive's rebuild starts `format` and `drive` tasks, and every
 *   started task finishes (running gauges back at 0).
 *
 * Every wait is for a condition (a data point, a rewritten file, a reported
 * state), never a fixed sleep; a metric that is not emitted fails the wait.
 */
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { CreateBucketCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReplacementRecoveryStatus } from '../src/object/admin/types.ts';
import { METRIC } from '../src/telemetry/names.ts';
import { bytes } from './engine-helpers.ts';
import { admin } from './helpers/admin.ts';
import { flipByte, getBytes, shardFile, until, wipe } from './helpers/heal-server.ts';
import { OtlpReceiver } from './helpers/otlp-receiver.ts';
import { runSvc, type SvcRun, tempDir } from './svc-process.ts';
import { keepAliveHandler } from './helpers/s3-client.ts';

const CREDS = { accessKey: 'healtelemetry', secretKey: 'heal-telemetry-secret' };
const OBJECTS = 5;
/** Generous: the machine running this may be shared and busy. */
const WAIT_MS = 45_000;
const TEST_MS = 180_000;

let receiver: OtlpReceiver;
let run: SvcRun;
let base: string;
let url: string;
let s3: S3Client;
const roots = () => [1, 2, 3, 4].map((i) => join(base, `d${i}`));

beforeAll(async () => {
  receiver = await OtlpReceiver.start();
  base = tempDir('heal-otlp');
  for (const r of roots()) mkdirSync(r);
  run = await runSvc(['server', `${base}/d{1...4}`], {
    SVC_ACCESS_KEY: CREDS.accessKey,
    SVC_SECRET_KEY: CREDS.secretKey,
    SVC_CONSOLE_ENABLE: 'false',
    SVC_OBS_ENDPOINT: receiver.url,
    SVC_OBS_METER_INTERVAL: '300ms',
    SVC_OBS_TRACE_SAMPLE_RATIO: '1',
    SVC_SCANNER_INTERVAL: '500ms',
  });
  expect(await run.started).toBe(true);
  url = `http://127.0.0.1:${run.port}`;
  await until('ready', async () => ((await fetch(`${url}/health/ready`)).status === 200 ? true : undefined), WAIT_MS);
  s3 = new S3Client({ requestHandler: keepAliveHandler(), endpoint: url, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: CREDS.accessKey, secretAccessKey: CREDS.secretKey } });
  await s3.send(new CreateBucketCommand({ Bucket: 'metrics' }));
  for (let i = 0; i < OBJECTS; i++) await s3.send(new PutObjectCommand({ Bucket: 'metrics', Key: `k${i}`, Body: bytes(2 * 1024 * 1024 + i, i) }));
}, TEST_MS);
afterAll(async () => {
  s3?.destroy();
  await run?.stop();
  await receiver?.close();
  rmSync(base, { recursive: true, force: true });
});

const mine = (p: { resource: Record<string, unknown> }) => p.resource['process.pid'] === run.child.pid;
const latest = (name: string, attrs: Record<string, string> = {}) =>
  receiver
    .points(name)
    .filter(mine)
    .filter((p) => Object.entries(attrs).every(([k, v]) => p.attributes[k] === v))
    .pop();
const valueOf = (name: string, attrs: Record<string, string> = {}) => latest(name, attrs)?.value ?? 0;
/** Waits until the counter reaches `atLeast`. */
const counterAtLeast = (name: string, attrs: Record<string, string>, atLeast: number, what: string) =>
  receiver.waitFor(() => (valueOf(name, attrs) >= atLeast ? latest(name, attrs) : undefined), WAIT_MS, what);
/** Waits until the running gauge of `type` on set 0.0 reads 0 (every started task finished). */
const noneRunning = (type: string) =>
  receiver.waitFor(() => (latest(METRIC.healRunning, { type, set: '0.0' })?.value === 0 ? true : undefined), WAIT_MS, `no ${type} heal task running`);

describe('heal and scanner metrics over OTLP', () => {
  it(
    'the scanner counters advance with each cycle; the last cycle duration is a gauge',
    async () => {
      const first = await receiver.waitFor(() => latest(METRIC.scannerCycles, { result: 'success' }), WAIT_MS, 'a scanner cycle');
      expect(first).toMatchObject({ type: 'sum', monotonic: true, temporality: 'CUMULATIVE' });
      const objects = await counterAtLeast(METRIC.scannerObjects, {}, OBJECTS, 'the objects scanned');
      expect(objects).toMatchObject({ type: 'sum', monotonic: true });
      await counterAtLeast(METRIC.scannerCycles, { result: 'success' }, first.value! + 2, 'two more cycles');
      // Two more full cycles visited every object at least once more.
      expect(valueOf(METRIC.scannerObjects)).toBeGreaterThanOrEqual(objects.value! + OBJECTS);
      const duration = latest(METRIC.scannerCycleDuration)!;
      expect(duration).toMatchObject({ type: 'gauge', unit: 's' });
      expect(duration.value).toBeGreaterThan(0);
      expect(duration.value).toBeLessThan(60);
    },
    TEST_MS,
  );

  it(
    'read-repair: a heal task of type mrf starts, waits in the queue, and runs no more',
    async () => {
      expect(latest(METRIC.healStarts, { type: 'mrf', set: '0.0' })).toBeUndefined();
      const [, file] = shardFile(roots(), 'metrics', 'k0', 1);
      const good = readFileSync(file);
      flipByte(file, 999);
      expect((await getBytes(s3, 'metrics', 'k0')).length).toBe(2 * 1024 * 1024);
      await until('the shard rewritten', () => readFileSync(file).equals(good) || undefined, WAIT_MS, 100);
      const starts = await counterAtLeast(METRIC.healStarts, { type: 'mrf', set: '0.0' }, 1, 'an mrf heal start');
      expect(starts).toMatchObject({ type: 'sum', monotonic: true });
      const delay = await receiver.waitFor(() => latest(METRIC.healQueueDelay, { type: 'mrf', set: '0.0' }), WAIT_MS, 'the mrf queue delay');
      expect(delay).toMatchObject({ type: 'histogram', unit: 's' });
      expect(delay.histogram!.count).toBeGreaterThanOrEqual(1);
      expect(delay.histogram!.sum).toBeGreaterThanOrEqual(0);
      await noneRunning('mrf');
      expect(latest(METRIC.healRunning, { type: 'mrf', set: '0.0' })).toMatchObject({ type: 'gauge' });
    },
    TEST_MS,
  );

  it(
    "an admin heal starts bucket and object tasks outside the request's trace; a wiped drive's rebuild starts format and drive tasks",
    async () => {
      const objectsBefore = valueOf(METRIC.healStarts, { type: 'object', set: '0.0' });
      const bucketsBefore = valueOf(METRIC.healStarts, { type: 'bucket', set: '0.0' });
      const start = await admin(url, CREDS, { method: 'POST', path: 'v3/heal/metrics', body: '{}' });
      expect(start.status, start.body).toBe(200);
      await counterAtLeast(METRIC.healStarts, { type: 'bucket', set: '0.0' }, bucketsBefore + 1, 'a bucket heal start');
      await counterAtLeast(METRIC.healStarts, { type: 'object', set: '0.0' }, objectsBefore + OBJECTS, 'an object heal start per object');
      await noneRunning('object');

      // The request is a span; the heal it started is background work, not part of its trace.
      const span = await receiver.waitFor(() => receiver.spans().find((s) => s.name === 'admin Heal' && mine(s)), WAIT_MS, 'the admin Heal span');
      expect(span).toMatchObject({ kind: 'SPAN_KIND_SERVER', parentSpanId: '' });
      expect(span.attributes['http.response.status_code']).toBe(200);
      const ended = await receiver.waitFor(
        () => receiver.logs().find((l) => mine(l) && l.eventName === 'worker_ended' && String(l.body).startsWith('heal ')),
        WAIT_MS,
        'the heal worker ended',
      );
      expect(ended.traceId).toBe('');
      const started = receiver.logs().find((l) => mine(l) && l.eventName === 'heal_sequence_started');
      expect(started?.traceId).toBe(span.traceId);
      expect(receiver.spans().filter((s) => s.traceId === span.traceId && s.name === 'drive checkParts')).toEqual([]);

      expect(latest(METRIC.healStarts, { type: 'format', set: '0.0' })).toBeUndefined();
      expect(latest(METRIC.healStarts, { type: 'drive', set: '0.0' })).toBeUndefined();
      wipe(roots()[3]!);
      await counterAtLeast(METRIC.healStarts, { type: 'format', set: '0.0' }, 1, 'a format heal start');
      await counterAtLeast(METRIC.healStarts, { type: 'drive', set: '0.0' }, OBJECTS, "the rebuild's drive heal starts");
      await until(
        'replacement recovery completed',
        async () => {
          const r = (await admin(url, CREDS, { method: 'GET', path: 'v4/heal/replacement-recovery' })).json() as ReplacementRecoveryStatus;
          return r.instances.find((x) => x.endpoint === roots()[3])?.state === 'completed' ? true : undefined;
        },
        WAIT_MS,
        250,
      );
      await noneRunning('format');
      await noneRunning('drive');
      const delay = await receiver.waitFor(() => latest(METRIC.healQueueDelay, { type: 'drive', set: '0.0' }), WAIT_MS, 'the drive queue delay');
      expect(delay.histogram!.count).toBeGreaterThanOrEqual(OBJECTS);
    },
    TEST_MS,
  );
});
