/**
 * Reads back a ZIP the console wrote the way a user would: Debian's `unzip`
 * tests it (`unzip -t`, every CRC) and extracts it into a fresh folder
 * (UTF-8 names as UTF-8: a C.UTF-8 locale), then the folder is walked.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export const sha256 = (b: Buffer | string): string => createHash('sha256').update(b).digest('hex');

/** What a folder holds: each file's path (with `/`) and its SHA-256, each empty folder as `<path>/` → `dir`. */
function walk(dir: string, rel = '', into: Record<string, string> = {}): Record<string, string> {
  const entries = readdirSync(dir, { withFileTypes: true });
  if (entries.length === 0 && rel !== '') into[`${rel}/`] = 'dir';
  for (const e of entries) {
    const path = rel === '' ? e.name : `${rel}/${e.name}`;
    if (e.isDirectory()) walk(join(dir, e.name), path, into);
    else into[path] = sha256(readFileSync(join(dir, e.name)));
  }
  return into;
}

/** Tests `zipPath` with unzip, extracts it into `into` (created) and returns what came out (see `walk`). */
export function unzipTree(zipPath: string, into: string): Record<string, string> {
  const env = { ...process.env, LC_ALL: 'C.UTF-8', LANG: 'C.UTF-8' };
  const test = spawnSync('unzip', ['-t', zipPath], { encoding: 'utf8', env });
  if (test.status !== 0 || !test.stdout.includes('No errors detected')) throw new Error(`unzip -t ${zipPath} failed (${test.status}): ${test.stdout}${test.stderr}`);
  mkdirSync(into, { recursive: true });
  const x = spawnSync('unzip', ['-q', '-d', into, zipPath], { encoding: 'utf8', env });
  if (x.status !== 0) throw new Error(`unzip ${zipPath} failed (${x.status}): ${x.stdout}${x.stderr}`);
  return walk(into);
}
