/**
 * Observability events: named `node:diagnostics_channel` channels with typed
 * payloads, the one place the storage server reports what happens at its
 * boundaries. Publishers never import OpenTelemetry; `telemetry/bridge.ts`
 * subscribes and turns the events into metrics, spans and log context.
 *
 * Publishing is free when nobody listens: every publisher checks
 * `hasSubscribers` before it builds a payload, so a node without telemetry
 * allocates nothing per request (the undici pattern).
 *
 * Who publishes what (and `docs/telemetry.md` says the same for operators):
 *
 * | channel | publisher |
 * | --- | --- |
 * | `svc:http:request:start` / `:end` | `server/dispatcher.ts`, every S3, admin and internode request |
 * | `svc:http:request:operation` | the S3 handler (`api/s3/index.ts`) and the admin router, once the operation is known |
 * | `svc:rpc:client` (tracing channel) | `cluster/rpc-client.ts`, every internode call |
 * | `svc:drive:io` (tracing channel) | `storage/traced-drive.ts`, every drive operation of the object layer and of the RPC drive service |
 * | `svc:readiness:evaluated` | `server/readiness.ts`, every readiness evaluation |
 * | `svc:process:start` | `server/start-counter.ts`, once per process start |
 * | `svc:capacity:sampled` | `server/capacity.ts`, every capacity sample |
 * | `svc:scanner:object`, `svc:scanner:cycle` | the background scanner (issue 11) |
 * | `svc:heal:task:queued` / `:started` / `:finished` | the heal workers (issue 11) |
 */
import dc from 'node:diagnostics_channel';
import type { IncomingMessage, ServerResponse } from 'node:http';

// ---- HTTP requests (S3, admin, internode RPC served)

/** Which API of the listener a request belongs to. */
export type HttpApi = 's3' | 'admin' | 'rpc';

/**
 * One request, published with `runStores` at start (a subscriber may bind an
 * AsyncLocalStorage: the handler then runs inside that context) and again at
 * end, when the response closed (finished or cut short).
 */
export interface HttpRequestMessage {
  readonly api: HttpApi;
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
}

/** The operation of a request, known once its handler parsed it (e.g. `PutObject`). */
export interface HttpOperationMessage {
  readonly req: IncomingMessage;
  /** Low-cardinality name: an S3 operation or an admin route name. */
  readonly operation: string;
}

export const httpRequestStart = dc.channel('svc:http:request:start');
export const httpRequestEnd = dc.channel('svc:http:request:end');
export const httpRequestOperation = dc.channel('svc:http:request:operation');

// ---- internode RPC (client side)

/**
 * One internode call, traced with `tracePromise` (start/end/asyncStart/
 * asyncEnd/error). `headers` are the request headers still to be sent: a
 * subscriber may add to them (trace context for the peer).
 */
export interface RpcClientMessage {
  /** The peer's origin, e.g. `http://127.0.0.2:9000`. */
  readonly origin: string;
  /** Request path (`/svc/rpc/v1/<drive>/<method>` or `/svc/peer/v1/<method>`). */
  readonly path: string;
  /** The method's name (last path segment). */
  readonly method: string;
  readonly headers: Record<string, string>;
  /** Set by `tracePromise` when the call failed. */
  error?: unknown;
}

export const rpcClient = dc.tracingChannel<unknown, RpcClientMessage>('svc:rpc:client');

// ---- drive I/O

/**
 * Whether the current async context is traced in detail (per-operation
 * spans). The trace subscriber installs the probe; without one it is false.
 * Fine-grained publishers (drive I/O) check it after `hasSubscribers`, so a
 * request that is not sampled pays one property read and one call, not a
 * traced promise per drive operation.
 */
let detailProbe: () => boolean = () => false;

export function tracingDetail(): boolean {
  return detailProbe();
}

/** Installs the probe behind `tracingDetail` (the telemetry bridge); returns the function that removes it. */
export function setTracingDetailProbe(probe: () => boolean): () => void {
  detailProbe = probe;
  return () => {
    if (detailProbe === probe) detailProbe = () => false;
  };
}

/** One operation on one drive (local or remote), traced with `tracePromise` inside a traced request. */
export interface DriveIoMessage {
  /** The drive's endpoint as given on the command line. */
  readonly drive: string;
  /** `Drive` method name, e.g. `createFile`, `readXlMeta`. */
  readonly op: string;
  readonly vol: string;
  readonly path: string;
  error?: unknown;
}

