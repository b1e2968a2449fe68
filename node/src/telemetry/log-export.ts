/**
 * pino → OTLP logs: a pino destination (one JSON line per `write`) that emits
 * each record as an OpenTelemetry log record. pino stays the logger and keeps
 * writing where it did; this stream is one more destination beside it.
 *
 * Mapping: `level` → severity, `msg` → body, `event` → event name (and an
 * attribute), `time` → timestamp, `trace_id`/`span_id`/`trace_flags` (added
 * by the telemetry's pino mixin inside a traced request) → the record's trace
 * context; every other field becomes an attribute.
 *
 * `emit` only queues the record in the SDK's bounded batch processor: writing
 * never waits for the network.
 */
import { type Attributes, type Logger, ROOT_CONTEXT, SeverityNumber, trace } from '@opentelemetry/api';

const SEVERITY: Record<string, SeverityNumber> = {
  trace: SeverityNumber.TRACE,
  debug: SeverityNumber.DEBUG,
  info: SeverityNumber.INFO,
  warn: SeverityNumber.WARN,
  error: SeverityNumber.ERROR,
  fatal: SeverityNumber.FATAL,
};

const PINO_NUMERIC: Record<number, string> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };

/** Fields that are the record's frame, not its attributes. */
const FRAME = new Set(['level', 'time', 'msg', 'trace_id', 'span_id', 'trace_flags']);

export class OtlpLogStream {
  readonly #logger: Logger;

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  /** pino destination API: one serialized record (a JSON line). */
  write(line: string): boolean {
    let rec: Record<string, unknown>;
    try {
      rec = JSON.parse(line) as Record<string, unknown>;
    } catch {
      return true;
    }
    const levelRaw = rec['level'];
    const level = typeof levelRaw === 'number' ? (PINO_NUMERIC[levelRaw] ?? 'info') : String(levelRaw ?? 'info');
    const attributes: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(rec)) if (!FRAME.has(k) && v !== undefined && v !== null) attributes[k] = v;
    const time = rec['time'];
    const traceId = rec['trace_id'];
    const spanId = rec['span_id'];
    const ctx =
      typeof traceId === 'string' && typeof spanId === 'string'
        ? trace.setSpanContext(ROOT_CONTEXT, { traceId, spanId, traceFlags: Number.parseInt(String(rec['trace_flags'] ?? '01'), 16) || 0, isRemote: false })
        : ROOT_CONTEXT;
    const event = rec['event'];
    this.#logger.emit({
      ...(typeof event === 'string' ? { eventName: event } : {}),
      timestamp: typeof time === 'string' || typeof time === 'number' ? new Date(time) : new Date(),
      severityNumber: SEVERITY[level] ?? SeverityNumber.UNSPECIFIED,
      severityText: level.toUpperCase(),
      body: typeof rec['msg'] === 'string' ? rec['msg'] : '',
      attributes: attributes as Attributes,
      context: ctx,
    });
    return true;
  }
}
