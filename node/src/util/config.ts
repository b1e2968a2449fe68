/**
 * Flags + environment → one frozen `Config` (SPEC "Configuration
 * variables", "Listeners", "Authentication" 5).
 *
 * Pure: the caller passes the environment, the flags, the working directory
 * and a `readFile` for the `*_FILE` credential sources. Problems that stop
 * start-up throw `SvcError('InvalidConfig')` (credential problems carry the
 * spec's exact entrypoint messages); everything worth telling the operator
 * but not fatal comes back in `warnings` for the start-up log.
 *
 * Storage-class values are kept as typed here; the `EC:<n>` rules live in
 * `topology/storage-class.ts` and run as the first start-up step.
 */
import { resolve } from 'node:path';
import { HEAL_CONFIG_VARIABLES, type HealConfig, parseHealConfig } from './heal-config.ts';
import { parseByteSize } from './bytes.ts';
import { CONSOLE_VARIABLES, type ConsoleConfig, parseConsoleConfig } from './console-config.ts';
import { SvcError } from './errors.ts';
import { IpSet } from './ip-set.ts';
import { NOTIFY_CONFIG_VARIABLES, parseAuditTargets, parseNotifyTargets, type TargetSpec } from './notify-config.ts';
import { type HttpLimits, NET_CONFIG_VARIABLES, parseHttpLimits, parseRpcLimits, parseTimeout, RPC_CONFIG_VARIABLES, type RpcLimits } from './net-config.ts';

/** `SVC_SHUTDOWN_TIMEOUT`'s default: the drain of requests in flight at a graceful stop. */
export const DEFAULT_SHUTDOWN_TIMEOUT_MS = 30_000;

export type Env = Readonly<Record<string, string | undefined>>;

export interface ListenAddress {
  /** As configured, e.g. `:9000`. */
  readonly raw: string;
  /** Host or IP to bind; '' means every interface. */
  readonly host: string;
  /** 0 asks the OS for a free port. */
  readonly port: number;
}

export type ListQuorum = 'disk' | 'reduced' | 'optimal' | 'auto' | 'strict';
export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'silent';

export interface Credentials {
  readonly accessKey: string;
  readonly secretKey: string;
  /** true when running with the built-in default root credential. */
  readonly isDefault: boolean;
  /** The `*_FILE` paths the keys were read from (re-read while the node runs: `root-credential.ts`). */
  readonly files?: { readonly accessKey?: string; readonly secretKey?: string };
}

export interface ObsConfig {
  readonly endpoint: string | undefined;
  readonly traceEndpoint: string | undefined;
  readonly metricEndpoint: string | undefined;
  readonly logEndpoint: string | undefined;
  readonly metricsExportEnabled: boolean;
  readonly tracesExportEnabled: boolean;
  readonly logsExportEnabled: boolean;
  /** SVC_OBS_METER_INTERVAL as typed, and in milliseconds (integer = seconds, or 500ms/30s/5m/1h). */
  readonly meterInterval: string | undefined;
  readonly meterIntervalMs: number | undefined;
  /** OTLP/HTTP encoding: `http/protobuf` (default) or `http/json`. */
  readonly protocol: 'http/protobuf' | 'http/json';
  /** Share of new traces sampled (0..1); requests carrying a `traceparent` follow its sampled flag. */
  readonly traceSampleRatio: number;
  readonly serviceName: string;
  readonly environment: string | undefined;
  readonly loggerLevel: LogLevel;
  readonly logDirectory: string | undefined;
  /** Where logs go: stdout (unset), rotating files (a directory), a remote endpoint (value with `://`). */
  readonly logDestination: 'stdout' | 'directory' | 'remote';
  readonly logFilename: string | undefined;
  readonly logRotationSizeMb: number | undefined;
  readonly logRotationTime: string | undefined;
  /** SVC_OBS_LOG_ROTATION_TIME in milliseconds (`hourly`, `daily`, or 30m/6h/1d). */
  readonly logRotationTimeMs: number | undefined;
  readonly logKeepFiles: number | undefined;
}

export interface StorageClassConfig {
  /** SVC_STORAGE_CLASS_STANDARD as typed; undefined or '' = automatic policy. */
  readonly standard: string | undefined;
  readonly rrs: string | undefined;
  /** Accepted for compatibility, stored, no runtime effect. */
  readonly optimize: string | undefined;
  /** Fixed per-shard inline limit in bytes, when set. */
  readonly inlineBlock: number | undefined;
}

/** The local key store of SSE-S3 / SSE-KMS (`crypto/kms.ts`); both unset: none. */
export interface KmsConfig {
  /** `SVC_KMS_SECRET_KEY`: `<key-id>:<base64 of 32 bytes>`. */
  readonly secretKey: string | undefined;
  /** `SVC_KMS_SECRET_KEY_FILE`: a file of such lines, read (and re-read) at run time. */
  readonly secretKeyFile: string | undefined;
}

