import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { processStart } from '../util/diagnostics.ts';
import { createLogger, silentLogger } from '../util/logger.ts';
import { countStart, START_COUNT_FILE } from './start-counter.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function drives(n: number): string[] {
  const base = mkdtempSync(join(tmpdir(), 'svc-starts-'));
  dirs.push(base);
  return Array.from({ length: n }, (_, i) => {
    const d = join(base, `d${i}`);
    mkdirSync(d);
    return d;
  });
}

const onDisk = (root: string): number => (JSON.parse(readFileSync(join(root, '.svc.sys', START_COUNT_FILE), 'utf8')) as { starts: number }).starts;

describe('start counter', () => {
  it('counts every start on every local drive and publishes the count', async () => {
    const roots = drives(4);
    for (const r of roots) mkdirSync(join(r, '.svc.sys'));
    const seen: number[] = [];
    const listen = (m: unknown) => seen.push((m as { starts: number }).starts);
    processStart.subscribe(listen);
    try {
      expect(await countStart(roots, silentLogger)).toBe(1);
      expect(await countStart(roots, silentLogger)).toBe(2);
      expect(await countStart(roots, silentLogger)).toBe(3);
    } finally {
      processStart.unsubscribe(listen);
    }
    expect(seen).toEqual([1, 2, 3]);
    expect(roots.map(onDisk)).toEqual([3, 3, 3, 3]);
  });

  it('keeps counting when any drive, the first included, is replaced by an empty one or holds garbage', async () => {
    const roots = drives(3);
    for (const r of roots) mkdirSync(join(r, '.svc.sys'));
    for (let i = 0; i < 5; i++) await countStart(roots, silentLogger);
    rmSync(join(roots[0]!, '.svc.sys'), { recursive: true });
    writeFileSync(join(roots[1]!, '.svc.sys', START_COUNT_FILE), '{not json');
    expect(await countStart(roots, silentLogger)).toBe(6);
    // The empty drive is left alone until it is formatted (has its .svc.sys).
    expect(existsSync(join(roots[0]!, '.svc.sys'))).toBe(false);
    expect(roots.slice(1).map(onDisk)).toEqual([6, 6]);
    mkdirSync(join(roots[0]!, '.svc.sys'));
    expect(await countStart(roots, silentLogger)).toBe(7);
    expect(roots.map(onDisk)).toEqual([7, 7, 7]);
  });

  it('a new deployment counts on its first drive only; drives it never used stay untouched', async () => {
    const roots = drives(3);
    expect(await countStart(roots, silentLogger)).toBe(1);
    expect(onDisk(roots[0]!)).toBe(1);
    expect(roots.slice(1).map((r) => existsSync(join(r, '.svc.sys')))).toEqual([false, false]);
  });

  it('a drive that can be neither read nor written costs warnings, not the count', async () => {
    const roots = drives(2);
    for (const r of roots) mkdirSync(join(r, '.svc.sys'));
    await countStart(roots, silentLogger);
    // A folder where the record belongs: reading it and renaming over it fail (EISDIR), even for root.
    rmSync(join(roots[0]!, '.svc.sys', START_COUNT_FILE));
    mkdirSync(join(roots[0]!, '.svc.sys', START_COUNT_FILE));
    const warnings: { event?: string; drive?: string }[] = [];
    const log = createLogger('warn', { write: (l: string) => warnings.push(JSON.parse(l) as { event?: string; drive?: string }) });
    expect(await countStart(roots, log)).toBe(2);
    expect(onDisk(roots[1]!)).toBe(2);
    expect(warnings.map((w) => [w.event, w.drive])).toEqual([
      ['start_count_failed', roots[0]],
      ['start_count_failed', roots[0]],
    ]);
  });
});
