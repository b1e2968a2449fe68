/**
 * A streamed 1 GiB PUT and GET keep the process RSS under 200 MiB (issue 3).
 * Runs in a child process so the measurement is not polluted by the test
 * runner. Writes 2 GiB of shard files (about 10 s here), so it always runs at
 * the full size.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const here = fileURLToPath(new URL('.', import.meta.url));
const GiB = 1024 * 1024 * 1024;
const MiB = 1024 * 1024;
const size = GiB;

describe('memory bound of streamed objects', () => {
  it(`${size / MiB} MiB PUT + GET stay under 200 MiB RSS`, { timeout: 600_000 }, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-rss-'));
    try {
      const { stdout } = await run(process.execPath, [join(here, 'fixtures/engine-rss-child.ts'), dir, String(size)], {
        maxBuffer: 1 << 20,
      });
      const r = JSON.parse(stdout.trim().split('\n').pop()!) as { baseRss: number; peakRss: number; bytes: number; match: boolean };
      expect(r.match).toBe(true);
      expect(r.bytes).toBe(size);
      expect(r.peakRss).toBeLessThan(200 * MiB);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
