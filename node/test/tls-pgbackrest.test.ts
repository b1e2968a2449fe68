/**
 * pgBackRest (Debian's package) with an S3 repository on svc directly, over
 * https with certificate verification on (`repo1-storage-verify-tls=y`, the
 * test CA as `repo1-storage-ca-file`): stanza-create, check (WAL archiving
 * through `archive-push`), a full and an incremental backup, a restore into
 * a fresh data directory that PostgreSQL then starts from with every row.
 * A CA file that did not sign svc's certificate is refused.
 *
 * PostgreSQL runs from a temp dir on its own port and socket, started and
 * stopped by the test; as root, PostgreSQL and pgBackRest run as the
 * `postgres` user (PostgreSQL refuses to run as root). CI installs
 * `pgbackrest`, `postgresql` and `openssl` in `.ci/run`; a missing one fails
 * with a clear message.
 */
import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CreateBucketCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { keepAliveHandler } from './helpers/s3-client.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueLeaf, makeCa, type TestCa } from './helpers/certs.ts';
import { freePort, runSvc, type SvcRun, tempDir } from './svc-process.ts';

const exec = promisify(execFile);
const ACCESS = 'pgbackrest-key';
const SECRET = 'pgbackrest-secret-key-0123';

/** The newest PostgreSQL server binaries Debian installed. */
async function pgBin(): Promise<string> {
  const base = '/usr/lib/postgresql';
  let versions: string[] = [];
  try {
    versions = (await readdir(base)).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a));
  } catch {
    // not installed
  }
  if (versions.length === 0) throw new Error("PostgreSQL is not installed: this test needs Debian's postgresql and pgbackrest packages (apt-get install postgresql pgbackrest; CI does this in .ci/run)");
  return join(base, versions[0]!, 'bin');
}

