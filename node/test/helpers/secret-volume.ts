/**
 * A Secret volume as the kubelet writes it: the keys live in a timestamped
 * folder, `..data` is a symlink to it, and each key is a symlink through
 * `..data`. An update writes a new folder and swaps `..data` with one
 * rename, so a reader sees the old set or the new set of files, never a mix
 * of the two inside one read (two reads may still straddle the swap).
 */
import { mkdir, readlink, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

let generation = 0;

export async function writeSecretVolume(dir: string, data: Record<string, string | Buffer>, mode = 0o600): Promise<void> {
  await mkdir(dir, { recursive: true });
  const stamp = `..${Date.now()}_${process.pid}_${generation++}`;
  await mkdir(join(dir, stamp));
  for (const [k, v] of Object.entries(data)) await writeFile(join(dir, stamp, k), v, { mode });
  const previous = await readlink(join(dir, '..data')).catch(() => undefined);
  const tmp = join(dir, '..data_tmp');
  await rm(tmp, { force: true });
  await symlink(stamp, tmp);
  await rename(tmp, join(dir, '..data'));
  for (const k of Object.keys(data)) await symlink(join('..data', k), join(dir, k)).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'EEXIST') throw err;
  });
  if (previous !== undefined && previous !== stamp) await rm(join(dir, previous), { recursive: true, force: true });
}