export interface Config {
  /** Volume expressions, one per pool, exactly as typed. */
  readonly volumes: readonly string[];
  readonly volumesSource: 'args' | 'SVC_VOLUMES' | 'COMPAT_VOLUMES';
  readonly address: ListenAddress;
  readonly consoleAddress: ListenAddress;
  readonly consoleEnable: boolean;
  /** The web console's settings (`util/console-config.ts`). */
  readonly console: ConsoleConfig;
  readonly healthEndpointEnable: boolean;
  readonly erasureSetDriveCount: number | undefined;
  readonly storageClass: StorageClassConfig;
  readonly rebalanceMaxAttempts: number;
  readonly decommissionBucketConcurrency: number;
  readonly decommissionEntryConcurrency: number;
  /** SVC_HASH_MULTIBUFFER: multi-buffer hashing of upload bodies (`erasure/hash-service.ts`). */
  readonly hashMode: HashMode;
  /** Raw SVC_LIST_OBJECTS_QUORUM and its meaning (unknown values mean strict). */
  readonly listObjectsQuorum: ListQuorum;
  readonly startupReadinessMaxWaitSecs: number;
  /**
   * `SVC_SHUTDOWN_TIMEOUT` (default 30 s): how long a SIGTERM/SIGINT waits for
   * requests in flight to finish once the listeners stopped accepting; then
   * their connections are cut (docs/architecture.md "Shutdown").
   */
  readonly shutdownTimeoutMs: number;
  /** `SVC_LDAP_KEY_RECHECK_INTERVAL` (default 5 min): how often LDAP users' access keys are re-checked against the directory (`server/ldap-key-recheck.ts`). */
  readonly ldapKeyRecheckMs: number;
  readonly credentials: Credentials;
  /** Domains for virtual-host-style S3 requests (`<bucket>.<domain>`); path style always works. */
  readonly domains: readonly string[];
  /** Region clients sign for (default `us-east-1`). */
  readonly region: string;
  /** SVC_ACCEPT_ANY_REGION: accept SigV4 scopes naming any region (clients that sign with their own region name). */
  readonly acceptAnyRegion: boolean;
  readonly obs: ObsConfig;
  /** Pace of the heal and scanner workers. */
  readonly heal: HealConfig;
  readonly kms: KmsConfig;
  /**
   * TLS certificate directory (`--certs-dir`, `SVC_CERTS_DIR`, else
   * `~/.svc/certs`; docs/tls.md). `explicit`: named by the flag or the
   * variable, so it must exist. Undefined without a home directory.
   */
  readonly certsDir: { readonly path: string; readonly explicit: boolean } | undefined;
  /** `SVC_TRUSTED_PROXIES`: peers whose `X-Forwarded-*` headers are honoured (none by default). */
  readonly trustedProxies: IpSet;
  /** Timeouts and connection caps of the HTTP listeners (`util/net-config.ts`). */
  readonly http: HttpLimits;
  /** Bucket notification targets from `SVC_NOTIFY_*` (`docs/notifications.md`). */
  readonly notify: readonly TargetSpec[];
  /** Audit log webhooks from `SVC_AUDIT_WEBHOOK_*`. */
  readonly audit: readonly TargetSpec[];
  /** Internode call deadlines and slow-peer detection (`util/net-config.ts`). */
  readonly rpc: RpcLimits;
  /** Base directory for relative volume paths. */
  readonly cwd: string;
}

export interface ConfigWarning {
  readonly event: string;
  readonly message: string;
  readonly variable?: string;
}

export interface ConfigInput {
  /** Positional volume arguments of `svc server`. */
  readonly args: readonly string[];
  readonly flags?: { readonly address?: string | undefined; readonly consoleAddress?: string | undefined; readonly certsDir?: string | undefined };
  readonly env: Env;
  readonly cwd: string;
  /** Reads a credential file; throws when unreadable. */
  readonly readFile: (path: string) => string;
}

export const DEFAULT_ADDRESS = ':9000';
export const DEFAULT_CONSOLE_ADDRESS = ':9001';
export const DEFAULT_ACCESS_KEY = 'svcadmin';
export const DEFAULT_SECRET_KEY = 'svcadmin';
export const INLINE_BLOCK_WARN_ABOVE = 128 * 1024;
export const DECOMMISSION_ENTRY_HARD_CAP = 64;

/** Keys whose `COMPAT_` spelling maps onto the `SVC_` name (SPEC "Compatibility mapping"). */
export const COMPAT_KEYS = [
  'VOLUMES',
  'ERASURE_SET_DRIVE_COUNT',
  'STORAGE_CLASS_STANDARD',
  'STORAGE_CLASS_RRS',
  'STORAGE_CLASS_OPTIMIZE',
  'STORAGE_CLASS_INLINE_BLOCK',
] as const;

