/**
 * Real servers from Debian's packages, started by the tests in temp
 * directories on loopback ports of their own (nothing shared with another
 * run): nats-server, rabbitmq-server, mosquitto, redis-server, PostgreSQL,
 * MariaDB. Each resolves once it accepts connections and stops by its pid.
 * A missing package fails with the apt-get line that installs it (CI's
 * `.ci/run` does).
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../svc-process.ts';

const exec = promisify(execFile);

export interface Service {
  readonly name: string;
  readonly port: number;
  /** Output so far (for failure messages). */
  log(): string;
  stop(): Promise<void>;
}

function need(bin: string, pkg: string): string {
  const dirs = ['/usr/sbin', '/usr/bin', '/usr/lib/rabbitmq/bin'];
  for (const d of dirs) if (existsSync(join(d, bin))) return join(d, bin);
  throw new Error(`${bin} is not installed: apt-get install -y ${pkg} (CI installs it in .ci/run)`);
}

async function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

async function run(name: string, bin: string, args: string[], port: number, opts: { env?: Record<string, string>; ms?: number; cwd?: string } = {}): Promise<Service & { child: ChildProcess }> {
  const child = spawn(bin, args, { env: { PATH: process.env.PATH ?? '', ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'], ...(opts.cwd ? { cwd: opts.cwd } : {}) });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const end = Date.now() + (opts.ms ?? 30_000);
  while (!(await accepts(port))) {
    if (child.exitCode !== null) throw new Error(`${name} exited ${child.exitCode}:\n${out.slice(-3000)}`);
    if (Date.now() > end) {
      child.kill('SIGKILL');
      throw new Error(`${name} did not accept connections on ${port}:\n${out.slice(-3000)}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    name,
    port,
    child,
    log: () => out,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const t = setTimeout(() => child.kill('SIGKILL'), 15_000);
        await exited;
        clearTimeout(t);
      }
    },
  };
}

export async function startRedis(dir: string): Promise<Service> {
  const bin = need('redis-server', 'redis-server');
  const port = await freePort();
  mkdirSync(dir, { recursive: true });
  return run('redis-server', bin, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], port);
}

export async function startNats(dir: string): Promise<Service> {
  const bin = need('nats-server', 'nats-server');
  const port = await freePort();
  mkdirSync(dir, { recursive: true });
  return run('nats-server', bin, ['-a', '127.0.0.1', '-p', String(port)], port);
}

export async function startMosquitto(dir: string): Promise<Service> {
  const bin = need('mosquitto', 'mosquitto');
  const port = await freePort();
  mkdirSync(dir, { recursive: true });
  const conf = join(dir, 'mosquitto.conf');
  writeFileSync(conf, `listener ${port} 127.0.0.1\nallow_anonymous true\npersistence false\n`);
  return run('mosquitto', bin, ['-c', conf], port);
}

/**
 * RabbitMQ run from its own bin directory as the current user (the
 * packaged wrapper would switch to the rabbitmq user), with its node name,
 * data, logs, distribution port and epmd on ports of its own, on loopback.
 * Start-up takes ~10-15 s (the Erlang VM); stop also ends its epmd.
 */
export async function startRabbitMq(dir: string): Promise<Service & { url: string }> {
  const bin = need('rabbitmq-server', 'rabbitmq-server');
  const [port, dist, epmd] = [await freePort(), await freePort(), await freePort()];
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'enabled_plugins'), '[].\n');
  writeFileSync(join(dir, 'rabbitmq.conf'), `listeners.tcp.default = 127.0.0.1:${port}\nloopback_users = none\n`);
  const env = {
    HOME: dir,
    RABBITMQ_NODENAME: `svc-test-${port}@localhost`,
    RABBITMQ_NODE_IP_ADDRESS: '127.0.0.1',
    RABBITMQ_NODE_PORT: String(port),
    RABBITMQ_DIST_PORT: String(dist),
    RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS: '-kernel inet_dist_use_interface {127,0,0,1}',
    ERL_EPMD_PORT: String(epmd),
    ERL_EPMD_ADDRESS: '127.0.0.1',
    RABBITMQ_MNESIA_BASE: join(dir, 'mnesia'),
    RABBITMQ_LOG_BASE: join(dir, 'log'),
    RABBITMQ_ENABLED_PLUGINS_FILE: join(dir, 'enabled_plugins'),
    RABBITMQ_CONFIG_FILE: join(dir, 'rabbitmq'),
    RABBITMQ_CONF_ENV_FILE: join(dir, 'rabbitmq-env.conf'),
    RABBITMQ_PID_FILE: join(dir, 'rabbitmq.pid'),
  };
  const s = await run('rabbitmq-server', bin.endsWith('/usr/sbin/rabbitmq-server') && existsSync('/usr/lib/rabbitmq/bin/rabbitmq-server') ? '/usr/lib/rabbitmq/bin/rabbitmq-server' : bin, [], port, { env, ms: 90_000 });
  return {
    ...s,
    url: `amqp://guest:guest@127.0.0.1:${port}`,
    async stop() {
      await s.stop();
      // The broker started this epmd for its node: end it too.
      await exec('epmd', ['-kill'], { env: { PATH: process.env.PATH ?? '', ERL_EPMD_PORT: String(epmd) } }).catch(() => undefined);
    },
  };
}

function pgBin(): string {
  const base = '/usr/lib/postgresql';
  const versions = existsSync(base) ? readdirSync(base).sort() : [];
  const v = versions.at(-1);
  if (v === undefined) throw new Error('PostgreSQL is not installed: apt-get install -y postgresql (CI installs it in .ci/run)');
  return join(base, v, 'bin');
}

/**
 * PostgreSQL in a temp directory of its own (as the postgres user when the
 * tests run as root: it refuses root, and needs a directory it can reach),
 * trust authentication on 127.0.0.1.
 */
export async function startPostgres(): Promise<Service & { url: string }> {
  const bin = pgBin();
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'svc-pg-'));
  mkdirSync(join(dir, 'sock'), { recursive: true });
  const asRoot = process.getuid?.() === 0;
  if (asRoot) await exec('chown', ['-R', 'postgres:postgres', dir]);
  const as = (cmd: string, args: string[]): [string, string[]] => (asRoot ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args]);
  const [f, a] = as(join(bin, 'initdb'), ['-D', join(dir, 'data'), '-A', 'trust', '-U', 'postgres', '--no-sync']);
  await exec(f, a);
  const [pf, pa] = as(join(bin, 'postgres'), ['-D', join(dir, 'data'), '-p', String(port), '-k', join(dir, 'sock'), '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off', '-c', 'shared_buffers=16MB']);
  const s = await run('postgres', pf, pa, port);
  return {
    ...s,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async stop() {
      await s.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** MariaDB in `dir`: a fresh data directory, root without a password on 127.0.0.1, database `events`. */
export async function startMariaDb(dir: string): Promise<Service & { dsn: string; url: string }> {
  const install = need('mariadb-install-db', 'mariadb-server');
  const bin = need('mariadbd', 'mariadb-server');
  const port = await freePort();
  mkdirSync(dir, { recursive: true });
  const asRoot = process.getuid?.() === 0;
  await exec(install, ['--no-defaults', `--datadir=${join(dir, 'data')}`, '--auth-root-authentication-method=normal', '--skip-test-db', ...(asRoot ? ['--user=root'] : [])]);
  const s = await run(
    'mariadbd',
    bin,
    [
      '--no-defaults',
      `--datadir=${join(dir, 'data')}`,
      `--port=${port}`,
      '--bind-address=127.0.0.1',
      `--socket=${join(dir, 'mysqld.sock')}`,
      '--skip-log-bin',
      '--innodb-buffer-pool-size=16M',
      ...(asRoot ? ['--user=root'] : []),
    ],
    port,
    { ms: 60_000 },
  );
  return { ...s, dsn: `root:@tcp(127.0.0.1:${port})/events`, url: `mysql://root@127.0.0.1:${port}/events` };
}

/** Starts several services at once; when one fails, the others are stopped before the error is thrown. */
export async function startAll<T extends readonly Promise<Service>[]>(starts: T): Promise<{ [K in keyof T]: Awaited<T[K]> }> {
  const rs = await Promise.allSettled(starts);
  const failed = rs.find((r) => r.status === 'rejected');
  if (failed) {
    await Promise.all(rs.map((r) => (r.status === 'fulfilled' ? r.value.stop() : undefined)));
    throw failed.reason;
  }
  return rs.map((r) => (r as PromiseFulfilledResult<Service>).value) as { [K in keyof T]: Awaited<T[K]> };
}