describe('pgBackRest backs PostgreSQL up to svc over verified TLS (real processes)', () => {
  let root: string;
  let work: string;
  let ca: TestCa;
  let svc: SvcRun;
  let bin: string;
  let pgPort: number;
  const asRoot = process.getuid?.() === 0;

  /** Runs a command as the PostgreSQL user (as root: through runuser). */
  async function pg(cmd: string, args: string[], ok = true): Promise<{ code: number; out: string; err: string }> {
    const [file, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args];
    try {
      const { stdout, stderr } = await exec(file, argv, { cwd: work, env: { PATH: process.env.PATH ?? '', LANG: 'C.UTF-8', HOME: work }, maxBuffer: 16 * 1024 * 1024, timeout: 180_000 });
      return { code: 0, out: stdout, err: stderr };
    } catch (e) {
      const err = e as NodeJS.ErrnoException & { code?: number | string; stdout?: string; stderr?: string };
      if (err.code === 'ENOENT') throw new Error(`'${cmd}' is not installed: this test needs Debian's pgbackrest and postgresql packages (CI installs them in .ci/run)`);
      if (ok) throw new Error(`${cmd} ${args.join(' ')} failed: ${err.message}\n${err.stderr ?? ''}${err.stdout ?? ''}`);
      return { code: typeof err.code === 'number' ? err.code : 1, out: err.stdout ?? '', err: err.stderr ?? '' };
    }
  }
  const backrest = (...args: string[]) => pg('pgbackrest', [`--config=${join(work, 'pgbackrest.conf')}`, '--stanza=demo', ...args]);
  const psql = (db: string, sql: string) => pg(join(bin, 'psql'), ['-X', '-A', '-t', '-h', join(work, 'sock'), '-p', String(pgPort), '-U', 'postgres', '-d', db, '-c', sql]);
  const startPg = (dir: string) => pg(join(bin, 'pg_ctl'), ['-D', dir, '-l', join(work, `${dir.split('/').pop()}.log`), '-w', '-t', '120', 'start']);
  const stopPg = (dir: string) => pg(join(bin, 'pg_ctl'), ['-D', dir, '-m', 'fast', '-w', 'stop'], false);

  beforeAll(async () => {
    bin = await pgBin();
    root = tempDir('pgbackrest');
    ca = await makeCa(join(root, 'ca'), 'pgbackrest test CA');
    // svc's certificate names localhost: pgBackRest verifies the endpoint's DNS name
    const certs = join(root, 'certs');
    await issueLeaf(ca, certs, { dns: ['localhost'], ips: ['127.0.0.1', '::1'] });
    for (let i = 1; i <= 4; i++) await mkdir(join(root, `d${i}`));
    const port = await freePort();
    svc = await runSvc(['server', `${root}/d{1...4}`], { SVC_ACCESS_KEY: ACCESS, SVC_SECRET_KEY: SECRET, SVC_CERTS_DIR: certs, SVC_ADDRESS: `:${port}` }, { port });
    if (!(await svc.started)) throw new Error(`svc did not start: ${svc.stderr()}${svc.stdout().slice(-3000)}`);
    const s3 = new S3Client({
      endpoint: `https://localhost:${svc.port}`,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: ACCESS, secretAccessKey: SECRET },
      requestHandler: keepAliveHandler({ agent: { ca: ca.pem } }),
    });
    await s3.send(new CreateBucketCommand({ Bucket: 'pgbackrest' }));
    s3.destroy();

    // PostgreSQL's own world: a directory the postgres user owns
    work = await mkdtemp(join(tmpdir(), 'svc-pg-'));
    await mkdir(join(work, 'sock'));
    await copyFile(ca.certFile, join(work, 'ca.crt'));
    const other = await makeCa(join(root, 'other-ca'), 'unrelated CA');
    await copyFile(other.certFile, join(work, 'other-ca.crt'));
    pgPort = await freePort();
    await writeFile(
      join(work, 'pgbackrest.conf'),
      [
        '[global]',
        'repo1-type=s3',
        'repo1-path=/demo-repo',
        'repo1-s3-bucket=pgbackrest',
        'repo1-s3-endpoint=localhost',
        `repo1-storage-port=${svc.port}`,
        'repo1-s3-region=us-east-1',
        'repo1-s3-uri-style=path',
        `repo1-s3-key=${ACCESS}`,
        `repo1-s3-key-secret=${SECRET}`,
        'repo1-storage-verify-tls=y',
        `repo1-storage-ca-file=${join(work, 'ca.crt')}`,
        'repo1-retention-full=2',
        `lock-path=${join(work, 'lock')}`,
        `log-path=${join(work, 'log')}`,
        `spool-path=${join(work, 'spool')}`,
        'log-level-console=warn',
        'log-level-file=off',
        'start-fast=y',
        '',
        '[demo]',
        `pg1-path=${join(work, 'pgdata')}`,
        `pg1-port=${pgPort}`,
        `pg1-socket-path=${join(work, 'sock')}`,
        '',
      ].join('\n'),
    );
    if (asRoot) await exec('chown', ['-R', 'postgres:postgres', work]);
    await pg(join(bin, 'initdb'), ['-D', join(work, 'pgdata'), '-A', 'trust', '-U', 'postgres', '--no-sync']);
    await writeFile(
      join(work, 'pgdata', 'postgresql.auto.conf'),
      [
        `port = ${pgPort}`,
        "listen_addresses = ''",
        `unix_socket_directories = '${join(work, 'sock')}'`,
        'wal_level = replica',
        'archive_mode = on',
        `archive_command = 'pgbackrest --config=${join(work, 'pgbackrest.conf')} --stanza=demo archive-push %p'`,
        'max_wal_senders = 3',
        '',
      ].join('\n'),
    );
    if (asRoot) await exec('chown', ['postgres:postgres', join(work, 'pgdata', 'postgresql.auto.conf')]);
    await startPg(join(work, 'pgdata'));
  }, 180_000);

  afterAll(async () => {
    if (work !== undefined) {
      await stopPg(join(work, 'pgdata')).catch(() => undefined);
      await stopPg(join(work, 'restored')).catch(() => undefined);
    }
    await svc?.stop();
    if (work !== undefined) await rm(work, { recursive: true, force: true });
    if (root !== undefined) await rm(root, { recursive: true, force: true });
  }, 60_000);

  it('stanza-create, check, full and incremental backup, restore', async () => {
    await psql('postgres', 'CREATE DATABASE shop');
    await psql('shop', "CREATE TABLE orders (id int PRIMARY KEY, note text); INSERT INTO orders SELECT g, 'before full ' || g FROM generate_series(1, 5000) g");
    await backrest('stanza-create');
    await backrest('check');
    await backrest('--type=full', 'backup');
    await psql('shop', "INSERT INTO orders SELECT g, 'before incr ' || g FROM generate_series(5001, 7500) g; UPDATE orders SET note = 'changed' WHERE id <= 10");
    await backrest('--type=incr', 'backup');
    const info = JSON.parse((await backrest('--output=json', 'info')).out) as { status: { code: number }; backup: { type: string }[] }[];
    expect(info[0]!.status.code).toBe(0);
    expect(info[0]!.backup.map((b) => b.type)).toEqual(['full', 'incr']);

    // the repository lives in the bucket, written through svc's S3 API
    const s3 = new S3Client({
      endpoint: `https://localhost:${svc.port}`,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: ACCESS, secretAccessKey: SECRET },
      requestHandler: keepAliveHandler({ agent: { ca: ca.pem } }),
    });
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: 'pgbackrest', Prefix: 'demo-repo/' }));
    s3.destroy();
    const keys = (listed.Contents ?? []).map((c) => c.Key!);
    expect(keys.some((k) => k.startsWith('demo-repo/archive/demo/'))).toBe(true);
    expect(keys.some((k) => k.startsWith('demo-repo/backup/demo/'))).toBe(true);

    // restore into a fresh directory and start PostgreSQL from it
    await stopPg(join(work, 'pgdata'));
    await pg('mkdir', ['-m', '0700', join(work, 'restored')]);
    await backrest(`--pg1-path=${join(work, 'restored')}`, 'restore');
    await startPg(join(work, 'restored'));
    expect((await psql('shop', 'SELECT count(*) FROM orders')).out.trim()).toBe('7500');
    expect((await psql('shop', "SELECT count(*) FROM orders WHERE note = 'changed'")).out.trim()).toBe('10');
    expect((await psql('shop', 'SELECT note FROM orders WHERE id = 7500')).out.trim()).toBe('before incr 7500');
  }, 300_000);

  it('verification is real: a CA that did not sign svc\'s certificate is refused', async () => {
    expect((await backrest('repo-ls')).out).toMatch(/archive|backup/);
    const r = await pg('pgbackrest', [`--config=${join(work, 'pgbackrest.conf')}`, '--stanza=demo', `--repo1-storage-ca-file=${join(work, 'other-ca.crt')}`, '--io-timeout=3', 'repo-ls'], false);
    expect(r.code).not.toBe(0);
    expect(`${r.out}${r.err}`).toMatch(/certificate verify failed|unable to verify|self.signed|issuer/i);
  }, 120_000);
});