/** Every variable the server reads, with a one-line description (used by `--help`). */
export const CONFIG_VARIABLES: readonly (readonly [string, string])[] = [
  ['SVC_VOLUMES', 'space-separated volume expressions, one per pool; used when `svc server` gets no arguments'],
  ['SVC_ADDRESS', `S3/admin/RPC/health listener address (default ${DEFAULT_ADDRESS}); flag --address`],
  ['SVC_CONSOLE_ADDRESS', `console listener address (default ${DEFAULT_CONSOLE_ADDRESS}); flag --console-address`],
  ['SVC_CONSOLE_ENABLE', 'false disables the console listener (default true)'],
  ...CONSOLE_VARIABLES,
  ['SVC_CERTS_DIR', 'TLS certificate directory: public.crt + private.key (TLS on 9000 and 9001), <name>/ pairs chosen by SNI, CAs/ trusted by internode calls (default ~/.svc/certs; the image: /etc/svc/certs); flag --certs-dir'],
  ['SVC_TRUSTED_PROXIES', 'comma-separated CIDRs (or "loopback") whose X-Forwarded-Proto/-For/-Host/-Prefix headers are honoured (default: none)'],
  ['SVC_HEALTH_ENDPOINT_ENABLE', 'false disables the health probes on the S3 listener (default true)'],
  ['SVC_DOMAIN', 'comma-separated domains for virtual-host-style S3 requests (<bucket>.<domain>); path style always works'],
  ['SVC_REGION', 'region S3 clients sign for (default us-east-1): 1-63 letters, digits, dots, hyphens, underscores'],
  ['SVC_ACCEPT_ANY_REGION', 'true accepts requests signed for any region name, not only SVC_REGION (default false)'],
  ['SVC_ERASURE_SET_DRIVE_COUNT', 'pins the set width: a valid symmetric divisor of every pool, at most 16; fixed once a pool is formatted'],
  ['SVC_STORAGE_CLASS_STANDARD', 'STANDARD parity EC:<n> (at most half the narrowest set); empty = automatic policy'],
  ['SVC_STORAGE_CLASS_RRS', 'REDUCED_REDUNDANCY parity EC:<n>; empty = automatic policy (1, 0 on a single drive)'],
  ['SVC_STORAGE_CLASS_OPTIMIZE', 'accepted for compatibility; stored, no effect'],
  ['SVC_STORAGE_CLASS_INLINE_BLOCK', 'fixed per-shard inline limit, e.g. 128KiB (values above 128KiB log a warning)'],
  ['SVC_REBALANCE_MAX_ATTEMPTS', 'rebalance attempts per object (default 3)'],
  ['SVC_DECOMMISSION_BUCKET_CONCURRENCY', 'buckets drained in parallel (default 4)'],
  ['SVC_DECOMMISSION_ENTRY_CONCURRENCY', `entries drained in parallel (default 8, hard cap ${DECOMMISSION_ENTRY_HARD_CAP})`],
  ['SVC_HASH_MULTIBUFFER', 'hashing of upload bodies on pool threads, MD5 of concurrent uploads in SIMD lanes: auto (default: bodies of 1 MiB or more, where the lanes are faster here), on (every body, both digests in the lanes), off (node:crypto on the event loop)'],
  ['SVC_LIST_OBJECTS_QUORUM', 'listing quorum: disk, reduced, optimal (default), auto; anything else means strict'],
  ['SVC_STARTUP_READINESS_MAX_WAIT_SECS', 'seconds start-up waits for readiness before continuing degraded (default 120)'],
  ['SVC_ACCESS_KEY', `root access key (default ${DEFAULT_ACCESS_KEY}, with a warning); not together with SVC_ACCESS_KEY_FILE`],
  ['SVC_ACCESS_KEY_FILE', 'file holding the root access key; re-read while the node runs (a changed key pair takes effect within 2 s)'],
  ['SVC_SECRET_KEY', `root secret key (default ${DEFAULT_SECRET_KEY}); not together with SVC_SECRET_KEY_FILE`],
  ['SVC_SECRET_KEY_FILE', 'file holding the root secret key; re-read like SVC_ACCESS_KEY_FILE'],
  ['SVC_KMS_SECRET_KEY', 'key store for SSE-S3/SSE-KMS: <key-id>:<base64 of 32 random bytes>; not together with SVC_KMS_SECRET_KEY_FILE'],
  ['SVC_KMS_SECRET_KEY_FILE', 'file of key lines <key-id>:<base64> (first = default), re-read every 10 s; unreadable: readiness kms_not_ready'],
  ['SVC_OBS_ENDPOINT', 'base OTLP endpoint for traces, metrics and logs'],
  ['SVC_OBS_TRACE_ENDPOINT', 'OTLP endpoint override for traces'],
  ['SVC_OBS_METRIC_ENDPOINT', 'OTLP endpoint override for metrics'],
  ['SVC_OBS_LOG_ENDPOINT', 'OTLP endpoint override for logs'],
  ['SVC_OBS_METRICS_EXPORT_ENABLED', 'toggle metric export (default true)'],
  ['SVC_OBS_TRACES_EXPORT_ENABLED', 'toggle trace export (default true)'],
  ['SVC_OBS_LOGS_EXPORT_ENABLED', 'toggle log export (default true)'],
  ['SVC_OBS_METER_INTERVAL', 'metric export interval: seconds, or 500ms/30s/5m/1h (default 60s)'],
  ['SVC_OBS_PROTOCOL', 'OTLP/HTTP encoding: http/protobuf (default) or http/json'],
  ['SVC_OBS_TRACE_SAMPLE_RATIO', 'share of new traces sampled, 0..1 (default 0.01); a request with a traceparent follows its sampled flag'],
  ['SVC_OBS_SERVICE_NAME', 'service.name resource attribute (default svc)'],
  ['SVC_OBS_ENVIRONMENT', 'deployment environment resource attribute'],
  ['SVC_OBS_LOGGER_LEVEL', 'log level: trace, debug, info (default), warn, error, fatal, silent'],
  ['SVC_OBS_LOG_DIRECTORY', 'unset: logs on stdout; a directory: log files; a value with :// : remote log endpoint'],
  ['SVC_OBS_LOG_FILENAME', 'log file name inside SVC_OBS_LOG_DIRECTORY (default svc.log)'],
  ['SVC_OBS_LOG_ROTATION_SIZE_MB', 'file-log rotation size in MB'],
  ['SVC_OBS_LOG_ROTATION_TIME', 'file-log rotation period: hourly, daily, or 30m/6h/1d'],
  ['SVC_OBS_LOG_KEEP_FILES', 'rotated log files to keep'],
  ['SVC_LDAP_KEY_RECHECK_INTERVAL', "how often the users of LDAP users' access keys are looked up again: gone, their keys are disabled; groups refreshed (1s to 1h, default 5m)"],
  ['SVC_SHUTDOWN_TIMEOUT', 'on SIGTERM/SIGINT, how long requests in flight may take to finish after the listeners stop accepting: 0, 500ms, 30s, 2m (default 30s); keep it below the pod\'s terminationGracePeriodSeconds'],
  ...HEAL_CONFIG_VARIABLES,
  ...NET_CONFIG_VARIABLES,
  ...NOTIFY_CONFIG_VARIABLES,
  ...RPC_CONFIG_VARIABLES,
  ['COMPAT_VOLUMES, COMPAT_ERASURE_SET_DRIVE_COUNT, COMPAT_STORAGE_CLASS_*', 'compatibility spellings, used when the SVC_ name is unset'],
];

