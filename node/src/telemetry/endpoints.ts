/**
 * Where each OTLP signal goes, from the configuration alone. Pure and free
 * of OpenTelemetry imports, so a node without telemetry never loads the SDK
 * (about 27 MiB of an idle node's resident memory, measured: see
 * test/lazy-libraries.test.ts and cli/server-command.ts).
 */
import type { ObsConfig } from '../util/config.ts';

export type Signal = 'metrics' | 'traces' | 'logs';

const SIGNAL_PATH: Record<Signal, string> = { metrics: '/v1/metrics', traces: '/v1/traces', logs: '/v1/logs' };

/** The OTLP URL of a signal, or undefined when it is off (no endpoint, or toggled off). */
export function signalUrl(obs: ObsConfig, signal: Signal): string | undefined {
  const enabled = { metrics: obs.metricsExportEnabled, traces: obs.tracesExportEnabled, logs: obs.logsExportEnabled }[signal];
  if (!enabled) return undefined;
  const specific = { metrics: obs.metricEndpoint, traces: obs.traceEndpoint, logs: obs.logEndpoint }[signal];
  if (specific !== undefined) return specific;
  if (obs.endpoint === undefined) return undefined;
  return `${obs.endpoint.replace(/\/+$/, '')}${SIGNAL_PATH[signal]}`;
}

/** True when at least one signal is exported. */
export function anySignal(obs: ObsConfig): boolean {
  return (['metrics', 'traces', 'logs'] as const).some((s) => signalUrl(obs, s) !== undefined);
}
