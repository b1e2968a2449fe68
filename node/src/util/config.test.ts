import { describe, expect, it } from 'vitest';
import { type ConfigInput, loadConfig, parseDomains, parseListenAddress, parseRegion } from './config.ts';

const files: Record<string, string> = { '/secrets/ak': 'fileuser\n', '/secrets/sk': 'filesecret\n', '/secrets/empty': '' };
const readFile = (p: string) => {
  const v = files[p];
  if (v === undefined) throw new Error(`ENOENT ${p}`);
  return v;
};
const load = (env: Record<string, string>, extra: Partial<ConfigInput> = {}) => loadConfig({ args: ['/x/d{1...4}'], env, cwd: '/srv', readFile, ...extra });
const msg = (fn: () => unknown) => {
  try {
    fn();
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error('expected a throw');
};

describe('config', () => {
  it('defaults', () => {
    const { config, warnings } = load({});
    expect(config.address).toEqual({ raw: ':9000', host: '', port: 9000 });
    expect(config.consoleAddress.port).toBe(9001);
    expect(config.consoleEnable).toBe(true);
    expect(config.healthEndpointEnable).toBe(true);
    expect(config.rebalanceMaxAttempts).toBe(3);
    expect(config.decommissionBucketConcurrency).toBe(4);
    expect(config.decommissionEntryConcurrency).toBe(8);
    expect(config.listObjectsQuorum).toBe('optimal');
    expect(config.startupReadinessMaxWaitSecs).toBe(120);
    expect(config.credentials).toEqual({ accessKey: 'svcadmin', secretKey: 'svcadmin', isDefault: true });
    expect(warnings.map((w) => w.event)).toEqual(['default_credentials']);
    expect(config.obs.loggerLevel).toBe('info');
    expect(config.obs.logDestination).toBe('stdout');
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.storageClass)).toBe(true);
  });
  it('volumes from args, else SVC_VOLUMES, else COMPAT_VOLUMES', () => {
    expect(load({ SVC_VOLUMES: '/a/d{1...4}' }).config.volumes).toEqual(['/x/d{1...4}']);
    const v = load({ SVC_VOLUMES: ' /a/d{1...4}  /b/d{1...4} ' }, { args: [] }).config;
    expect(v.volumes).toEqual(['/a/d{1...4}', '/b/d{1...4}']);
    expect(v.volumesSource).toBe('SVC_VOLUMES');
    expect(load({ COMPAT_VOLUMES: '/c/d{1...2}' }, { args: [] }).config.volumesSource).toBe('COMPAT_VOLUMES');
    expect(msg(() => load({}, { args: [] }))).toContain('SVC_VOLUMES');
  });
  it('flags win over env for addresses', () => {
    const { config } = load({ SVC_ADDRESS: '127.0.0.1:1234' }, { flags: { address: '127.0.0.2:5555', consoleAddress: '[::1]:7777' } });
    expect(config.address).toMatchObject({ host: '127.0.0.2', port: 5555 });
    expect(config.consoleAddress).toMatchObject({ host: '::1', port: 7777 });
    expect(load({ SVC_ADDRESS: '127.0.0.1:1234' }).config.address.port).toBe(1234);
    expect(msg(() => load({ SVC_ADDRESS: 'nope' }))).toContain('SVC_ADDRESS: invalid address');
    expect(msg(() => load({ SVC_CONSOLE_ADDRESS: ':9000' }))).toContain('collides');
    expect(load({ SVC_CONSOLE_ADDRESS: ':9000', SVC_CONSOLE_ENABLE: 'false' }).config.consoleEnable).toBe(false);
    expect(parseListenAddress('X', ':0').port).toBe(0);
    expect(() => parseListenAddress('X', ':70000')).toThrow(/out of range/);
  });
  it('certificate directory: flag, then SVC_CERTS_DIR (explicit), else ~/.svc/certs', () => {
    expect(load({ HOME: '/home/u' }).config.certsDir).toEqual({ path: '/home/u/.svc/certs', explicit: false });
    expect(load({}).config.certsDir).toBeUndefined();
    expect(load({ HOME: '/home/u', SVC_CERTS_DIR: 'certs' }).config.certsDir).toEqual({ path: '/srv/certs', explicit: true });
    expect(load({ SVC_CERTS_DIR: '/etc/svc/certs' }, { flags: { certsDir: '/opt/c' } }).config.certsDir).toEqual({ path: '/opt/c', explicit: true });
  });
  it('trusted proxies: none by default; CIDRs and loopback; a bad entry stops start-up', () => {
    expect(load({}).config.trustedProxies.empty).toBe(true);
    expect(load({ SVC_TRUSTED_PROXIES: '10.1.0.0/16,loopback' }).config.trustedProxies.networks).toEqual(['10.1.0.0/16', '127.0.0.0/8', '::1/128']);
    expect(msg(() => load({ SVC_TRUSTED_PROXIES: 'proxy.local' }))).toContain('SVC_TRUSTED_PROXIES: "proxy.local" is not an IP address or CIDR');
  });
  it('COMPAT_ spellings map when SVC_ is unset and conflicts are reported', () => {
    const a = load({ COMPAT_STORAGE_CLASS_STANDARD: 'EC:1', COMPAT_ERASURE_SET_DRIVE_COUNT: '2' });
    expect(a.config.storageClass.standard).toBe('EC:1');
    expect(a.config.erasureSetDriveCount).toBe(2);
    const b = load({ COMPAT_STORAGE_CLASS_RRS: 'EC:1', SVC_STORAGE_CLASS_RRS: 'EC:2' });
    expect(b.config.storageClass.rrs).toBe('EC:2');
    expect(b.warnings.find((w) => w.event === 'config_compat_conflict')?.variable).toBe('SVC_STORAGE_CLASS_RRS');
  });
  it('storage class values kept as typed; inline block parsed and warned above 128KiB; optimize stored', () => {
    const { config, warnings } = load({ SVC_STORAGE_CLASS_STANDARD: '', SVC_STORAGE_CLASS_INLINE_BLOCK: '256KiB', SVC_STORAGE_CLASS_OPTIMIZE: 'availability' });
    expect(config.storageClass).toEqual({ standard: '', rrs: undefined, optimize: 'availability', inlineBlock: 262144 });
    expect(warnings.map((w) => w.event)).toContain('inline_block_above_limit');
    expect(load({ SVC_STORAGE_CLASS_INLINE_BLOCK: '128KiB' }).warnings.map((w) => w.event)).not.toContain('inline_block_above_limit');
    expect(msg(() => load({ SVC_STORAGE_CLASS_INLINE_BLOCK: 'big' }))).toContain('invalid byte size');
  });
  it('numeric variables', () => {
    expect(msg(() => load({ SVC_ERASURE_SET_DRIVE_COUNT: '17' }))).toContain('outside 1..16');
    expect(msg(() => load({ SVC_REBALANCE_MAX_ATTEMPTS: 'x' }))).toContain('invalid integer');
    const capped = load({ SVC_DECOMMISSION_ENTRY_CONCURRENCY: '100' });
    expect(capped.config.decommissionEntryConcurrency).toBe(64);
    expect(capped.warnings.map((w) => w.event)).toContain('decommission_entry_concurrency_capped');
    expect(load({ SVC_STARTUP_READINESS_MAX_WAIT_SECS: '5' }).config.startupReadinessMaxWaitSecs).toBe(5);
  });
  it('list quorum: known modes, anything else strict', () => {
    for (const q of ['disk', 'reduced', 'optimal', 'auto']) expect(load({ SVC_LIST_OBJECTS_QUORUM: q }).config.listObjectsQuorum).toBe(q);
    expect(load({ SVC_LIST_OBJECTS_QUORUM: 'paranoid' }).config.listObjectsQuorum).toBe('strict');
  });
  it('multi-buffer hashing: auto, on or off; anything else refuses to start', () => {
    for (const v of ['auto', 'on', 'off', '']) expect(() => load({ SVC_HASH_MULTIBUFFER: v })).not.toThrow();
    expect(msg(() => load({ SVC_HASH_MULTIBUFFER: 'yes' }))).toContain('SVC_HASH_MULTIBUFFER: "yes": expected auto, on or off');
  });
  it('booleans', () => {
    expect(load({ SVC_HEALTH_ENDPOINT_ENABLE: 'false' }).config.healthEndpointEnable).toBe(false);
    expect(load({ SVC_CONSOLE_ENABLE: 'off' }).config.consoleEnable).toBe(false);
    expect(msg(() => load({ SVC_CONSOLE_ENABLE: 'maybe' }))).toContain('invalid boolean');
  });
  it('credentials per Authentication 5', () => {
    expect(msg(() => load({ SVC_ACCESS_KEY: '' }))).toBe('ERROR: SVC_ACCESS_KEY must not be empty.');
    expect(msg(() => load({ SVC_ACCESS_KEY: 'a', SVC_ACCESS_KEY_FILE: '/secrets/ak' }))).toBe('ERROR: Set either SVC_ACCESS_KEY or SVC_ACCESS_KEY_FILE, not both.');
    expect(msg(() => load({ SVC_ACCESS_KEY_FILE: '/nope' }))).toBe('ERROR: SVC_ACCESS_KEY_FILE points to an unreadable file.');
    expect(msg(() => load({ SVC_ACCESS_KEY: 'user' }))).toContain('SVC_SECRET_KEY');
    const f = load({ SVC_ACCESS_KEY_FILE: '/secrets/ak', SVC_SECRET_KEY_FILE: '/secrets/sk' });
    expect(f.config.credentials).toEqual({ accessKey: 'fileuser', secretKey: 'filesecret', isDefault: false, files: { accessKey: '/secrets/ak', secretKey: '/secrets/sk' } });
    expect(f.warnings).toEqual([]);
    expect(msg(() => load({ SVC_ACCESS_KEY_FILE: '/secrets/empty', SVC_SECRET_KEY: 'x' }))).toBe('ERROR: SVC_ACCESS_KEY must not be empty.');
  });
  it('observability variables parsed and stored', () => {
    const { config } = load({
      SVC_OBS_ENDPOINT: 'http://otel:4318',
      SVC_OBS_TRACE_ENDPOINT: 'http://t',
      SVC_OBS_METRIC_ENDPOINT: 'http://m',
      SVC_OBS_LOG_ENDPOINT: 'http://l',
      SVC_OBS_METRICS_EXPORT_ENABLED: 'false',
      SVC_OBS_TRACES_EXPORT_ENABLED: 'true',
      SVC_OBS_LOGS_EXPORT_ENABLED: '0',
      SVC_OBS_METER_INTERVAL: '30s',
      SVC_OBS_PROTOCOL: 'http/json',
      SVC_OBS_TRACE_SAMPLE_RATIO: '0.25',
      SVC_OBS_SERVICE_NAME: 'svc-a',
      SVC_OBS_ENVIRONMENT: 'prod',
      SVC_OBS_LOGGER_LEVEL: 'WARNING',
      SVC_OBS_LOG_DIRECTORY: '/var/log/svc',
      SVC_OBS_LOG_FILENAME: 'node.log',
      SVC_OBS_LOG_ROTATION_SIZE_MB: '100',
      SVC_OBS_LOG_ROTATION_TIME: 'daily',
      SVC_OBS_LOG_KEEP_FILES: '7',
    });
    expect(config.obs).toEqual({
      endpoint: 'http://otel:4318',
      traceEndpoint: 'http://t',
      metricEndpoint: 'http://m',
      logEndpoint: 'http://l',
      metricsExportEnabled: false,
      tracesExportEnabled: true,
      logsExportEnabled: false,
      meterInterval: '30s',
      meterIntervalMs: 30000,
      protocol: 'http/json',
      traceSampleRatio: 0.25,
      serviceName: 'svc-a',
      environment: 'prod',
      loggerLevel: 'warn',
      logDirectory: '/var/log/svc',
      logDestination: 'directory',
      logFilename: 'node.log',
      logRotationSizeMb: 100,
      logRotationTime: 'daily',
      logRotationTimeMs: 86_400_000,
      logKeepFiles: 7,
    });
    expect(load({ SVC_OBS_LOG_DIRECTORY: 'https://logs.example' }).config.obs.logDestination).toBe('remote');
    expect(load({ SVC_OBS_METER_INTERVAL: '15' }).config.obs.meterIntervalMs).toBe(15000);
    expect(msg(() => load({ SVC_OBS_LOGGER_LEVEL: 'loud' }))).toContain('SVC_OBS_LOGGER_LEVEL');
    expect(msg(() => load({ SVC_OBS_METER_INTERVAL: 'soon' }))).toContain('SVC_OBS_METER_INTERVAL');
    expect(load({}).config.obs.protocol).toBe('http/protobuf');
    expect(load({}).config.obs.traceSampleRatio).toBe(0.01);
    expect(load({ SVC_OBS_TRACE_SAMPLE_RATIO: '1' }).config.obs.traceSampleRatio).toBe(1);
    expect(msg(() => load({ SVC_OBS_TRACE_SAMPLE_RATIO: '1.5' }))).toContain('SVC_OBS_TRACE_SAMPLE_RATIO');
    expect(msg(() => load({ SVC_OBS_TRACE_SAMPLE_RATIO: 'half' }))).toContain('SVC_OBS_TRACE_SAMPLE_RATIO');
    expect(msg(() => load({ SVC_OBS_PROTOCOL: 'grpc' }))).toContain('SVC_OBS_PROTOCOL');
    expect(load({ SVC_OBS_LOG_ROTATION_TIME: '6h' }).config.obs.logRotationTimeMs).toBe(21_600_000);
    expect(msg(() => load({ SVC_OBS_LOG_ROTATION_TIME: 'weekly-ish' }))).toContain('SVC_OBS_LOG_ROTATION_TIME');
  });
});