export type HashMode = 'auto' | 'on' | 'off';

export function parseHashMode(v: string | undefined): HashMode {
  if (v === undefined || v === '' || v === 'auto') return 'auto';
  if (v === 'on' || v === 'off') return v;
  throw invalid('SVC_HASH_MULTIBUFFER', `"${v}": expected auto, on or off`);
}

function invalid(variable: string, message: string): SvcError {
  return new SvcError('InvalidConfig', `${variable}: ${message}`, { variable });
}

/** Parses `host:port`, `:port`, `[v6]:port`. */
export function parseListenAddress(variable: string, raw: string): ListenAddress {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]*)):([0-9]{1,5})$/.exec(raw.trim());
  if (!m) throw invalid(variable, `invalid address "${raw}"; expected host:port or :port, e.g. :9000 or 127.0.0.1:9000`);
  const port = Number(m[3]);
  if (port > 65535) throw invalid(variable, `port ${port} is out of range`);
  return { raw: raw.trim(), host: m[1] ?? m[2] ?? '', port };
}

function parseBool(variable: string, v: string | undefined, dflt: boolean): boolean {
  if (v === undefined || v.trim() === '') return dflt;
  const s = v.trim().toLowerCase();
  if (['true', 'on', 'yes', '1', 'enable', 'enabled'].includes(s)) return true;
  if (['false', 'off', 'no', '0', 'disable', 'disabled'].includes(s)) return false;
  throw invalid(variable, `invalid boolean "${v}"; expected true or false`);
}

