/**
 * Running the real command-line S3 clients (AWS CLI, rclone, s3cmd from
 * Debian's packages) against a test server, with a private HOME and none of
 * the caller's AWS settings. A missing client fails with a clear message.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll } from 'vitest';
import { type S3Server, start } from './s3-server.ts';
import { keepAliveHandler } from './s3-client.ts';

const exec = promisify(execFile);

export interface CliTarget {
  endpoint: string;
  accessKey: string;
  secretKey: string;
}

export interface CliEnv {
  /** Scratch directory; HOME is `<work>/home`. */
  work: string;
  target: CliTarget;
}

/** Prepares `<work>/home` (AWS CLI path-style config, an empty s3cmd config). */
export async function prepareCliHome(work: string): Promise<void> {
  await mkdir(join(work, 'home', '.aws'), { recursive: true });
  await writeFile(join(work, 'home', '.aws', 'config'), '[default]\nregion = us-east-1\ns3 =\n  addressing_style = path\n');
  // s3cmd gets everything from flags; an empty config keeps it from reading the caller's
  await writeFile(join(work, 'home', 's3cfg-none'), '[default]\n');
}

function env(c: CliEnv, extra: Record<string, string>): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '',
    HOME: join(c.work, 'home'),
    LANG: 'C.UTF-8',
    AWS_ACCESS_KEY_ID: c.target.accessKey,
    AWS_SECRET_ACCESS_KEY: c.target.secretKey,
    AWS_DEFAULT_REGION: 'us-east-1',
    AWS_ENDPOINT_URL: c.target.endpoint,
    AWS_PAGER: '',
    ...extra,
  };
}

/** Runs a client; rejects with its stderr/stdout on a non-zero exit. */
export async function runCli(c: CliEnv, cmd: string, args: string[], extraEnv: Record<string, string> = {}): Promise<string> {
  try {
    const { stdout } = await exec(cmd, args, { env: env(c, extraEnv), cwd: c.work, maxBuffer: 16 * 1024 * 1024, timeout: 120_000 });
    return stdout;
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stderr?: string; stdout?: string };
    if (e.code === 'ENOENT') {
      throw new Error(`'${cmd}' is not installed: the S3 compatibility suite needs Debian's awscli, rclone and s3cmd packages (apt-get install awscli rclone s3cmd; CI does this in .ci/run).`);
    }
    throw new Error(`${cmd} ${args.join(' ')} failed: ${e.message}\n${e.stderr ?? ''}${e.stdout ?? ''}`);
  }
}

/** rclone's environment for a remote named `svc:` (provider Other, path style). */
export function rcloneEnv(t: CliTarget): Record<string, string> {
  return {
    RCLONE_CONFIG_SVC_TYPE: 's3',
    RCLONE_CONFIG_SVC_PROVIDER: 'Other',
    RCLONE_CONFIG_SVC_ACCESS_KEY_ID: t.accessKey,
    RCLONE_CONFIG_SVC_SECRET_ACCESS_KEY: t.secretKey,
    RCLONE_CONFIG_SVC_ENDPOINT: t.endpoint,
    RCLONE_CONFIG_SVC_REGION: 'us-east-1',
    RCLONE_CONFIG_SVC_FORCE_PATH_STYLE: 'true',
  };
}

/** s3cmd's flags for the target (no config file, no TLS, path style). */
export function s3cmdArgs(c: CliEnv): string[] {
  const u = new URL(c.target.endpoint);
  return [
    `--host=${u.host}`,
    `--host-bucket=${u.host}`,
    '--no-ssl',
    `--access_key=${c.target.accessKey}`,
    `--secret_key=${c.target.secretKey}`,
    `--config=${join(c.work, 'home', 's3cfg-none')}`,
    '--region=us-east-1',
  ];
}

/** Deterministic pseudo-random content. */
export function fileData(n: number, seed: string): Buffer {
  const out = Buffer.allocUnsafe(n);
  let h = createHash('sha256').update(seed).digest();
  for (let off = 0; off < n; off += 32) {
    h = createHash('sha256').update(h).digest();
    h.copy(out, off, 0, Math.min(32, n - off));
  }
  return out;
}

/** CLI tests spawn many Python/Go processes on shared cores: generous per-test timeout. */
export const CLI_TIMEOUT = 240_000;

/** A test server, a scratch directory prepared for the CLI clients, and an SDK client for assertions. */
export interface CliFixture {
  srv: S3Server;
  work: string;
  cli: CliEnv;
  s3: S3Client;
  stop(): Promise<void>;
}

export async function startCliFixture(prefix: string): Promise<CliFixture> {
  const srv = await start();
  const work = await mkdtemp(join(tmpdir(), `svc-${prefix}-`));
  await prepareCliHome(work);
  const s3 = new S3Client({
    requestHandler: keepAliveHandler(),
    endpoint: srv.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: srv.accessKey, secretAccessKey: srv.secretKey },
  });
  return {
    srv,
    work,
    cli: { work, target: srv },
    s3,
    async stop() {
      s3.destroy();
      await srv.stop();
      await rm(work, { recursive: true, force: true });
    },
  };
}

/** Registers beforeAll/afterAll hooks for a CliFixture; its fields are filled in before the first test. */
export function useCliFixture(prefix: string): CliFixture {
  const fx = {} as CliFixture;
  beforeAll(async () => {
    Object.assign(fx, await startCliFixture(prefix));
  });
  afterAll(async () => {
    await fx.stop?.();
  });
  return fx;
}
