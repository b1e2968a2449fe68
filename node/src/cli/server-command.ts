/**
 * `svc server <volume-args...>`: configuration → logger → `startServer`,
 * signals → graceful shutdown. Returns the process exit code.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { type RunningNode, startNode } from '../server/start-node.ts';
import { systemClock } from '../util/clock.ts';
import { type Config, type ConfigWarning, loadConfig } from '../util/config.ts';
import { SvcError, toSvcError } from '../util/errors.ts';
import { createLogger, type LogDestination, type Logger } from '../util/logger.ts';
import { anySignal } from '../telemetry/endpoints.ts';
import type { Telemetry } from '../telemetry/telemetry.ts';
import { RemoteLogStream } from './remote-log-stream.ts';
import { RotatingLogFile } from './rotating-log-file.ts';

export interface ServerCommandOptions {
  readonly args: readonly string[];
  readonly address?: string | undefined;
  readonly consoleAddress?: string | undefined;
  readonly certsDir?: string | undefined;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly version: string;
}

function stderrLine(text: string): void {
  process.stderr.write(`${text}\n`);
}

/** The message an operator sees on stderr for a start-up failure. */
export function failureText(e: SvcError): string {
  return e.message.startsWith('ERROR: ') ? e.message : `ERROR: ${e.code}: ${e.message}`;
}

/** A listener's address as a person types it: `localhost` for a wildcard bind, IPv6 in brackets. */
function hostOf(a: AddressInfo): string {
  if (a.address === '::' || a.address === '0.0.0.0') return 'localhost';
  return a.family === 'IPv6' ? `[${a.address}]` : a.address;
}

/**
 * The lines a person starting `svc server` at a terminal reads once the node
 * is ready (the JSON log says the same for machines): where S3 and the
 * console are, which root user, and the client command that talks to it
 * (`cli`: how this person runs the client, `npx svc` in a clone). The secret
 * key is shown only when it is the well-known default.
 */
export function readyBanner(o: {
  version: string;
  cli: string;
  scheme: 'http' | 'https';
  address: AddressInfo;
  console: AddressInfo | undefined;
  credentials: { accessKey: string; secretKey: string; isDefault: boolean };
}): string {
  const url = `${o.scheme}://${hostOf(o.address)}:${o.address.port}`;
  const c = o.credentials;
  const secret = c.isDefault ? c.secretKey : '"$SVC_SECRET_KEY"';
  return [
    `svc ${o.version} is ready.`,
    `  S3 API    ${url}`,
    ...(o.console ? [`  Console   ${o.scheme}://${hostOf(o.console)}:${o.console.port}`] : []),
    `  Root user ${c.accessKey}${c.isDefault ? ` / ${c.secretKey} (the default: set SVC_ACCESS_KEY and SVC_SECRET_KEY for anything but a try-out)` : ''}`,
    `  Client    ${o.cli} alias set local ${url} ${c.accessKey} ${secret}`,
  ].join('\n');
}

interface LogSetup {
  readonly log: Logger;
  readonly telemetry: Telemetry | undefined;
  readonly remote: RemoteLogStream | undefined;
}

/** Log destination (stdout, rotating files or a remote endpoint), telemetry, and the logger writing to both. */
async function openLogging(config: Config, version: string): Promise<LogSetup> {
  const o = config.obs;
  let destination: LogDestination | number = 1;
  let remote: RemoteLogStream | undefined;
  if (o.logDestination === 'directory') {
    const dir = o.logDirectory!;
    const file = o.logFilename ?? 'svc.log';
    try {
      destination = new RotatingLogFile({
        dir,
        file,
        maxBytes: o.logRotationSizeMb === undefined ? undefined : o.logRotationSizeMb * 1024 * 1024,
        maxAgeMs: o.logRotationTimeMs,
        keep: o.logKeepFiles,
      });
    } catch (err) {
      throw new SvcError('InvalidConfig', `SVC_OBS_LOG_DIRECTORY: cannot open log file ${dir}/${file}: ${(err as Error).message}`);
    }
  } else if (o.logDestination === 'remote') {
    try {
      remote = new RemoteLogStream({ url: o.logDirectory! });
    } catch (err) {
      throw new SvcError('InvalidConfig', `SVC_OBS_LOG_DIRECTORY: ${(err as Error).message}`);
    }
    destination = remote;
  }
  const r = remote;
  // The OpenTelemetry SDK is loaded only when something is exported: about 27 MiB of an idle node's memory.
  const telemetry = anySignal(o)
    ? (await import('../telemetry/telemetry.ts')).startTelemetry({ obs: o, address: config.address, version, ...(r ? { droppedLogRecords: () => r.dropped } : {}) })
    : undefined;
  const log = createLogger(o.loggerLevel, destination, { mixin: telemetry?.logMixin, also: telemetry?.logStream ? [telemetry.logStream] : [] });
  telemetry?.setLogger(log);
  return { log, telemetry, remote };
}