function parseInteger(variable: string, v: string | undefined, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined {
  if (v === undefined || v.trim() === '') return undefined;
  if (!/^[0-9]+$/.test(v.trim())) throw invalid(variable, `invalid integer "${v}"`);
  const n = Number(v.trim());
  if (n < min || n > max) throw invalid(variable, `${n} is outside ${min}..${max}`);
  return n;
}

function parseDurationMs(variable: string, v: string | undefined): number | undefined {
  if (v === undefined || v.trim() === '') return undefined;
  const m = /^([0-9]+)(ms|s|m|h)?$/.exec(v.trim());
  if (!m) throw invalid(variable, `invalid interval "${v}"; expected seconds or a value like 500ms, 30s, 5m, 1h`);
  const n = Number(m[1]);
  const mult = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[(m[2] ?? 's') as 'ms' | 's' | 'm' | 'h'];
  if (n === 0) throw invalid(variable, 'interval must be positive');
  return n * mult;
}

function parseRotationMs(v: string | undefined): number | undefined {
  if (v === undefined || v.trim() === '') return undefined;
  const s = v.trim().toLowerCase();
  if (s === 'hourly') return 3_600_000;
  if (s === 'daily') return 86_400_000;
  const m = /^([0-9]+)(m|h|d)$/.exec(s);
  const n = m ? Number(m[1]) : 0;
  if (!m || n === 0) throw invalid('SVC_OBS_LOG_ROTATION_TIME', `invalid period "${v}"; expected hourly, daily, or a value like 30m, 6h, 1d`);
  return n * { m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as 'm' | 'h' | 'd'];
}

/** Default share of new traces sampled (SVC_OBS_TRACE_SAMPLE_RATIO). */
export const DEFAULT_TRACE_SAMPLE_RATIO = 0.01;

function parseProtocol(v: string | undefined): ObsConfig['protocol'] {
  const s = (v ?? '').trim().toLowerCase();
  if (s === '' || s === 'http/protobuf') return 'http/protobuf';
  if (s === 'http/json') return 'http/json';
  throw invalid('SVC_OBS_PROTOCOL', `unsupported protocol "${v}"; expected http/protobuf or http/json`);
}

function parseRatio(variable: string, v: string | undefined, dflt: number): number {
  if (v === undefined || v.trim() === '') return dflt;
  const n = Number(v.trim());
  if (!/^[0-9.eE+-]+$/.test(v.trim()) || !Number.isFinite(n) || n < 0 || n > 1) throw invalid(variable, `invalid ratio "${v}"; expected a number from 0 to 1`);
  return n;
}

const LEVELS: readonly LogLevel[] = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];

function parseLevel(v: string | undefined): LogLevel {
  if (v === undefined || v.trim() === '') return 'info';
  const s = v.trim().toLowerCase();
  const lvl = s === 'warning' ? 'warn' : s;
  if (!(LEVELS as readonly string[]).includes(lvl)) throw invalid('SVC_OBS_LOGGER_LEVEL', `invalid level "${v}"; expected one of ${LEVELS.join(', ')}`);
  return lvl as LogLevel;
}

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v.trim() === '' ? undefined : v.trim();
}

/**
 * Returns the environment with COMPAT_ spellings applied: a COMPAT_ value is
 * used when the SVC_ name is unset; when both are set the SVC_ value wins and
 * a `config_compat_conflict` warning is reported.
 */
export function applyCompatMapping(env: Env, warnings: ConfigWarning[]): Env {
  const out: Record<string, string | undefined> = { ...env };
  for (const key of COMPAT_KEYS) {
    const svc = env[`SVC_${key}`];
    const compat = env[`COMPAT_${key}`];
    if (compat === undefined) continue;
    if (svc === undefined) {
      out[`SVC_${key}`] = compat;
    } else {
      warnings.push({
        event: 'config_compat_conflict',
        variable: `SVC_${key}`,
        message: `both SVC_${key} and COMPAT_${key} are set${svc === compat ? ' (same value)' : ''}; using SVC_${key}`,
      });
    }
  }
  return out;
}

function readCredential(env: Env, name: 'SVC_ACCESS_KEY' | 'SVC_SECRET_KEY', readFile: (p: string) => string): string | undefined {
  const direct = env[name];
  const file = env[`${name}_FILE`];
  if (direct !== undefined && file !== undefined) throw new SvcError('InvalidConfig', `ERROR: Set either ${name} or ${name}_FILE, not both.`, { variable: name });
  if (direct !== undefined) {
    if (direct === '') throw new SvcError('InvalidConfig', `ERROR: ${name} must not be empty.`, { variable: name });
    return direct;
  }
  if (file !== undefined) {
    let text: string;
    try {
      if (file === '') throw new Error('empty path');
      text = readFile(file);
    } catch (cause) {
      throw new SvcError('InvalidConfig', `ERROR: ${name}_FILE points to an unreadable file.`, { variable: `${name}_FILE`, path: file }, { cause });
    }
    const value = text.replace(/\r?\n$/, '');
    if (value === '') throw new SvcError('InvalidConfig', `ERROR: ${name} must not be empty.`, { variable: `${name}_FILE`, path: file });
    return value;
  }
  return undefined;
}

