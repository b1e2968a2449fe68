/**
 * Telemetry of the process: OpenTelemetry's NodeSDK over OTLP/HTTP, set up
 * from `SVC_OBS_*` (`config.obs`), and the bridge from the diagnostics
 * channels. `startTelemetry` returns undefined when no signal has both an
 * endpoint and its toggle on: then nothing is subscribed, no exporter exists,
 * and the request path pays nothing.
 *
 * Endpoints follow OTLP's convention: the base endpoint (`SVC_OBS_ENDPOINT`,
 * e.g. `http://otel-collector:4318`) gets `/v1/metrics`, `/v1/traces`,
 * `/v1/logs` appended; a per-signal endpoint is used as given.
 *
 * An unreachable collector never slows a request nor grows memory without
 * bound: spans and log records wait in bounded queues (dropped when full,
 * both counted: backlog.ts),
 * exports run in the background with a timeout and a cap on exports in
 * flight, and metrics are aggregates whose size depends on label values only.
 */
import { hostname } from 'node:os';
import { context, type Meter, metrics, propagation, type Tracer, trace, logs, type Logger as OtelLogger } from '@opentelemetry/api';
import { setGlobalErrorHandler, W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPLogExporter as OTLPLogExporterJson } from '@opentelemetry/exporter-logs-otlp-http';
import { OTLPLogExporter as OTLPLogExporterProto } from '@opentelemetry/exporter-logs-otlp-proto';
import { OTLPMetricExporter as OTLPMetricExporterJson } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPMetricExporter as OTLPMetricExporterProto } from '@opentelemetry/exporter-metrics-otlp-proto';
import { OTLPTraceExporter as OTLPTraceExporterJson } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OTLPTraceExporterProto } from '@opentelemetry/exporter-trace-otlp-proto';
import { envDetector, hostDetector, osDetector, processDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BatchLogRecordProcessor } from '@opentelemetry/sdk-logs';
import { PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { RuntimeNodeInstrumentation } from '@opentelemetry/instrumentation-runtime-node';
import { AlwaysOnSampler, BatchSpanProcessor, ParentBasedSampler } from '@opentelemetry/sdk-trace';
import type { ListenAddress, ObsConfig } from '../util/config.ts';
import { type Signal, signalUrl } from './endpoints.ts';
import type { Logger } from '../util/logger.ts';
import { boundedLogRecordProcessor, boundedSpanProcessor, type BacklogCounts, ExportBacklog } from './backlog.ts';
import { startBridge } from './bridge.ts';
import { ChannelContextManager } from './context-manager.ts';
import { OtlpLogStream } from './log-export.ts';
import { METRIC } from './names.ts';

export const DEFAULT_METER_INTERVAL_MS = 60_000;
/**
 * How often the event-loop delay is sampled, ms (a timer of that period runs
 * while metrics are exported): delays that matter to S3 clients are tens of
 * milliseconds and more; the library's 10 ms default wakes an idle node twice
 * as often for nothing.
 */
export const RUNTIME_DELAY_RESOLUTION_MS = 20;
/** Bounds of the span and log-record queues (records dropped beyond). */
export const MAX_QUEUED_SPANS = 2048;
export const MAX_QUEUED_LOG_RECORDS = 2048;
export const EXPORT_TIMEOUT_MS = 10_000;
/** Exports in flight per signal; more are refused at once instead of piling up. */
export const MAX_EXPORTS_IN_FLIGHT = 4;

/** The node's endpoint (`service.instance.id`): the listen address, with the host name for a wildcard bind. */
export function nodeEndpoint(address: ListenAddress): string {
  const host = address.host === '' || address.host === '0.0.0.0' || address.host === '::' ? hostname() : address.host;
  return `${host.includes(':') ? `[${host}]` : host}:${address.port}`;
}

export interface TelemetryOptions {
  readonly obs: ObsConfig;
  readonly address: ListenAddress;
  readonly version: string;
  /** Log records the remote log destination dropped so far (exported as a counter). */
  readonly droppedLogRecords?: () => number;
}

export interface Telemetry {
  /** Signals with an exporter. */
  readonly signals: ReadonlySet<Signal>;
  /** The pino destination that turns each record into an OTLP log record (logs on). */
  readonly logStream: OtlpLogStream | undefined;
  /** pino `mixin`: the active trace context of each record (traces on). */
  readonly logMixin: (() => object) | undefined;
  /** Where the SDK reports its own export failures (rate-limited). */
  setLogger(log: Logger): void;
  /** The span and log-record export queues, counted (`svc.telemetry.queue.size`, `svc.telemetry.records.dropped`). */
  backlog(): { traces: BacklogCounts | undefined; logs: BacklogCounts | undefined };
  /** Exports everything pending now. */
  flush(): Promise<void>;
  /** Flushes (at most `timeoutMs`) and stops every exporter; unsubscribes the bridge. */
  shutdown(timeoutMs?: number): Promise<void>;
}

export function startTelemetry(opts: TelemetryOptions): Telemetry | undefined {
  const { obs } = opts;
  const urls = { metrics: signalUrl(obs, 'metrics'), traces: signalUrl(obs, 'traces'), logs: signalUrl(obs, 'logs') };
  const signals = new Set((Object.keys(urls) as Signal[]).filter((s) => urls[s] !== undefined));
  if (signals.size === 0) return undefined;

  const json = obs.protocol === 'http/json';
  const exporterOpts = (url: string) => ({ url, timeoutMillis: EXPORT_TIMEOUT_MS, concurrencyLimit: MAX_EXPORTS_IN_FLIGHT });
  const endpoint = nodeEndpoint(opts.address);
  const contextManager = new ChannelContextManager();
  const intervalMs = obs.meterIntervalMs ?? DEFAULT_METER_INTERVAL_MS;
  // Counted queues (backlog.ts): what each batch processor holds and drops, visible as metrics.
  const spanBacklog = new ExportBacklog(MAX_QUEUED_SPANS);
  const logBacklog = new ExportBacklog(MAX_QUEUED_LOG_RECORDS);

  // The runtime's own health, under OpenTelemetry's Node.js and V8 names: event-loop delay,
  // utilization and time, collections by kind, heap spaces, active handles (docs/telemetry.md).
  const runtime = signals.has('metrics') ? new RuntimeNodeInstrumentation({ monitoringPrecision: RUNTIME_DELAY_RESOLUTION_MS }) : undefined;

  const sdk = new NodeSDK({
    resource: resourceFromAttributes({
      'service.name': obs.serviceName,
      'service.version': opts.version,
      'service.instance.id': endpoint,
      'svc.node.endpoint': endpoint,
      ...(obs.environment !== undefined ? { 'deployment.environment': obs.environment, 'deployment.environment.name': obs.environment } : {}),
    }),
    // host.name, process and OS attributes; OTEL_RESOURCE_ATTRIBUTES last (the operator's word wins).
    resourceDetectors: [hostDetector, processDetector, osDetector, envDetector],
    contextManager,
    textMapPropagator: new W3CTraceContextPropagator(),
    // Explicit (possibly empty) lists: NodeSDK would otherwise build exporters from OTEL_* variables.
    metricReaders:
      urls.metrics === undefined
        ? []
        : [
            new PeriodicExportingMetricReader({
              exporter: json ? new OTLPMetricExporterJson(exporterOpts(urls.metrics)) : new OTLPMetricExporterProto(exporterOpts(urls.metrics)),
              exportIntervalMillis: intervalMs,
              exportTimeoutMillis: Math.min(EXPORT_TIMEOUT_MS, intervalMs),
            }),
          ],
    spanProcessors:
      urls.traces === undefined
        ? []
        : [
            boundedSpanProcessor(
              new BatchSpanProcessor({
                exporter: spanBacklog.exporter(json ? new OTLPTraceExporterJson(exporterOpts(urls.traces)) : new OTLPTraceExporterProto(exporterOpts(urls.traces))),
                maxQueueSize: MAX_QUEUED_SPANS,
                maxExportBatchSize: 512,
                scheduledDelayMillis: 1000,
                exportTimeoutMillis: EXPORT_TIMEOUT_MS,
              }),
              spanBacklog,
            ),
          ],
    instrumentations: runtime ? [runtime] : [],
    // Roots are sampled by the bridge (SVC_OBS_TRACE_SAMPLE_RATIO) before any span exists, so an
    // unsampled request costs no span and no ids; a caller's traceparent decides for its request.
    sampler: new ParentBasedSampler({ root: new AlwaysOnSampler() }),
    logRecordProcessors:
      urls.logs === undefined
        ? []
        : [
            boundedLogRecordProcessor(
              new BatchLogRecordProcessor({
                exporter: logBacklog.exporter(json ? new OTLPLogExporterJson(exporterOpts(urls.logs)) : new OTLPLogExporterProto(exporterOpts(urls.logs))),
                maxQueueSize: MAX_QUEUED_LOG_RECORDS,
                maxExportBatchSize: 512,
                scheduledDelayMillis: 1000,
                exportTimeoutMillis: EXPORT_TIMEOUT_MS,
              }),
              logBacklog,
            ),
          ],
  });
  // A previous SDK of this process (tests, benchmarks) must not keep the globals.
  disableGlobals();
  sdk.start();

  let log: Logger | undefined;
  let lastError = 0;
  setGlobalErrorHandler((err) => {
    const now = Date.now();
    if (!log || now - lastError < 60_000) return;
    lastError = now;
    log.warn({ event: 'telemetry_export_failed', err: String(err) }, 'telemetry export failed; retrying in the background (reported at most once a minute)');
  });

  const meter: Meter | undefined = signals.has('metrics') ? metrics.getMeter('svc', opts.version) : undefined;
  const tracer: Tracer | undefined = signals.has('traces') ? trace.getTracer('svc', opts.version) : undefined;
  const otelLogger: OtelLogger | undefined = signals.has('logs') ? logs.getLogger('svc', opts.version) : undefined;
  const stopBridge = startBridge({ meter, tracer, contextStorage: tracer ? contextManager.storage : undefined, sampleRatio: obs.traceSampleRatio });
  if (meter && opts.droppedLogRecords) {
    const dropped = opts.droppedLogRecords;
    meter
      .createObservableCounter(METRIC.logRecordsDropped, { description: 'Log records the remote log destination dropped', unit: '{record}' })
      .addCallback((r) => r.observe(dropped()));
  }

  // The export queues themselves: a collector sees this node's traces or logs being dropped.
  const backlogs = [...(signals.has('traces') ? [['traces', spanBacklog] as const] : []), ...(signals.has('logs') ? [['logs', logBacklog] as const] : [])];
  if (meter && backlogs.length > 0) {
    meter
      .createObservableGauge(METRIC.telemetryQueued, { description: 'Spans or log records waiting in the export queue, by signal', unit: '{record}' })
      .addCallback((r) => {
        for (const [signal, b] of backlogs) r.observe(b.counts().queued, { signal });
      });
    meter
      .createObservableCounter(METRIC.telemetryDropped, { description: 'Spans or log records dropped because the export queue was full, by signal', unit: '{record}' })
      .addCallback((r) => {
        for (const [signal, b] of backlogs) r.observe(b.counts().dropped, { signal });
      });
  }

  const logMixin = tracer
    ? (): object => {
        const sc = trace.getSpanContext(contextManager.active());
        // pino merges the record's fields into the returned object: a fresh one each time.
        return sc ? { trace_id: sc.traceId, span_id: sc.spanId, trace_flags: `0${sc.traceFlags.toString(16)}` } : {};
      }
    : undefined;

  let stopped = false;
  return {
    signals,
    logStream: otelLogger ? new OtlpLogStream(otelLogger) : undefined,
    logMixin,
    setLogger(l) {
      log = l;
    },
    backlog() {
      return { traces: signals.has('traces') ? spanBacklog.counts() : undefined, logs: signals.has('logs') ? logBacklog.counts() : undefined };
    },
    async flush() {
      await Promise.all([
        (metrics.getMeterProvider() as { forceFlush?: () => Promise<void> }).forceFlush?.(),
        (trace.getTracerProvider() as { forceFlush?: () => Promise<void> }).forceFlush?.(),
        (logs.getLoggerProvider() as { forceFlush?: () => Promise<void> }).forceFlush?.(),
      ]);
    },
    async shutdown(timeoutMs = 5_000) {
      if (stopped) return;
      stopped = true;
      stopBridge();
      // NodeSDK's shutdown leaves instrumentations running: the delay timer and the collection observer stop here.
      runtime?.disable();
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        sdk.shutdown().catch(() => undefined),
        new Promise<void>((r) => {
          timer = setTimeout(r, timeoutMs);
          timer.unref();
        }),
      ]);
      clearTimeout(timer);
      disableGlobals();
    },
  };
}

function disableGlobals(): void {
  trace.disable();
  metrics.disable();
  logs.disable();
  propagation.disable();
  context.disable();
}

