/**
 * Structured logs: pino JSON lines on stdout, every record with a stable
 * `event` name; with an OTLP endpoint configured, the same records are also
 * exported as OTLP logs (HTTP/protobuf-JSON to `<endpoint>/v1/logs`), like the
 * storage node does.
 */
import { Writable } from 'node:stream';
import { SeverityNumber } from '@opentelemetry/api';
import { OTLPLogExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchLogRecordProcessor, LoggerProvider } from '@opentelemetry/sdk-logs';
import { type Logger, multistream, pino } from 'pino';

const SEVERITY: Record<string, SeverityNumber> = {
  trace: SeverityNumber.TRACE,
  debug: SeverityNumber.DEBUG,
  info: SeverityNumber.INFO,
  warn: SeverityNumber.WARN,
  error: SeverityNumber.ERROR,
  fatal: SeverityNumber.FATAL,
};

export interface OperatorLogger {
  readonly log: Logger;
  /** Flushes exported logs (call before exit). */
  shutdown(): Promise<void>;
}

export function createOperatorLogger(opts: { level: string; otlpEndpoint?: string | undefined; serviceName: string; stdout?: NodeJS.WritableStream }): OperatorLogger {
  const out = opts.stdout ?? pino.destination({ fd: 1, sync: true });
  const base = { level: opts.level, base: { svc: 'operator', pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime, formatters: { level: (label: string) => ({ level: label }) } };
  if (!opts.otlpEndpoint) return { log: pino(base, out), shutdown: async () => undefined };
  const provider = new LoggerProvider({
    resource: resourceFromAttributes({ 'service.name': opts.serviceName }),
    processors: [new BatchLogRecordProcessor({ exporter: new OTLPLogExporter({ url: opts.otlpEndpoint }), scheduledDelayMillis: 1000 })],
  });
  const otel = provider.getLogger('svc-operator');
  const exportStream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (!line) continue;
        try {
          const rec = JSON.parse(line) as Record<string, unknown>;
          const { level, msg, time, ...attrs } = rec;
          const attributes: Record<string, string | number | boolean> = {};
          for (const [k, v] of Object.entries(attrs)) attributes[k] = typeof v === 'object' ? JSON.stringify(v) : (v as string | number | boolean);
          otel.emit({
            severityNumber: SEVERITY[String(level)] ?? SeverityNumber.INFO,
            severityText: String(level),
            body: String(msg ?? ''),
            attributes,
            timestamp: time ? new Date(String(time)) : new Date(),
          });
        } catch {
          // not a JSON record
        }
      }
      cb();
    },
  });
  return {
    log: pino(base, multistream([{ stream: out }, { stream: exportStream }])),
    shutdown: async () => {
      await provider.forceFlush();
      await provider.shutdown();
    },
  };
}