/** Credentials per SPEC Authentication 5 (and the same rules for the secret key). */
export function loadCredentials(env: Env, readFile: (p: string) => string, warnings: ConfigWarning[]): Credentials {
  const accessKey = readCredential(env, 'SVC_ACCESS_KEY', readFile);
  const secretKey = readCredential(env, 'SVC_SECRET_KEY', readFile);
  if (accessKey === undefined && secretKey === undefined) {
    warnings.push({
      event: 'default_credentials',
      message: `running with the default root credential (${DEFAULT_ACCESS_KEY}/${DEFAULT_SECRET_KEY}); set SVC_ACCESS_KEY and SVC_SECRET_KEY (or their _FILE variants) for anything but local testing`,
    });
    return { accessKey: DEFAULT_ACCESS_KEY, secretKey: DEFAULT_SECRET_KEY, isDefault: true };
  }
  if (accessKey === undefined) throw new SvcError('InvalidConfig', 'ERROR: SVC_ACCESS_KEY (or SVC_ACCESS_KEY_FILE) must be set together with the secret key.');
  if (secretKey === undefined) throw new SvcError('InvalidConfig', 'ERROR: SVC_SECRET_KEY (or SVC_SECRET_KEY_FILE) must be set together with the access key.');
  const files = { ...(env.SVC_ACCESS_KEY_FILE ? { accessKey: env.SVC_ACCESS_KEY_FILE } : {}), ...(env.SVC_SECRET_KEY_FILE ? { secretKey: env.SVC_SECRET_KEY_FILE } : {}) };
  return { accessKey, secretKey, isDefault: false, ...(Object.keys(files).length > 0 ? { files: Object.freeze(files) } : {}) };
}

