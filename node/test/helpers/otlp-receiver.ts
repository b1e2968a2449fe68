/**
 * Test helper: a real OTLP/HTTP receiver (`POST /v1/metrics`, `/v1/traces`,
 * `/v1/logs`) on a loopback port. Payloads are decoded with the OTLP protobuf
 * definitions (`otlp.proto`, through protobufjs): binary protobuf with
 * `Type.decode`, OTLP/JSON with `Type.fromObject` after the JSON mapping's
 * hex ids. Tests read typed data points, spans and log records, never raw
 * payload text.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { join } from 'node:path';
import protobuf from 'protobufjs';

const root = protobuf.loadSync(join(import.meta.dirname, 'otlp.proto'));
const T = {
  metrics: root.lookupType('opentelemetry.proto.ExportMetricsServiceRequest'),
  traces: root.lookupType('opentelemetry.proto.ExportTraceServiceRequest'),
  logs: root.lookupType('opentelemetry.proto.ExportLogsServiceRequest'),
};
type Signal = keyof typeof T;

export type Attr = string | number | boolean | Attr[] | { [k: string]: Attr } | null;
export type Attrs = Record<string, Attr>;

export interface MetricPoint {
  readonly resource: Attrs;
  readonly name: string;
  readonly unit: string;
  readonly type: 'gauge' | 'sum' | 'histogram' | 'other';
  /** For sums and histograms. */
  readonly temporality: 'DELTA' | 'CUMULATIVE' | undefined;
  readonly monotonic: boolean | undefined;
  readonly attributes: Attrs;
  readonly startTimeUnixNano: bigint;
  readonly timeUnixNano: bigint;
  /** Gauge or sum value. */
  readonly value: number | undefined;
  /** Histogram data. */
  readonly histogram: { count: number; sum: number | undefined; bounds: number[]; buckets: number[] } | undefined;
}

export interface SpanRecord {
  readonly resource: Attrs;
  readonly traceId: string;
  readonly spanId: string;
  /** '' for a root span. */
  readonly parentSpanId: string;
  readonly name: string;
  readonly kind: string;
  readonly attributes: Attrs;
  readonly status: string;
}

export interface LogRecordRecord {
  readonly resource: Attrs;
  readonly traceId: string;
  readonly spanId: string;
  readonly severityNumber: number;
  readonly severityText: string;
  readonly body: Attr;
  readonly eventName: string;
  readonly attributes: Attrs;
}

type Obj = Record<string, unknown>;

function anyValue(v: Obj | undefined): Attr {
  if (!v) return null;
  if ('stringValue' in v) return v['stringValue'] as string;
  if ('boolValue' in v) return v['boolValue'] as boolean;
  if ('intValue' in v) return Number(v['intValue']);
  if ('doubleValue' in v) return Number(v['doubleValue']);
  if ('arrayValue' in v) return (((v['arrayValue'] as Obj)['values'] as Obj[] | undefined) ?? []).map(anyValue);
  if ('kvlistValue' in v) return attrs((v['kvlistValue'] as Obj)['values'] as Obj[] | undefined);
  if ('bytesValue' in v) return Buffer.from(v['bytesValue'] as Uint8Array).toString('hex');
  return null;
}

function attrs(list: Obj[] | undefined): Attrs {
  const out: Attrs = {};
  for (const kv of list ?? []) out[kv['key'] as string] = anyValue(kv['value'] as Obj | undefined);
  return out;
}

const hex = (b: unknown): string => (b instanceof Uint8Array ? Buffer.from(b).toString('hex') : '');
const nanos = (v: unknown): bigint => (v === undefined ? 0n : BigInt(String(v)));

