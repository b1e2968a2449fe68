import { type Logger, pino } from 'pino';

export type { Logger };

/** A pino destination: anything with a synchronous `write(line)`. */
export interface LogDestination {
  write(line: string): unknown;
}

export interface LoggerExtras {
  /** Fields merged into every record (e.g. the active trace context). */
  readonly mixin?: (() => object) | undefined;
  /** More destinations receiving every record (e.g. the OTLP log export). */
  readonly also?: readonly LogDestination[];
}

/**
 * The process logger: pino JSON lines on stdout. Every record that marks a
 * step or an error carries a stable `event` name (e.g. `{event:
 * 'startup_format_quorum'}`) so operators can alert on it.
 */
export function createLogger(level = 'info', destination: LogDestination | number = 1, extras: LoggerExtras = {}): Logger {
  const primary = typeof destination === 'number' ? pino.destination({ fd: destination, sync: true }) : destination;
  const also = extras.also ?? [];
  return pino(
    {
      level,
      base: { svc: 'node', pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      ...(extras.mixin ? { mixin: extras.mixin } : {}),
    },
    also.length === 0
      ? (primary as NodeJS.WritableStream)
      : pino.multistream([primary, ...also].map((stream) => ({ stream: stream as NodeJS.WritableStream, level: level as pino.Level }))),
  );
}

/** A logger that discards everything (tests of pure code). */
export const silentLogger: Logger = pino({ level: 'silent' });