/** Builds the frozen configuration. */
export function loadConfig(input: ConfigInput): { config: Config; warnings: ConfigWarning[] } {
  const warnings: ConfigWarning[] = [];
  const env = applyCompatMapping(input.env, warnings);

  let volumes: string[];
  let volumesSource: Config['volumesSource'];
  if (input.args.length > 0) {
    volumes = [...input.args];
    volumesSource = 'args';
  } else {
    volumes = (env.SVC_VOLUMES ?? '').split(/\s+/).filter((s) => s !== '');
    volumesSource = input.env.SVC_VOLUMES === undefined && input.env.COMPAT_VOLUMES !== undefined ? 'COMPAT_VOLUMES' : 'SVC_VOLUMES';
    if (volumes.length === 0) {
      throw new SvcError('InvalidConfig', 'no volumes: pass volume arguments to `svc server` or set SVC_VOLUMES (see `svc server --help`)');
    }
  }

  const address = parseListenAddress(input.flags?.address !== undefined ? '--address' : 'SVC_ADDRESS', input.flags?.address ?? nonEmpty(env.SVC_ADDRESS) ?? DEFAULT_ADDRESS);
  const consoleAddress = parseListenAddress(
    input.flags?.consoleAddress !== undefined ? '--console-address' : 'SVC_CONSOLE_ADDRESS',
    input.flags?.consoleAddress ?? nonEmpty(env.SVC_CONSOLE_ADDRESS) ?? DEFAULT_CONSOLE_ADDRESS,
  );
  const consoleEnable = parseBool('SVC_CONSOLE_ENABLE', env.SVC_CONSOLE_ENABLE, true);
  if (consoleEnable && address.port !== 0 && address.port === consoleAddress.port && (address.host === consoleAddress.host || !address.host || !consoleAddress.host)) {
    throw invalid('SVC_CONSOLE_ADDRESS', `console address ${consoleAddress.raw} collides with the S3 listener address ${address.raw}`);
  }

  const inlineRaw = nonEmpty(env.SVC_STORAGE_CLASS_INLINE_BLOCK);
  const inlineBlock = inlineRaw === undefined ? undefined : parseByteSize(inlineRaw, 'SVC_STORAGE_CLASS_INLINE_BLOCK');
  if (inlineBlock !== undefined && inlineBlock > INLINE_BLOCK_WARN_ABOVE) {
    warnings.push({
      event: 'inline_block_above_limit',
      variable: 'SVC_STORAGE_CLASS_INLINE_BLOCK',
      message: `SVC_STORAGE_CLASS_INLINE_BLOCK=${inlineRaw} is above 128KiB; large inline objects make every xl.meta read expensive`,
    });
  }

  const hashMode = parseHashMode(env.SVC_HASH_MULTIBUFFER);
  let entryConcurrency = parseInteger('SVC_DECOMMISSION_ENTRY_CONCURRENCY', env.SVC_DECOMMISSION_ENTRY_CONCURRENCY, 1) ?? 8;
  if (entryConcurrency > DECOMMISSION_ENTRY_HARD_CAP) {
    warnings.push({
      event: 'decommission_entry_concurrency_capped',
      variable: 'SVC_DECOMMISSION_ENTRY_CONCURRENCY',
      message: `SVC_DECOMMISSION_ENTRY_CONCURRENCY=${entryConcurrency} is above the hard cap; using ${DECOMMISSION_ENTRY_HARD_CAP}`,
    });
    entryConcurrency = DECOMMISSION_ENTRY_HARD_CAP;
  }

  const lq = (env.SVC_LIST_OBJECTS_QUORUM ?? '').trim().toLowerCase();
  const listObjectsQuorum: ListQuorum = lq === '' ? 'optimal' : (['disk', 'reduced', 'optimal', 'auto'] as const).find((q) => q === lq) ?? 'strict';

  const logDirectory = nonEmpty(env.SVC_OBS_LOG_DIRECTORY);
  const obs: ObsConfig = {
    endpoint: nonEmpty(env.SVC_OBS_ENDPOINT),
    traceEndpoint: nonEmpty(env.SVC_OBS_TRACE_ENDPOINT),
    metricEndpoint: nonEmpty(env.SVC_OBS_METRIC_ENDPOINT),
    logEndpoint: nonEmpty(env.SVC_OBS_LOG_ENDPOINT),
    metricsExportEnabled: parseBool('SVC_OBS_METRICS_EXPORT_ENABLED', env.SVC_OBS_METRICS_EXPORT_ENABLED, true),
    tracesExportEnabled: parseBool('SVC_OBS_TRACES_EXPORT_ENABLED', env.SVC_OBS_TRACES_EXPORT_ENABLED, true),
    logsExportEnabled: parseBool('SVC_OBS_LOGS_EXPORT_ENABLED', env.SVC_OBS_LOGS_EXPORT_ENABLED, true),
    meterInterval: nonEmpty(env.SVC_OBS_METER_INTERVAL),
    meterIntervalMs: parseDurationMs('SVC_OBS_METER_INTERVAL', env.SVC_OBS_METER_INTERVAL),
    protocol: parseProtocol(env.SVC_OBS_PROTOCOL),
    traceSampleRatio: parseRatio('SVC_OBS_TRACE_SAMPLE_RATIO', env.SVC_OBS_TRACE_SAMPLE_RATIO, DEFAULT_TRACE_SAMPLE_RATIO),
    serviceName: nonEmpty(env.SVC_OBS_SERVICE_NAME) ?? 'svc',
    environment: nonEmpty(env.SVC_OBS_ENVIRONMENT),
    loggerLevel: parseLevel(env.SVC_OBS_LOGGER_LEVEL),
    logDirectory,
    logDestination: logDirectory === undefined ? 'stdout' : logDirectory.includes('://') ? 'remote' : 'directory',
    logFilename: nonEmpty(env.SVC_OBS_LOG_FILENAME),
    logRotationSizeMb: parseInteger('SVC_OBS_LOG_ROTATION_SIZE_MB', env.SVC_OBS_LOG_ROTATION_SIZE_MB, 1),
    logRotationTime: nonEmpty(env.SVC_OBS_LOG_ROTATION_TIME),
    logRotationTimeMs: parseRotationMs(env.SVC_OBS_LOG_ROTATION_TIME),
    logKeepFiles: parseInteger('SVC_OBS_LOG_KEEP_FILES', env.SVC_OBS_LOG_KEEP_FILES, 0),
  };
  if (obs.logFilename !== undefined && /[/\\]/.test(obs.logFilename)) throw invalid('SVC_OBS_LOG_FILENAME', 'must be a file name, not a path');

  const config: Config = {
    volumes: Object.freeze(volumes),
    volumesSource,
    address: Object.freeze(address),
    consoleAddress: Object.freeze(consoleAddress),
    consoleEnable,
    console: parseConsoleConfig(env),
    healthEndpointEnable: parseBool('SVC_HEALTH_ENDPOINT_ENABLE', env.SVC_HEALTH_ENDPOINT_ENABLE, true),
    domains: Object.freeze(parseDomains(env.SVC_DOMAIN)),
    region: parseRegion(env.SVC_REGION),
    acceptAnyRegion: parseBool('SVC_ACCEPT_ANY_REGION', env.SVC_ACCEPT_ANY_REGION, false),
    erasureSetDriveCount: parseInteger('SVC_ERASURE_SET_DRIVE_COUNT', env.SVC_ERASURE_SET_DRIVE_COUNT, 1, 16),
    storageClass: Object.freeze({
      standard: env.SVC_STORAGE_CLASS_STANDARD,
      rrs: env.SVC_STORAGE_CLASS_RRS,
      optimize: env.SVC_STORAGE_CLASS_OPTIMIZE,
      inlineBlock,
    }),
    rebalanceMaxAttempts: parseInteger('SVC_REBALANCE_MAX_ATTEMPTS', env.SVC_REBALANCE_MAX_ATTEMPTS, 1) ?? 3,
    decommissionBucketConcurrency: parseInteger('SVC_DECOMMISSION_BUCKET_CONCURRENCY', env.SVC_DECOMMISSION_BUCKET_CONCURRENCY, 1) ?? 4,
    decommissionEntryConcurrency: entryConcurrency,
    hashMode,
    listObjectsQuorum,
    startupReadinessMaxWaitSecs: parseInteger('SVC_STARTUP_READINESS_MAX_WAIT_SECS', env.SVC_STARTUP_READINESS_MAX_WAIT_SECS, 0) ?? 120,
    shutdownTimeoutMs: parseTimeout('SVC_SHUTDOWN_TIMEOUT', env.SVC_SHUTDOWN_TIMEOUT, DEFAULT_SHUTDOWN_TIMEOUT_MS, 0),
    ldapKeyRecheckMs: parseTimeout('SVC_LDAP_KEY_RECHECK_INTERVAL', env.SVC_LDAP_KEY_RECHECK_INTERVAL, 5 * 60_000, 1_000),
    credentials: Object.freeze(loadCredentials(env, input.readFile, warnings)),
    obs: Object.freeze(obs),
    heal: Object.freeze(parseHealConfig(env)),
    kms: Object.freeze(parseKmsConfig(env)),
    certsDir: certsDirOf(input, env),
    trustedProxies: IpSet.parse(env.SVC_TRUSTED_PROXIES),
    http: parseHttpLimits(env),
    notify: parseNotifyTargets(env),
    audit: parseAuditTargets(env),
    rpc: parseRpcLimits(env),
    cwd: input.cwd,
  };
  return { config: Object.freeze(config), warnings };
}