describe('SVC_DOMAIN and SVC_REGION', () => {
  it('parses comma-separated domains, lower-cased, trailing dot dropped', () => {
    expect(parseDomains(undefined)).toEqual([]);
    expect(parseDomains(' ')).toEqual([]);
    expect(parseDomains('S3.Example.com., files.local')).toEqual(['s3.example.com', 'files.local']);
    expect(() => parseDomains('bad_domain!')).toThrow(/SVC_DOMAIN/);
    expect(() => parseDomains('host:9000')).toThrow(/SVC_DOMAIN/);
  });
  it('defaults the region to us-east-1 and refuses malformed names', () => {
    expect(parseRegion(undefined)).toBe('us-east-1');
    expect(parseRegion('eu-west-3')).toBe('eu-west-3');
    expect(() => parseRegion('Bad Region')).toThrow(/SVC_REGION/);
  });
  it('accepts custom region names with dots, underscores and capitals; refuses what a SigV4 scope cannot carry', () => {
    expect(parseRegion('dc1.example.com')).toBe('dc1.example.com');
    expect(parseRegion('home_lab')).toBe('home_lab');
    expect(parseRegion('US')).toBe('US');
    expect(parseRegion('127.0.0.1')).toBe('127.0.0.1');
    for (const bad of ['a/b', '.lead', 'trail-', 'x'.repeat(64), 'tab\tname']) expect(() => parseRegion(bad)).toThrow(/SVC_REGION/);
  });
  it('SVC_ACCEPT_ANY_REGION is an explicit opt-in', () => {
    expect(load({}).config.acceptAnyRegion).toBe(false);
    expect(load({ SVC_ACCEPT_ANY_REGION: 'true' }).config.acceptAnyRegion).toBe(true);
    expect(msg(() => load({ SVC_ACCEPT_ANY_REGION: 'maybe' }))).toContain('SVC_ACCEPT_ANY_REGION');
  });
});
