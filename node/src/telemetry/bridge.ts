/**
 * The one bridge from the diagnostics channels (`util/diagnostics.ts`) to
 * OpenTelemetry: metrics from node-state and request events, spans from the
 * request, internode and drive-I/O events.
 *
 * `startBridge` subscribes only what the enabled signals need (metrics
 * without traces never binds a context store; traces without metrics never
 * builds metric attributes) and returns the function that unsubscribes it all.
 *
 * Spans:
 * - one SERVER span per S3 and admin request, child of an incoming W3C
 *   `traceparent` when there is one (the sampler is parent-based);
 * - one SERVER span per internode request that carries a trace context
 *   (background RPC such as lock refreshes and peer probes carry none: no span);
 * - one CLIENT span per internode call made inside a trace, whose context is
 *   injected into the call's headers for the peer;
 * - one INTERNAL span per drive operation inside a sampled trace.
 */
import type { AsyncLocalStorage } from 'node:async_hooks';
import type { Channel } from 'node:diagnostics_channel';
import type { IncomingMessage } from 'node:http';
import {
  type Attributes,
  type Context,
  type Counter,
  type Gauge,
  type Histogram,
  type Meter,
  type ObservableCounter,
  type ObservableResult,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import {
  capacitySampled,
  type CapacitySampledMessage,
  driveIo,
  type DriveIoMessage,
  type HealTaskFinishedMessage,
  healTaskFinished,
  type HealTaskStartedMessage,
  healTaskStarted,
  type HttpApi,
  type HttpOperationMessage,
  type HttpRequestMessage,
  httpRequestEnd,
  httpRequestOperation,
  httpRequestStart,
  lifecycleAction,
  type LifecycleActionMessage,
  processStart,
  type ProcessStartMessage,
  readinessEvaluated,
  peerClockSkew,
  replicationTargets,
  type ReplicationTargetsMessage,
  type PeerClockSkewMessage,
  type ReadinessEvaluatedMessage,
  rpcClient,
  tlsCertificates,
  type TlsCertificatesMessage,
  type RpcClientMessage,
  scannerCycle,
  type ScannerCycleMessage,
  scannerObject,
  setTracingDetailProbe,
} from '../util/diagnostics.ts';
import { METRIC, S3_DURATION_BUCKETS, HEAL_DELAY_BUCKETS } from './names.ts';

export interface BridgeOptions {
  /** Metrics on: the SPEC metrics plus request and RPC error metrics. */
  readonly meter?: Meter;
  /** Traces on: spans, with the context manager's storage bound to the channels. */
  readonly tracer?: Tracer;
  readonly contextStorage?: AsyncLocalStorage<Context>;
  /**
   * Share of requests without a `traceparent` that start a trace (default 1).
   * Requests with one follow its sampled flag (the tracer's parent-based sampler).
   */
  readonly sampleRatio?: number;
}

/** Error codes that are answers, not failures (a drive saying "no such file"). */
const ROUTINE_CODES = new Set(['FileNotFound', 'VolumeNotFound', 'FileVersionNotFound']);

const STATUS_CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx'] as const;

interface RequestState {
  readonly api: HttpApi;
  readonly startMs: number;
  operation: string | undefined;
  span: Span | undefined;
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Tracing-channel handlers for spans started in the `start` store: the span
 * ends when the traced promise settles; `onError` marks it (and may count).
 */
function spanEndingHandlers<M extends { error?: unknown }>(spans: WeakMap<M, Span>, onError: (msg: M, span: Span | undefined) => void) {
  return {
    start() {},
    end() {},
    asyncStart() {},
    asyncEnd(msg: M) {
      const span = spans.get(msg);
      if (span) {
        spans.delete(msg);
        span.end();
      }
    },
    error(msg: M) {
      onError(msg, spans.get(msg));
    },
  };
}

function errorCode(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : err instanceof Error ? err.name : 'Error';
}

function statusClassIndex(status: number): number {
  const i = Math.floor(status / 100) - 1;
  return i >= 0 && i < 5 ? i : 4;
}

/** `host:port` of an origin (`server.address` of a client span). */
function hostPort(origin: string): string {
  const i = origin.indexOf('://');
  return i >= 0 ? origin.slice(i + 3) : origin;
}

/** Subscribes the bridge; returns the unsubscribe function. */
export function startBridge(opts: BridgeOptions): () => void {
  const { meter, tracer, contextStorage } = opts;
  const undo: (() => void)[] = [];
  const sub = (ch: Channel, fn: (msg: unknown) => void) => {
    ch.subscribe(fn);
    undo.push(() => ch.unsubscribe(fn));
  };
  const requests = new WeakMap<IncomingMessage, RequestState>();
  const active = (): Context => contextStorage?.getStore() ?? ROOT_CONTEXT;

  // ---- metrics
  let recordRequest: ((s: RequestState, status: number) => void) | undefined;
  let countRpcError: ((m: RpcClientMessage) => void) | undefined;
  if (meter) {
    const m = makeInstruments(meter);
    sub(readinessEvaluated, (msg) => {
      const r = msg as ReadinessEvaluatedMessage;
      m.ready.record(r.ready ? 1 : 0);
      if (!r.ready) for (const reason of r.degradedReasons) m.degraded.add(1, { reason });
    });
    // Until the first evaluation the node is not ready.
    m.ready.record(0);
    // The message carries the persisted total: the counter follows it.
    let startsReported = 0;
    sub(processStart, (msg) => {
      const { starts } = msg as ProcessStartMessage;
      if (starts > startsReported) m.starts.add(starts - startsReported);
      startsReported = Math.max(startsReported, starts);
    });
    sub(capacitySampled, (msg) => m.capacity.record((msg as CapacitySampledMessage).usedBytes));
    // Gauges over the list the last message on `ch` carried (empty until one came), one observation per item.
    const listGauges = <T>(ch: Channel, pick: (msg: unknown) => readonly T[]) => {
      let items: readonly T[] = [];
      sub(ch, (msg) => {
        items = pick(msg);
      });
      return (name: string, description: string, unit: string, observe: (r: ObservableResult, item: T) => void) =>
        meter.createObservableGauge(name, { description, unit }).addCallback((r) => {
          for (const x of items) observe(r, x);
        });
    };
    // The end of each certificate in force; an alert compares it with time() (docs/tls.md).
    listGauges(tlsCertificates, (msg) => (msg as TlsCertificatesMessage).certificates)(
      METRIC.tlsCertificateNotAfter,
      'End of validity of each TLS certificate in force (served pairs and trusted CAs), Unix time',
      's',
      (r, c) => r.observe(Math.floor(c.notAfter / 1000), { file: c.file, kind: c.kind }),
    );
    // Each peer's clock against this node's (cluster/clock-skew.ts); an alert compares it with a bound.
    listGauges(peerClockSkew, (msg) => (msg as PeerClockSkewMessage).skews)(
      METRIC.peerClockSkew,
      "Each peer's clock behind this node's (negative: ahead), as its internode calls show it",
      's',
      (r, x) => r.observe(x.seconds, { peer: x.peer }),
    );
    // Bucket replication: per target of this node (replicator/replication-system.ts); sum over nodes for the cluster.
    const replTargets = listGauges(replicationTargets, (msg) => (msg as ReplicationTargetsMessage).targets);
    const replGauge = (name: string, description: string, unit: string, value: (t: ReplicationTargetsMessage['targets'][number]) => number) =>
      replTargets(name, description, unit, (r, t) => r.observe(value(t), { bucket: t.bucket, target: t.arn }));
    replGauge(METRIC.replicationQueued, 'Versions waiting in the replication queue of each target', '{version}', (t) => t.queuedCount);
    replGauge(METRIC.replicationQueuedBytes, 'Bytes waiting in the replication queue of each target', 'By', (t) => t.queuedBytes);
    replGauge(METRIC.replicationFailed, 'Versions whose copy the target refused, waiting for a retry', '{version}', (t) => t.failedCount);
    replGauge(METRIC.replicationFailedBytes, 'Bytes of the versions waiting for a retry', 'By', (t) => t.failedBytes);
    replGauge(METRIC.replicationCompleted, 'Versions copied to each target since this node started', '{version}', (t) => t.completedCount);
    replGauge(METRIC.replicationCompletedBytes, 'Bytes copied to each target since this node started', 'By', (t) => t.completedBytes);
    replGauge(METRIC.replicationLag, 'Age of the oldest change still waiting for each target (0: nothing waits)', 's', (t) => t.lagSeconds);
    replGauge(METRIC.replicationTargetOnline, 'Whether each replication target answered its last health check (1) or not (0)', '1', (t) => (t.online ? 1 : 0));
    sub(scannerObject, () => m.scanned.add(1));
    sub(scannerCycle, (msg) => {
      const c = msg as ScannerCycleMessage;
      m.cycles.add(1, { result: c.result });
      m.cycleDuration.record(c.durationSeconds);
    });
    sub(lifecycleAction, (msg) => {
      const a = msg as LifecycleActionMessage;
      m.lifecycle.add(a.count, { outcome: a.outcome });
    });
    const running = new Map<string, { attrs: Attributes; n: number }>();
    const runningOf = (type: string, set: string) => {
      const key = `${type}\u0000${set}`;
      let r = running.get(key);
      if (!r) {
        r = { attrs: { type, set }, n: 0 };
        running.set(key, r);
      }
      return r;
    };
    sub(healTaskStarted, (msg) => {
      const t = msg as HealTaskStartedMessage;
      const r = runningOf(t.type, t.set);
      r.n++;
      m.healRunning.record(r.n, r.attrs);
      m.healStarts.add(1, r.attrs);
      m.healDelay.record(t.queueDelaySeconds, r.attrs);
    });
    sub(healTaskFinished, (msg) => {
      const t = msg as HealTaskFinishedMessage;
      const r = runningOf(t.type, t.set);
      r.n = Math.max(0, r.n - 1);
      m.healRunning.record(r.n, r.attrs);
    });

    // Per (api, operation, status class): one cached attribute set and a count.
    // Requests are counted here and observed at collection, so a request costs
    // the SDK one histogram record, not a counter add as well.
    interface Row {
      readonly api: HttpApi;
      readonly attrs: Attributes[];
      readonly counts: number[];
    }
    const rows = new Map<string, Row>();
    const rowOf = (api: HttpApi, op: string): Row => {
      const key = `${api}\u0000${op}`;
      let row = rows.get(key);
      if (!row) {
        const opKey = api === 's3' ? 'svc.s3.api' : 'svc.admin.api';
        row = { api, attrs: STATUS_CLASSES.map((c) => ({ [opKey]: op, 'svc.status_class': c })), counts: [0, 0, 0, 0, 0] };
        rows.set(key, row);
      }
      return row;
    };
    const observeCounts = (api: HttpApi) => (r: ObservableResult) => {
      for (const row of rows.values()) {
        if (row.api !== api) continue;
        for (let i = 0; i < 5; i++) if (row.counts[i]! > 0) r.observe(row.counts[i]!, row.attrs[i]);
      }
    };
    m.s3Requests.addCallback(observeCounts('s3'));
    m.adminRequests.addCallback(observeCounts('admin'));
    recordRequest = (s, status) => {
      if (s.api === 'rpc') return;
      const row = rowOf(s.api, s.operation ?? 'unknown');
      const i = statusClassIndex(status);
      row.counts[i]!++;
      const seconds = (performance.now() - s.startMs) / 1000;
      (s.api === 's3' ? m.s3Duration : m.adminDuration).record(seconds, row.attrs[i]);
    };
    // A drive answering "no such file" over RPC is an answer, not an RPC error.
    countRpcError = (msg) => {
      const code = errorCode(msg.error);
      if (ROUTINE_CODES.has(code)) return;
      m.rpcErrors.add(1, { 'rpc.system': 'svc', 'rpc.method': msg.method, 'server.address': hostPort(msg.origin), 'error.type': code });
    };
  }

  // ---- HTTP requests (spans and request metrics)
  if (tracer && contextStorage) {
    const startStore = httpRequestStart as unknown as Channel<Context, HttpRequestMessage>;
    const ratio = opts.sampleRatio ?? 1;
    const transform = (msg: HttpRequestMessage): Context => {
      const headers = msg.req.headers;
      const traced = headers.traceparent !== undefined;
      const parent = traced ? propagation.extract(ROOT_CONTEXT, headers) : ROOT_CONTEXT;
      const state: RequestState = { api: msg.api, startMs: performance.now(), operation: undefined, span: undefined };
      requests.set(msg.req, state);
      // A request without a trace context starts a trace with probability `ratio`;
      // an internode request never does (it belongs to a caller's trace or to none).
      if (!traced && (msg.api === 'rpc' || !(Math.random() < ratio))) return parent;
      const span = tracer.startSpan(spanName(msg.api, rpcMethodOf(msg)), { kind: SpanKind.SERVER }, parent);
      if (span.isRecording()) {
        span.setAttributes({
          'http.request.method': msg.req.method ?? 'GET',
          'url.path': (msg.req.url ?? '/').split('?', 1)[0]!,
          'network.peer.address': msg.req.socket.remoteAddress ?? '',
          'svc.api': msg.api,
        });
      }
      state.span = span;
      return trace.setSpan(parent, span);
    };
    startStore.bindStore(contextStorage, transform);
    undo.push(() => startStore.unbindStore(contextStorage));
  } else if (meter) {
    sub(httpRequestStart, (msg) => {
      const r = msg as HttpRequestMessage;
      requests.set(r.req, { api: r.api, startMs: performance.now(), operation: undefined, span: undefined });
    });
  }
  if (tracer || meter) {
    sub(httpRequestOperation, (msg) => {
      const o = msg as HttpOperationMessage;
      const s = requests.get(o.req);
      if (!s) return;
      s.operation = o.operation;
      if (s.span?.isRecording()) {
        s.span.updateName(spanName(s.api, o.operation));
        s.span.setAttribute(s.api === 's3' ? 'svc.s3.api' : 'svc.admin.api', o.operation);
      }
    });
    sub(httpRequestEnd, (msg) => {
      const r = msg as HttpRequestMessage;
      const s = requests.get(r.req);
      if (!s) return;
      requests.delete(r.req);
      const status = r.res.statusCode;
      recordRequest?.(s, status);
      if (s.span?.isRecording()) {
        s.span.setAttribute('http.response.status_code', status);
        if (!r.res.writableFinished) {
          s.span.setAttribute('error.type', 'response_aborted');
          s.span.setStatus({ code: SpanStatusCode.ERROR, message: 'response closed before it finished' });
        } else if (status >= 500) {
          s.span.setStatus({ code: SpanStatusCode.ERROR });
        }
      }
      s.span?.end();
    });
  }

  // ---- internode calls (client side)
  const rpcSpans = new WeakMap<RpcClientMessage, Span>();
  if (tracer && contextStorage) {
    const startStore = rpcClient.start as unknown as Channel<Context, RpcClientMessage>;
    startStore.bindStore(contextStorage, (msg) => {
      const parent = active();
      if (!trace.getSpanContext(parent)) return parent;
      const span = tracer.startSpan(
        `rpc ${msg.method}`,
        { kind: SpanKind.CLIENT, attributes: { 'rpc.system': 'svc', 'rpc.method': msg.method, 'server.address': hostPort(msg.origin), 'url.path': msg.path } },
        parent,
      );
      rpcSpans.set(msg, span);
      const ctx = trace.setSpan(parent, span);
      propagation.inject(ctx, msg.headers);
      return ctx;
    });
    undo.push(() => startStore.unbindStore(contextStorage));
  }
  if (tracer || countRpcError) {
    const handlers = spanEndingHandlers(rpcSpans, (msg, span) => {
      countRpcError?.(msg);
      span?.setAttribute('error.type', errorCode(msg.error));
      span?.setStatus({ code: SpanStatusCode.ERROR, message: errorMessage(msg.error) });
    });
    rpcClient.subscribe(handlers);
    undo.push(() => rpcClient.unsubscribe(handlers));
  }

  // ---- drive I/O (traces only, inside sampled traces)
  if (tracer && contextStorage) {
    const storage = contextStorage;
    undo.push(setTracingDetailProbe(() => trace.getSpan(storage.getStore() ?? ROOT_CONTEXT)?.isRecording() === true));
    const driveSpans = new WeakMap<DriveIoMessage, Span>();
    const startStore = driveIo.start as unknown as Channel<Context, DriveIoMessage>;
    startStore.bindStore(contextStorage, (msg) => {
      const parent = active();
      // Only inside a sampled trace: a drive span on its own says nothing.
      if (!trace.getSpan(parent)?.isRecording()) return parent;
      const span = tracer.startSpan(
        `drive ${msg.op}`,
        { kind: SpanKind.INTERNAL, attributes: { 'svc.drive': msg.drive, 'svc.drive.op': msg.op, 'svc.drive.volume': msg.vol, 'svc.drive.path': msg.path } },
        parent,
      );
      driveSpans.set(msg, span);
      return trace.setSpan(parent, span);
    });
    const handlers = spanEndingHandlers(driveSpans, (msg, span) => {
      if (!span) return;
      const code = errorCode(msg.error);
      span.setAttribute('error.type', code);
      if (!ROUTINE_CODES.has(code)) span.setStatus({ code: SpanStatusCode.ERROR, message: errorMessage(msg.error) });
    });
    driveIo.subscribe(handlers);
    undo.push(() => {
      startStore.unbindStore(contextStorage);
      driveIo.unsubscribe(handlers);
    });
  }

  return () => {
    for (const u of undo.splice(0).reverse()) u();
  };
}

function spanName(api: HttpApi, operation: string | undefined): string {
  const prefix = api === 's3' ? 'S3' : api;
  return operation === undefined ? prefix : `${prefix} ${operation}`;
}

/** The method of an internode request: last path segment. */
function rpcMethodOf(msg: HttpRequestMessage): string | undefined {
  if (msg.api !== 'rpc') return undefined;
  const path = (msg.req.url ?? '/').split('?', 1)[0]!;
  return path.slice(path.lastIndexOf('/') + 1);
}

interface Instruments {
  ready: Gauge;
  degraded: Counter;
  scanned: Counter;
  cycles: Counter;
  cycleDuration: Gauge;
  healRunning: Gauge;
  healDelay: Histogram;
  healStarts: Counter;
  capacity: Gauge;
  starts: Counter;
  s3Requests: ObservableCounter;
  s3Duration: Histogram;
  adminRequests: ObservableCounter;
  adminDuration: Histogram;
  rpcErrors: Counter;
  lifecycle: Counter;
}

function makeInstruments(meter: Meter): Instruments {
  return {
    ready: meter.createGauge(METRIC.readinessReady, { description: '1 when the node is fully ready, 0 while degraded' }),
    degraded: meter.createCounter(METRIC.readinessDegraded, { description: 'Degraded readiness evaluations, by reason', unit: '{evaluation}' }),
    scanned: meter.createCounter(METRIC.scannerObjects, { description: 'Objects visited by the background scanner', unit: '{object}' }),
    cycles: meter.createCounter(METRIC.scannerCycles, { description: 'Completed scanner cycles, by result', unit: '{cycle}' }),
    cycleDuration: meter.createGauge(METRIC.scannerCycleDuration, { description: 'Duration of the last scanner cycle', unit: 's' }),
    healRunning: meter.createGauge(METRIC.healRunning, { description: 'Running heal tasks per erasure set', unit: '{task}' }),
    healDelay: meter.createHistogram(METRIC.healQueueDelay, {
      description: 'Time heal tasks wait queued',
      unit: 's',
      advice: { explicitBucketBoundaries: HEAL_DELAY_BUCKETS },
    }),
    healStarts: meter.createCounter(METRIC.healStarts, { description: 'Heal tasks started', unit: '{task}' }),
    capacity: meter.createGauge(METRIC.capacityUsed, { description: "Used raw capacity of this node's drives", unit: 'By' }),
    starts: meter.createCounter(METRIC.starts, { description: 'Process starts of this node (persisted across restarts)', unit: '{start}' }),
    s3Requests: meter.createObservableCounter(METRIC.s3Requests, { description: 'S3 requests, by API and status class', unit: '{request}' }),
    s3Duration: meter.createHistogram(METRIC.s3Duration, {
      description: 'S3 request latency, by API and status class',
      unit: 's',
      advice: { explicitBucketBoundaries: S3_DURATION_BUCKETS },
    }),
    adminRequests: meter.createObservableCounter(METRIC.adminRequests, { description: 'Admin API requests, by API and status class', unit: '{request}' }),
    adminDuration: meter.createHistogram(METRIC.adminDuration, {
      description: 'Admin API request latency, by API and status class',
      unit: 's',
      advice: { explicitBucketBoundaries: S3_DURATION_BUCKETS },
    }),
    rpcErrors: meter.createCounter(METRIC.rpcErrors, { description: 'Failed internode RPC calls, by method, peer and error', unit: '{error}' }),
    lifecycle: meter.createCounter(METRIC.lifecycleActions, {
      description: 'What lifecycle rules did on scanner cycles, by outcome (versions deleted, delete markers added or removed, locked versions kept, uploads aborted, errors)',
      unit: '{action}',
    }),
  };
}
