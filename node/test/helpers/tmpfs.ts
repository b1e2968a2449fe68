/**
 * Test helper: drives on their own small file systems (tmpfs mounts), so
 * capacity is real and per drive. Temp-dir drives on one disk all report
 * that disk's usage; decommission's capacity rule and rebalance's fill
 * target need each pool's own numbers. Needs root (as the cluster harness
 * does); every mount is undone when the test process exits.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const mounted = new Set<string>();
let probed: boolean | undefined;

function unmountSync(dir: string): void {
  spawnSync('umount', ['-l', dir], { stdio: 'ignore' });
  mounted.delete(dir);
}

process.once('exit', () => {
  for (const d of [...mounted]) unmountSync(d);
});

/** True when this process may mount a tmpfs (root, mount available). */
export function canMountTmpfs(): boolean {
  if (probed !== undefined) return probed;
  const dir = mkdtempSync(join(tmpdir(), 'svc-tmpfs-probe-'));
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', dir], { stdio: 'ignore' });
  probed = r.status === 0;
  if (probed) spawnSync('umount', [dir], { stdio: 'ignore' });
  rmdirSync(dir);
  return probed;
}

/** Mounts a tmpfs of `bytes` on `dir` (created when missing). */
export function mountTmpfs(dir: string, bytes: number): void {
  mkdirSync(dir, { recursive: true });
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${bytes},mode=0755`, 'tmpfs', dir], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`mount tmpfs on ${dir} failed: ${r.stderr}`);
  mounted.add(dir);
}

/** Unmounts what `mountTmpfs` mounted on `dir` (its contents are gone). */
export function unmountTmpfs(dir: string): void {
  if (mounted.has(dir)) unmountSync(dir);
}

/** Unmounts every tmpfs mounted at or below `base`. */
export function unmountUnder(base: string): void {
  for (const d of [...mounted]) if (d === base || d.startsWith(`${base}/`)) unmountSync(d);
}