export const driveIo = dc.tracingChannel<unknown, DriveIoMessage>('svc:drive:io');

// ---- node state

/** Published on every readiness evaluation (each dependency report), degraded or not. */
export interface ReadinessEvaluatedMessage {
  readonly ready: boolean;
  readonly pending: string | undefined;
  readonly degradedReasons: readonly string[];
}

export const readinessEvaluated = dc.channel('svc:readiness:evaluated');

/** Published once per process start, with the node's persisted start count. */
export interface ProcessStartMessage {
  /** Starts of this node so far, this one included (persisted on its first local drive). */
  readonly starts: number;
}

export const processStart = dc.channel('svc:process:start');

/** Raw capacity of this node's local drives, each file system counted once. */
export interface CapacitySampledMessage {
  readonly usedBytes: number;
  readonly totalBytes: number;
}

export const capacitySampled = dc.channel('svc:capacity:sampled');

/** The TLS certificates in force (published at start-up, on each reload and every few hours). */
export interface TlsCertificatesMessage {
  readonly certificates: readonly { readonly file: string; readonly kind: 'server' | 'ca'; readonly notAfter: number }[];
}

export const tlsCertificates = dc.channel('svc:tls:certificates');

/** Each peer's clock against this node's, as the peer's internode tokens show it (published when it changes, at most once a second). */
export interface PeerClockSkewMessage {
  /** `seconds`: this node's clock minus the peer's (network delay included; positive: the peer is behind). */
  readonly skews: readonly { readonly peer: string; readonly seconds: number }[];
}

export const peerClockSkew = dc.channel('svc:peer:clock-skew');

/** Each replication target of this node: its queues and lag (published every 10 s while someone listens). */
export interface ReplicationTargetsMessage {
  readonly targets: readonly {
    readonly bucket: string;
    readonly arn: string;
    readonly online: boolean;
    readonly queuedCount: number;
    readonly queuedBytes: number;
    readonly failedCount: number;
    readonly failedBytes: number;
    /** Copies done since this node started (a counter). */
    readonly completedCount: number;
    readonly completedBytes: number;
    readonly lagSeconds: number;
  }[];
}

export const replicationTargets = dc.channel('svc:replication:targets');

// ---- background scanner (published by the scanner of issue 11)

/** One object visited by the scanner. */
export interface ScannerObjectMessage {
  readonly bucket: string;
  readonly object: string;
}

/** A finished scanner cycle. */
export interface ScannerCycleMessage {
  readonly result: 'success' | 'error' | 'partial';
  /** Wall time of the cycle, seconds. */
  readonly durationSeconds: number;
}

export const scannerObject = dc.channel('svc:scanner:object');
export const scannerCycle = dc.channel('svc:scanner:cycle');

// ---- lifecycle (published by background/lifecycle-executor.ts on scanner cycles)

/** What lifecycle did (the `outcome` label of `svc.lifecycle.actions`). */
export type LifecycleActionOutcome = 'version_deleted' | 'delete_marker_added' | 'delete_marker_removed' | 'kept_locked' | 'upload_aborted' | 'error';

export interface LifecycleActionMessage {
  readonly outcome: LifecycleActionOutcome;
  readonly count: number;
}

export const lifecycleAction = dc.channel('svc:lifecycle:action');

// ---- heal workers (published by the heal workers of issue 11)

/** What a heal task heals (the `type` label of the heal metrics). */
export type HealTaskType = 'object' | 'bucket' | 'drive' | 'format' | 'mrf';

interface HealTaskBase {
  readonly type: HealTaskType;
  /** The erasure set, as `<pool>.<set>` (zero-based), e.g. `0.3`. */
  readonly set: string;
}

export type HealTaskQueuedMessage = HealTaskBase;

export interface HealTaskStartedMessage extends HealTaskBase {
  /** How long the task waited in the queue, seconds. */
  readonly queueDelaySeconds: number;
}

export interface HealTaskFinishedMessage extends HealTaskBase {
  readonly result: 'success' | 'error';
}

export const healTaskQueued = dc.channel('svc:heal:task:queued');
export const healTaskStarted = dc.channel('svc:heal:task:started');
export const healTaskFinished = dc.channel('svc:heal:task:finished');

/** `<pool>.<set>`: the `set` label of the heal metrics. */
export function setLabel(pool: number, set: number): string {
  return `${pool}.${set}`;
}