/** OTLP/JSON ids are hex; protobufjs' JSON form of `bytes` is base64. */
function jsonIdsToBase64(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(jsonIdsToBase64);
  if (v === null || typeof v !== 'object') return v;
  const out: Obj = {};
  for (const [k, x] of Object.entries(v as Obj)) {
    out[k] = (k === 'traceId' || k === 'spanId' || k === 'parentSpanId') && typeof x === 'string' ? Buffer.from(x, 'hex').toString('base64') : jsonIdsToBase64(x);
  }
  return out;
}

export class OtlpReceiver {
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  readonly #decoded: Record<Signal, Obj[]> = { metrics: [], traces: [], logs: [] };
  /** Requests received per content type, e.g. `application/x-protobuf`. */
  readonly contentTypes = new Map<string, number>();
  port = 0;

  private constructor() {
    this.#server = createServer((req, res) => void this.#handle(req, res));
    this.#server.on('connection', (s) => {
      this.#sockets.add(s);
      s.once('close', () => this.#sockets.delete(s));
    });
  }

  static async start(port = 0): Promise<OtlpReceiver> {
    const r = new OtlpReceiver();
    await r.listen(port);
    return r;
  }

  /** (Re)starts listening, on the previous port when there was one. */
  async listen(port = this.port): Promise<void> {
    this.#server.listen(port, '127.0.0.1');
    await once(this.#server, 'listening');
    this.port = (this.#server.address() as AddressInfo).port;
  }

  /** Base endpoint, as `SVC_OBS_ENDPOINT` takes it. */
  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Stops listening and cuts open connections (a collector gone away); data stays readable. */
  async stop(): Promise<void> {
    const closed = new Promise<void>((r) => this.#server.close(() => r()));
    for (const s of this.#sockets) s.destroy();
    await closed;
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    const signal = ({ '/v1/metrics': 'metrics', '/v1/traces': 'traces', '/v1/logs': 'logs' } as const)[req.url as '/v1/metrics'];
    const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim();
    this.contentTypes.set(type, (this.contentTypes.get(type) ?? 0) + 1);
    if (req.method !== 'POST' || signal === undefined) {
      res.writeHead(404).end();
      return;
    }
    const t = T[signal];
    let msg: protobuf.Message;
    try {
      msg = type === 'application/json' ? t.fromObject(jsonIdsToBase64(JSON.parse(body.toString('utf8'))) as Obj) : t.decode(body);
    } catch (err) {
      res.writeHead(400, { 'content-type': 'text/plain' }).end(String(err));
      return;
    }
    this.#decoded[signal].push(t.toObject(msg, { longs: String, enums: String, defaults: false, oneofs: false }) as Obj);
    // An empty Export*ServiceResponse: full success.
    if (type === 'application/json') res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    else res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
  }

  /** Every metric data point received so far, oldest first. */
  points(name?: string): MetricPoint[] {
    const out: MetricPoint[] = [];
    for (const req of this.#decoded.metrics) {
      for (const rm of (req['resourceMetrics'] as Obj[] | undefined) ?? []) {
        const resource = attrs((rm['resource'] as Obj | undefined)?.['attributes'] as Obj[] | undefined);
        for (const sm of (rm['scopeMetrics'] as Obj[] | undefined) ?? []) {
          for (const m of (sm['metrics'] as Obj[] | undefined) ?? []) {
            if (name !== undefined && m['name'] !== name) continue;
            const base = { resource, name: m['name'] as string, unit: (m['unit'] as string | undefined) ?? '' };
            const data = (m['gauge'] ?? m['sum'] ?? m['histogram']) as Obj | undefined;
            const type = m['gauge'] ? 'gauge' : m['sum'] ? 'sum' : m['histogram'] ? 'histogram' : 'other';
            const temporality = data?.['aggregationTemporality'] === 'AGGREGATION_TEMPORALITY_DELTA' ? 'DELTA' : data?.['aggregationTemporality'] === 'AGGREGATION_TEMPORALITY_CUMULATIVE' ? 'CUMULATIVE' : undefined;
            for (const p of (data?.['dataPoints'] as Obj[] | undefined) ?? []) {
              out.push({
                ...base,
                type,
                temporality,
                monotonic: type === 'sum' ? data?.['isMonotonic'] === true : undefined,
                attributes: attrs(p['attributes'] as Obj[] | undefined),
                startTimeUnixNano: nanos(p['startTimeUnixNano']),
                timeUnixNano: nanos(p['timeUnixNano']),
                value: p['asDouble'] !== undefined ? Number(p['asDouble']) : p['asInt'] !== undefined ? Number(p['asInt']) : undefined,
                histogram:
                  type === 'histogram'
                    ? {
                        count: Number(p['count'] ?? 0),
                        sum: p['sum'] === undefined ? undefined : Number(p['sum']),
                        bounds: ((p['explicitBounds'] as number[] | undefined) ?? []).map(Number),
                        buckets: ((p['bucketCounts'] as unknown[] | undefined) ?? []).map(Number),
                      }
                    : undefined,
              });
            }
          }
        }
      }
    }
    return out;
  }

  /** The newest data point of `name` whose attributes include `match`. */
  latest(name: string, match: Attrs = {}): MetricPoint | undefined {
    const pts = this.points(name).filter((p) => Object.entries(match).every(([k, v]) => p.attributes[k] === v));
    return pts[pts.length - 1];
  }

  spans(): SpanRecord[] {
    const out: SpanRecord[] = [];
    for (const req of this.#decoded.traces) {
      for (const rs of (req['resourceSpans'] as Obj[] | undefined) ?? []) {
        const resource = attrs((rs['resource'] as Obj | undefined)?.['attributes'] as Obj[] | undefined);
        for (const ss of (rs['scopeSpans'] as Obj[] | undefined) ?? []) {
          for (const s of (ss['spans'] as Obj[] | undefined) ?? []) {
            out.push({
              resource,
              traceId: hex(s['traceId']),
              spanId: hex(s['spanId']),
              parentSpanId: hex(s['parentSpanId']),
              name: s['name'] as string,
              kind: (s['kind'] as string | undefined) ?? 'SPAN_KIND_UNSPECIFIED',
              attributes: attrs(s['attributes'] as Obj[] | undefined),
              status: ((s['status'] as Obj | undefined)?.['code'] as string | undefined) ?? 'STATUS_CODE_UNSET',
            });
          }
        }
      }
    }
    return out;
  }

  logs(): LogRecordRecord[] {
    const out: LogRecordRecord[] = [];
    for (const req of this.#decoded.logs) {
      for (const rl of (req['resourceLogs'] as Obj[] | undefined) ?? []) {
        const resource = attrs((rl['resource'] as Obj | undefined)?.['attributes'] as Obj[] | undefined);
        for (const sl of (rl['scopeLogs'] as Obj[] | undefined) ?? []) {
          for (const l of (sl['logRecords'] as Obj[] | undefined) ?? []) {
            const sev = l['severityNumber'] as string | undefined;
            out.push({
              resource,
              traceId: hex(l['traceId']),
              spanId: hex(l['spanId']),
              severityNumber: sev === undefined ? 0 : (root.lookupEnum('opentelemetry.proto.SeverityNumber').values[sev] ?? 0),
              severityText: (l['severityText'] as string | undefined) ?? '',
              body: anyValue(l['body'] as Obj | undefined),
              eventName: (l['eventName'] as string | undefined) ?? '',
              attributes: attrs(l['attributes'] as Obj[] | undefined),
            });
          }
        }
      }
    }
    return out;
  }

  /** Polls `probe` until it returns a value other than undefined/false. */
  async waitFor<T>(probe: () => T | undefined | false, timeoutMs = 20_000, what = 'telemetry'): Promise<T> {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const v = probe();
      if (v !== undefined && v !== false) return v;
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async close(): Promise<void> {
    if (this.#server.listening) await this.stop();
  }
}