/** Default certificate directory below the home directory. */
export const DEFAULT_CERTS_SUBDIR = '.svc/certs';

function certsDirOf(input: ConfigInput, env: Env): Config['certsDir'] {
  const named = input.flags?.certsDir ?? nonEmpty(env.SVC_CERTS_DIR);
  if (named !== undefined) return Object.freeze({ path: resolve(input.cwd, named), explicit: true });
  const home = nonEmpty(env.HOME);
  return home === undefined ? undefined : Object.freeze({ path: resolve(home, DEFAULT_CERTS_SUBDIR), explicit: false });
}

/**
 * `SVC_KMS_SECRET_KEY` / `SVC_KMS_SECRET_KEY_FILE`: at most one. A key given
 * directly is checked at start-up (a bad key stops it); a key file is read at
 * run time, so one that is not there yet leaves the node up and not ready
 * (`kms_not_ready`) until it appears.
 */
export function parseKmsConfig(env: Env): KmsConfig {
  const secretKey = nonEmpty(env.SVC_KMS_SECRET_KEY);
  const secretKeyFile = nonEmpty(env.SVC_KMS_SECRET_KEY_FILE);
  if (secretKey !== undefined && secretKeyFile !== undefined) {
    throw new SvcError('InvalidConfig', 'Set either SVC_KMS_SECRET_KEY or SVC_KMS_SECRET_KEY_FILE, not both.', { variable: 'SVC_KMS_SECRET_KEY' });
  }
  // The key's format is checked by the key store, built before any disk is touched (server/kms.ts).
  return { secretKey, secretKeyFile };
}

/** `SVC_DOMAIN`: comma-separated host names, lower-cased, without port or trailing dot. */
export function parseDomains(raw: string | undefined): string[] {
  if (raw === undefined || raw.trim() === '') return [];
  return raw.split(',').map((d) => {
    const name = d.trim().toLowerCase().replace(/\.$/, '');
    if (!/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/.test(name)) {
      throw new SvcError('InvalidConfig', `SVC_DOMAIN: "${d.trim()}" is not a valid domain name`);
    }
    return name;
  });
}

/**
 * `SVC_REGION` (default us-east-1): any name a SigV4 scope can carry and S3
 * tools accept, AWS's own (`eu-west-1`) or custom (`dc1.rack-2`, `home_lab`,
 * a host name): 1-63 letters, digits, `.`, `-`, `_`, starting and ending
 * with a letter or digit. No `/` (it separates the scope's fields), no spaces.
 */
export function parseRegion(raw: string | undefined): string {
  if (raw === undefined || raw.trim() === '') return 'us-east-1';
  const r = raw.trim();
  if (!/^[A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?$/.test(r)) throw new SvcError('InvalidConfig', `SVC_REGION: "${r}" is not a valid region name`);
  return r;
}
