import { type Logger, pino } from 'pino';

export type { Logger };

/**
 * The process logger: pino JSON lines on stdout. Every record that marks a
 * step or an error carries a stable `event` name (e.g. `{event:
 * 'startup_format_quorum'}`) so operators can alert on it.
 */
export function createLogger(level = 'info', destination: NodeJS.WritableStream | number = 1): Logger {
  return pino(
    {
      level,
      base: { svc: 'node', pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    typeof destination === 'number' ? pino.destination({ fd: destination, sync: true }) : destination,
  );
}

/** A logger that discards everything (tests of pure code). */
export const silentLogger: Logger = pino({ level: 'silent' });