/** Exports what telemetry and the remote log destination still hold, then stops them. */
async function closeLogging(s: LogSetup | undefined): Promise<void> {
  await s?.telemetry?.shutdown();
  await s?.remote?.close();
}

export async function runServer(opts: ServerCommandOptions): Promise<number> {
  let config: Config;
  let warnings: ConfigWarning[];
  let logging: LogSetup | undefined;
  try {
    ({ config, warnings } = loadConfig({
      args: opts.args,
      flags: { address: opts.address, consoleAddress: opts.consoleAddress, certsDir: opts.certsDir },
      env: opts.env,
      cwd: process.cwd(),
      readFile: (p) => readFileSync(p, 'utf8'),
    }));
    logging = await openLogging(config, opts.version);
  } catch (err) {
    await closeLogging(logging);
    const e = toSvcError(err);
    const early = createLogger('info');
    early.error({ event: 'startup_failed', code: e.code, err: e.message }, e.message);
    stderrLine(failureText(e));
    return 1;
  }
  const { log, telemetry } = logging;
  log.info({ event: 'startup_begin', version: opts.version, volumes: config.volumes, volumesSource: config.volumesSource }, 'svc server starting');
  for (const w of warnings) log.warn({ event: w.event, variable: w.variable }, w.message);
  if (telemetry) log.info({ event: 'telemetry_started', signals: [...telemetry.signals] }, `exporting ${[...telemetry.signals].join(', ')} over OTLP`);

  let resolveExit!: (code: number) => void;
  const exited = new Promise<number>((r) => {
    resolveExit = r;
  });
  let node: RunningNode | undefined;
  // Signal handlers go in before anything starts, so a SIGTERM during
  // start-up is a graceful stop, never the default kill.
  let signalled = false;
  const shutdown = () => {
    node!.close().then(
      () => resolveExit(0),
      (err: unknown) => {
        log.error({ event: 'shutdown_failed', err: String(err) }, 'shutdown failed');
        resolveExit(1);
      },
    );
  };
  const onSignal = (sig: NodeJS.Signals) => {
    if (signalled) {
      log.warn({ event: 'shutdown_forced', signal: sig }, 'second signal: exiting now');
      resolveExit(1);
      return;
    }
    signalled = true;
    log.info({ event: 'shutdown_signal', signal: sig }, `received ${sig}`);
    if (node) shutdown();
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  try {
    node = await startNode(config, {
      logger: log,
      clock: systemClock,
      version: opts.version,
      ...(telemetry !== undefined ? { telemetry: { metrics: telemetry.signals.has('metrics'), traces: telemetry.signals.has('traces'), logs: telemetry.signals.has('logs') } } : {}),
      onFatal: (e) => {
        stderrLine(failureText(e));
        void (node?.close(0) ?? Promise.resolve()).finally(() => resolveExit(1));
      },
    });
  } catch (err) {
    const e = toSvcError(err);
    log.error({ event: 'startup_failed', code: e.code, err: e.message, cause: e.cause === undefined ? undefined : String(e.cause) }, e.message);
    stderrLine(failureText(e));
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
    await closeLogging(logging);
    return 1;
  }
  const { server } = node;
  log.info(
    { event: 'startup_address', address: server.address.port, console: server.consoleAddress?.port, scheme: server.scheme },
    `S3 API on ${server.scheme}, port ${server.address.port}${server.consoleAddress ? `, console on port ${server.consoleAddress.port}` : ''}`,
  );
  // A person at a terminal gets the essentials in a few plain lines after the JSON log
  // (started by npm, as `npm start` in a clone, the client is `npx svc` there).
  if (process.stderr.isTTY) {
    const cli = opts.env.npm_lifecycle_event !== undefined ? 'npx svc' : 'svc';
    stderrLine(readyBanner({ version: opts.version, cli, scheme: server.scheme, address: server.address, console: server.consoleAddress, credentials: config.credentials }));
  }
  if (signalled) shutdown();

  const code = await exited;
  process.off('SIGTERM', onSignal);
  process.off('SIGINT', onSignal);
  await closeLogging(logging);
  return code;
}

/**
 * `svc local [dir]`: the embedded default for trying svc out. Creates
 * `<dir>/d1..d4` (disk roots are otherwise never created) and runs
 * `svc server <dir>/d{1...4}`.
 */
export async function runLocal(dir: string, opts: Omit<ServerCommandOptions, 'args'>): Promise<number> {
  for (let i = 1; i <= 4; i++) mkdirSync(`${dir}/d${i}`, { recursive: true });
  return runServer({ ...opts, args: [`${dir}/d{1...4}`] });
}
