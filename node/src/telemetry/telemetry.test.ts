/**
 * The bridge end to end inside one process: events published on the
 * diagnostics channels exactly as their publishers do (the heal and scanner
 * events as the workers of issue 11 will publish them) arrive at a real
 * OTLP/HTTP receiver as the SPEC metrics, decoded with the OTLP protobuf
 * definitions.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { OtlpReceiver } from '../../test/helpers/otlp-receiver.ts';
import { sampleCapacity } from '../server/capacity.ts';
import { createDispatcher } from '../server/dispatcher.ts';
import { Readiness } from '../server/readiness.ts';
import { countStart } from '../server/start-counter.ts';
import { LocalDrive } from '../storage/local-drive.ts';
import { loadConfig } from '../util/config.ts';
import {
  capacitySampled,
  type HealTaskFinishedMessage,
  type HealTaskQueuedMessage,
  type HealTaskStartedMessage,
  healTaskFinished,
  healTaskQueued,
  healTaskStarted,
  httpRequestOperation,
  type LifecycleActionMessage,
  lifecycleAction,
  type ScannerCycleMessage,
  type ScannerObjectMessage,
  scannerCycle,
  scannerObject,
  setLabel,
} from '../util/diagnostics.ts';
import { silentLogger } from '../util/logger.ts';
import { METRIC, SPEC_METRICS } from './names.ts';
import { signalUrl } from './endpoints.ts';
import { startTelemetry, type Telemetry } from './telemetry.ts';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function obsConfig(env: Record<string, string>) {
  return loadConfig({ args: ['/data'], env, cwd: '/', readFile: () => '' }).config;
}

async function setup(env: Record<string, string> = {}): Promise<{ receiver: OtlpReceiver; telemetry: Telemetry }> {
  const receiver = await OtlpReceiver.start();
  cleanups.push(() => receiver.close());
  const config = obsConfig({ SVC_OBS_ENDPOINT: receiver.url, SVC_OBS_METER_INTERVAL: '200ms', SVC_OBS_SERVICE_NAME: 'svc-test', SVC_OBS_ENVIRONMENT: 'ci', ...env });
  const telemetry = startTelemetry({ obs: config.obs, address: { raw: '127.0.0.9:9000', host: '127.0.0.9', port: 9000 }, version: '1.2.3' });
  if (!telemetry) throw new Error('telemetry not started');
  cleanups.push(() => telemetry.shutdown());
  return { receiver, telemetry };
}

describe('endpoints and toggles', () => {
  it('no endpoint, or every signal toggled off: no telemetry at all', () => {
    const none = obsConfig({});
    expect(startTelemetry({ obs: none.obs, address: none.address, version: 'x' })).toBeUndefined();
    const off = obsConfig({
      SVC_OBS_ENDPOINT: 'http://127.0.0.1:1',
      SVC_OBS_METRICS_EXPORT_ENABLED: 'false',
      SVC_OBS_TRACES_EXPORT_ENABLED: 'false',
      SVC_OBS_LOGS_EXPORT_ENABLED: 'false',
    });
    expect(startTelemetry({ obs: off.obs, address: off.address, version: 'x' })).toBeUndefined();
  });

  it('the base endpoint gets the OTLP signal paths; a per-signal endpoint is used as given', () => {
    const c = obsConfig({ SVC_OBS_ENDPOINT: 'http://collector:4318/', SVC_OBS_TRACE_ENDPOINT: 'http://tempo:4318/v1/traces', SVC_OBS_LOGS_EXPORT_ENABLED: 'off' });
    expect(signalUrl(c.obs, 'metrics')).toBe('http://collector:4318/v1/metrics');
    expect(signalUrl(c.obs, 'traces')).toBe('http://tempo:4318/v1/traces');
    expect(signalUrl(c.obs, 'logs')).toBeUndefined();
    expect(signalUrl(obsConfig({ SVC_OBS_METRIC_ENDPOINT: 'http://m:4318/v1/metrics' }).obs, 'metrics')).toBe('http://m:4318/v1/metrics');
  });
});

describe('the SPEC metrics over OTLP/HTTP', () => {
  it('heal and scanner events, readiness, starts and capacity arrive with their types, labels and values', async () => {
    const { receiver } = await setup();

    // Scanner: three objects, two cycles.
    for (const object of ['a', 'b', 'c']) scannerObject.publish({ bucket: 'photos', object } satisfies ScannerObjectMessage);
    scannerCycle.publish({ result: 'success', durationSeconds: 12.5 } satisfies ScannerCycleMessage);
    scannerCycle.publish({ result: 'partial', durationSeconds: 3 } satisfies ScannerCycleMessage);
    // Heal: two object heals queued on set 0.1, both start (waited 2 s and 40 s), one finishes.
    const set = setLabel(0, 1);
    healTaskQueued.publish({ type: 'object', set } satisfies HealTaskQueuedMessage);
    healTaskQueued.publish({ type: 'object', set } satisfies HealTaskQueuedMessage);
    healTaskStarted.publish({ type: 'object', set, queueDelaySeconds: 2 } satisfies HealTaskStartedMessage);
    healTaskStarted.publish({ type: 'object', set, queueDelaySeconds: 40 } satisfies HealTaskStartedMessage);
    healTaskFinished.publish({ type: 'object', set, result: 'success' } satisfies HealTaskFinishedMessage);
    // Readiness: a real evaluator losing storage quorum, then recovering.
    const readiness = new Readiness({ lock: true, peers: true });
    readiness.update({ storageRead: true, storageWrite: true, iam: true, finalized: true });
    readiness.update({ storageRead: false, storageWrite: false });
    readiness.update({ storageRead: false, storageWrite: false });
    // Starts: the persisted counter on a real drive folder, bumped twice.
    const dir = await mkdtemp(join(tmpdir(), 'svc-telemetry-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    await countStart([dir], silentLogger);
    await countStart([dir], silentLogger);
    // Capacity: a sample of a real local drive.
    const drive = new LocalDrive(dir);
    const sample = await sampleCapacity([drive]);
    expect(sample.usedBytes).toBeGreaterThan(0);
    capacitySampled.publish(sample);

    const pointsOf = () => new Set(receiver.points().map((p) => p.name));
    await receiver.waitFor(() => SPEC_METRICS.every((n) => pointsOf().has(n)) && receiver.latest(METRIC.readinessReady)?.value === 0, 20_000, 'all ten metrics');

    const p = (name: string, match = {}) => receiver.latest(name, match)!;
    expect(p(METRIC.readinessReady)).toMatchObject({ type: 'gauge', value: 0 });
    expect(p(METRIC.readinessDegraded, { reason: 'storage_quorum_unavailable' })).toMatchObject({ type: 'sum', monotonic: true, temporality: 'CUMULATIVE', value: 2 });
    expect(p(METRIC.scannerObjects)).toMatchObject({ type: 'sum', monotonic: true, value: 3 });
    expect(p(METRIC.scannerCycles, { result: 'success' })).toMatchObject({ type: 'sum', monotonic: true, value: 1 });
    expect(p(METRIC.scannerCycles, { result: 'partial' })).toMatchObject({ type: 'sum', value: 1 });
    expect(p(METRIC.scannerCycleDuration)).toMatchObject({ type: 'gauge', unit: 's', value: 3 });
    expect(p(METRIC.healRunning, { type: 'object', set: '0.1' })).toMatchObject({ type: 'gauge', value: 1 });
    expect(p(METRIC.healStarts, { type: 'object', set: '0.1' })).toMatchObject({ type: 'sum', monotonic: true, value: 2 });
    const delay = p(METRIC.healQueueDelay, { type: 'object', set: '0.1' });
    expect(delay).toMatchObject({ type: 'histogram', temporality: 'CUMULATIVE', unit: 's' });
    expect(delay.histogram).toMatchObject({ count: 2, sum: 42 });
    expect(delay.histogram!.bounds).toContain(30);
    expect(p(METRIC.capacityUsed)).toMatchObject({ type: 'gauge', unit: 'By', value: sample.usedBytes });
    expect(p(METRIC.starts)).toMatchObject({ type: 'sum', monotonic: true, value: 2 });

    // Resource attributes.
    expect(p(METRIC.starts).resource).toMatchObject({
      'service.name': 'svc-test',
      'service.version': '1.2.3',
      'deployment.environment': 'ci',
      'service.instance.id': '127.0.0.9:9000',
      'svc.node.endpoint': '127.0.0.9:9000',
    });
    expect(typeof p(METRIC.starts).resource['host.name']).toBe('string');
    expect(receiver.contentTypes.get('application/x-protobuf')).toBeGreaterThan(0);

    // Recovery flips the gauge back; the heal finishing empties the running gauge.
    readiness.update({ storageRead: true, storageWrite: true });
    healTaskFinished.publish({ type: 'object', set, result: 'error' } satisfies HealTaskFinishedMessage);
    await receiver.waitFor(() => receiver.latest(METRIC.readinessReady)?.value === 1 && receiver.latest(METRIC.healRunning)?.value === 0, 10_000, 'recovery');
  });

  it('lifecycle outcomes arrive as one counter labelled by outcome', async () => {
    const { receiver } = await setup({ SVC_OBS_TRACES_EXPORT_ENABLED: 'false', SVC_OBS_LOGS_EXPORT_ENABLED: 'false' });
    lifecycleAction.publish({ outcome: 'version_deleted', count: 3 } satisfies LifecycleActionMessage);
    lifecycleAction.publish({ outcome: 'version_deleted', count: 2 } satisfies LifecycleActionMessage);
    lifecycleAction.publish({ outcome: 'upload_aborted', count: 1 } satisfies LifecycleActionMessage);
    const deleted = await receiver.waitFor(() => receiver.latest(METRIC.lifecycleActions, { outcome: 'version_deleted' }), 10_000, 'lifecycle metric');
    expect(deleted).toMatchObject({ type: 'sum', monotonic: true, value: 5, unit: '{action}' });
    await receiver.waitFor(() => receiver.latest(METRIC.lifecycleActions, { outcome: 'upload_aborted' })?.value === 1, 10_000, 'aborted uploads');
  });

  it('http/json encoding carries the same metrics', async () => {
    const { receiver } = await setup({ SVC_OBS_PROTOCOL: 'http/json', SVC_OBS_TRACES_EXPORT_ENABLED: 'false', SVC_OBS_LOGS_EXPORT_ENABLED: 'false' });
    scannerCycle.publish({ result: 'error', durationSeconds: 1 } satisfies ScannerCycleMessage);
    const pt = await receiver.waitFor(() => receiver.latest(METRIC.scannerCycles, { result: 'error' }), 10_000, 'json metrics');
    expect(pt).toMatchObject({ type: 'sum', value: 1 });
    expect(receiver.contentTypes.get('application/json')).toBeGreaterThan(0);
    expect(receiver.contentTypes.get('application/x-protobuf')).toBeUndefined();
  });

  it("the runtime's event loop, collections and heap arrive under OpenTelemetry's Node.js and V8 names", async () => {
    const { receiver } = await setup({ SVC_OBS_TRACES_EXPORT_ENABLED: 'false', SVC_OBS_LOGS_EXPORT_ENABLED: 'false' });
    // Garbage for the young generation (collections are observed as they happen) and a loop held for 250 ms,
    // once the delay sampling has a first tick to measure from.
    await new Promise((r) => setTimeout(r, 100));
    let keep = 0;
    for (let i = 0; i < 200_000; i++) keep += JSON.stringify({ i, pad: 'x'.repeat(64) }).length;
    expect(keep).toBeGreaterThan(0);
    const until = Date.now() + 250;
    while (Date.now() < until) {
      // the event loop is blocked on purpose: the delay gauges must see it
    }
    const gc = await receiver.waitFor(() => receiver.latest('v8js.gc.duration', { 'v8js.gc.type': 'minor' }), 10_000, 'collection durations');
    expect(gc).toMatchObject({ type: 'histogram', unit: 's', temporality: 'CUMULATIVE' });
    expect(gc.histogram!.count).toBeGreaterThan(0);
    // Each export reports the delays since the one before: the held loop is in one of them.
    const delayMax = await receiver.waitFor(() => receiver.points().find((p) => p.name === 'nodejs.eventloop.delay.max' && (p.value ?? 0) >= 0.15), 10_000, 'the held loop in the delay');
    expect(delayMax).toMatchObject({ type: 'gauge', unit: 's' });
    const utilization = await receiver.waitFor(() => receiver.latest('nodejs.eventloop.utilization'), 10_000, 'utilization');
    expect(utilization.value).toBeGreaterThan(0);
    expect(utilization.value).toBeLessThanOrEqual(1);
    const oldSpace = await receiver.waitFor(() => receiver.latest('v8js.memory.heap.used', { 'v8js.heap.space.name': 'old_space' }), 10_000, 'heap spaces');
    expect(oldSpace).toMatchObject({ type: 'gauge', unit: 'By' });
    expect(oldSpace.value).toBeGreaterThan(0);
    // The same resource as every other metric of the node.
    expect(oldSpace.resource).toMatchObject({ 'service.name': 'svc-test', 'svc.node.endpoint': '127.0.0.9:9000' });

  });

  it('after shutdown nothing listens: publishing costs nothing and reaches nobody', async () => {
    const { telemetry } = await setup();
    expect(scannerCycle.hasSubscribers).toBe(true);
    await telemetry.shutdown();
    expect(scannerCycle.hasSubscribers).toBe(false);
    expect(healTaskStarted.hasSubscribers).toBe(false);
  });
});

describe('trace sampling', () => {
  it('a traceparent decides for its request; requests without one start a trace at the configured ratio', async () => {
    const { receiver } = await setup({ SVC_OBS_TRACE_SAMPLE_RATIO: '0', SVC_OBS_METRICS_EXPORT_ENABLED: 'false' });
    const readiness = new Readiness({ lock: true, peers: true });
    readiness.update({ storageRead: true, storageWrite: true, iam: true, finalized: true });
    const dispatcher = createDispatcher({
      health: readiness,
      healthEnabled: true,
      logger: silentLogger,
      handlers: {
        s3: (req, res) => {
          if (httpRequestOperation.hasSubscribers) httpRequestOperation.publish({ req, operation: 'HeadBucket' });
          res.end();
        },
      },
    });
    const server = createServer(dispatcher.handle);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise<void>((r) => server.close(() => r())));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/bucket`;
    const ids = (flags: string) => ({ trace: randomBytes(16).toString('hex'), parent: randomBytes(8).toString('hex'), flags });
    const sampled = ids('01');
    const unsampled = ids('00');
    await fetch(url, { method: 'HEAD' });
    await fetch(url, { method: 'HEAD', headers: { traceparent: `00-${unsampled.trace}-${unsampled.parent}-${unsampled.flags}` } });
    await fetch(url, { method: 'HEAD', headers: { traceparent: `00-${sampled.trace}-${sampled.parent}-${sampled.flags}` } });
    const span = await receiver.waitFor(() => receiver.spans().find((x) => x.traceId === sampled.trace), 10_000, 'sampled span');
    expect(span).toMatchObject({ name: 'S3 HeadBucket', parentSpanId: sampled.parent, kind: 'SPAN_KIND_SERVER' });
    await new Promise((r) => setTimeout(r, 1_500));
    expect(receiver.spans()).toHaveLength(1);
  });
});

describe('the reference setup and the docs', () => {
  const repo = join(import.meta.dirname, '..', '..', '..');

  it('config/otel-collector.yaml: OTLP in on 4317/4318, Prometheus out on 8889, own metrics on 8888', () => {
    const c = parseYaml(readFileSync(join(repo, 'config', 'otel-collector.yaml'), 'utf8')) as {
      receivers: { otlp: { protocols: { grpc: { endpoint: string }; http: { endpoint: string } } } };
      exporters: { prometheus: { endpoint: string } };
      service: { telemetry: { metrics: { readers: { pull: { exporter: { prometheus: { port: number } } } }[] } }; pipelines: Record<string, { receivers: string[]; exporters: string[] }> };
    };
    expect(c.receivers.otlp.protocols.grpc.endpoint).toMatch(/:4317$/);
    expect(c.receivers.otlp.protocols.http.endpoint).toMatch(/:4318$/);
    expect(c.exporters.prometheus.endpoint).toMatch(/:8889$/);
    expect(c.service.telemetry.metrics.readers[0]!.pull.exporter.prometheus.port).toBe(8888);
    for (const signal of ['metrics', 'traces', 'logs']) expect(c.service.pipelines[signal]!.receivers).toContain('otlp');
    expect(c.service.pipelines['metrics']!.exporters).toContain('prometheus');
  });

  it('docs/telemetry.md names every metric, every channel and the SPEC alert conditions', async () => {
    const doc = readFileSync(join(repo, 'docs', 'telemetry.md'), 'utf8');
    for (const name of Object.values(METRIC)) expect(doc).toContain(`\`${name}\``);
    const dc = await import('../util/diagnostics.ts');
    for (const v of Object.values(dc)) {
      const name = (v as { name?: unknown }).name;
      if (typeof name === 'string' && name.startsWith('svc:')) expect(doc).toContain(name.replace(/:(start|end)$/, ''));
    }
    for (const rule of ['svc_runtime_readiness_ready == 0', 'increase(svc_start_total[10m]) > 3', 'increase(svc_scanner_cycles_total[24h]) == 0', 'svc_heal_task_running', 'svc_capacity_current_bytes']) {
      expect(doc).toContain(rule);
    }
  });
});
