/**
 * A drive's batched commit job (`fileWriteDurableBatch`), seen from the
 * kernel: the real server's file jobs run in a child process under
 * `strace -f`, 16 concurrent commits of new objects below one prefix. For
 * every commit the trace must show, in this order: the temp file's fsync,
 * its rename into the new object directory, an fsync of that directory, and
 * an fsync of the prefix directory that *started* after the rename, in the
 * same job (thread); and the commit resolving only after both fsyncs
 * returned. It also pins the fsyncs a new key costs on a drive: two of its
 * own, plus its share of the prefix directory's.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { nativeAddon } from '../src/erasure/native.ts';
import { SYS_VOL, TMP_DIR, XL_META } from '../src/storage/drive.ts';
import { decodeXlMeta } from '../src/storage/xl-meta.ts';

const KEYS = 16;
const here = dirname(fileURLToPath(import.meta.url));

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-commit-batch-'));
  await mkdir(join(root, SYS_VOL, TMP_DIR), { recursive: true });
  await mkdir(join(root, 'bucket', 'prefix'), { recursive: true });
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

interface Call {
  pid: string;
  name: string;
  args: string;
  ret: string;
  /** Trace lines where the call entered and returned. */
  start: number;
  end: number;
}

/** strace -f lines as calls, an interrupted call joined with its resumption. */
function parse(trace: string): Call[] {
  const calls: Call[] = [];
  const open = new Map<string, Call>();
  trace.split('\n').forEach((line, i) => {
    const m = /^(\d+)\s+(.*)$/.exec(line);
    if (!m) return;
    const [, pid, rest] = m as unknown as [string, string, string];
    const resumed = /^<\.\.\. (\w+) resumed>(.*)\)\s+= (.*)$/.exec(rest);
    if (resumed) {
      const c = open.get(pid);
      if (c) {
        c.args += resumed[2];
        c.ret = resumed[3]!;
        c.end = i;
        open.delete(pid);
      }
      return;
    }
    const unfinished = /^(\w+)\((.*) <unfinished \.\.\.>$/.exec(rest);
    if (unfinished) {
      const c = { pid, name: unfinished[1]!, args: unfinished[2]!, ret: '', start: i, end: -1 };
      open.set(pid, c);
      calls.push(c);
      return;
    }
    const done = /^(\w+)\((.*)\)\s+= (.*)$/.exec(rest);
    if (done) calls.push({ pid, name: done[1]!, args: done[2]!, ret: done[3]!, start: i, end: i });
  });
  return calls;
}

const hasStrace = spawnSync('strace', ['-V']).status === 0;

describe('batched commits of new objects on one drive (strace)', () => {
  it.runIf(typeof nativeAddon?.fileWriteDurableBatch === 'function')('fsyncs in a durable order, the prefix fsync shared', async () => {
    expect(hasStrace, 'strace is needed (apt-get install strace)').toBe(true);
    const traceFile = join(root, 'trace.txt');
    execFileSync(
      'strace',
      ['-f', '-y', '-qq', '-o', traceFile, '-e', 'trace=fsync,fdatasync,rename,renameat,renameat2,access,faccessat,faccessat2', process.execPath,
        '--disable-warning=ExperimentalWarning', join(here, 'helpers', 'commit-trace-child.ts'), root, String(KEYS)],
      { stdio: 'inherit', timeout: 60_000 },
    );
    const calls = parse(await readFile(traceFile, 'utf8'));
    const prefix = join(root, 'bucket', 'prefix');
    const fsyncOf = (path: string) => calls.filter((c) => (c.name === 'fsync' || c.name === 'fdatasync') && c.args.includes(`<${path}>`) && c.ret === '0');
    const prefixSyncs = fsyncOf(prefix);
    for (let i = 0; i < KEYS; i++) {
      const dir = join(prefix, `k${i}`);
      const dst = join(dir, XL_META);
      expect(decodeXlMeta(await readFile(dst)).map((v) => v.versionId)).toEqual([`00000000-0000-4000-8000-${String(i).padStart(12, '0')}`]);
      const rename = calls.find((c) => c.name.startsWith('rename') && c.args.includes(`"${dst}"`) && c.ret === '0');
      expect(rename, `k${i}: rename`).toBeDefined();
      const tmp = /"([^"]+\.tmp)"/.exec(rename!.args)![1]!;
      // The temp file's data and inode on stable storage before its name moves.
      expect(fsyncOf(tmp).filter((c) => c.pid === rename!.pid && c.end < rename!.start), `k${i}: file fsync`).toHaveLength(1);
      // The new xl.meta entry: its directory fsync'd after the rename.
      const own = fsyncOf(dir).filter((c) => c.pid === rename!.pid && c.start > rename!.end);
      expect(own, `k${i}: object directory fsync`).toHaveLength(1);
      // The new directory's entry: a prefix fsync started after the rename, in the same job.
      const covering = prefixSyncs.find((c) => c.pid === rename!.pid && c.start > rename!.end);
      expect(covering, `k${i}: prefix fsync after the rename`).toBeDefined();
      // Acknowledged only after both returned.
      const ack = calls.find((c) => c.name.includes('access') && c.args.includes(`"${join(root, `ack-k${i}`)}"`));
      expect(ack, `k${i}: ack`).toBeDefined();
      expect(ack!.start).toBeGreaterThan(own[0]!.end);
      expect(ack!.start).toBeGreaterThan(covering!.end);
    }
    // Per new key: the file's fsync and its directory's, plus the prefix fsyncs shared by the batches.
    const all = calls.filter((c) => (c.name === 'fsync' || c.name === 'fdatasync') && c.args.includes(`<${root}/`));
    expect(all.length).toBe(2 * KEYS + prefixSyncs.length);
    expect(prefixSyncs.length).toBeGreaterThanOrEqual(1);
    expect(prefixSyncs.length).toBeLessThanOrEqual(KEYS / 4);
  });
});
