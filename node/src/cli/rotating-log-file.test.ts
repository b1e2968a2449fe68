import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { RotatingLogFile } from './rotating-log-file.ts';

const base = mkdtempSync(join(tmpdir(), 'svc-rotlog-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));
let n = 0;
const dir = () => {
  const d = mkdtempSync(join(base, `d${n++}-`));
  return d;
};

describe('rotating log file', () => {
  it('rotates by size and keeps the newest files', () => {
    const d = dir();
    const f = new RotatingLogFile({ dir: d, file: 'svc.log', maxBytes: 100, keep: 2 });
    for (let i = 0; i < 10; i++) f.writeLine(Buffer.from(`${String(i).padStart(2, '0')}${'x'.repeat(37)}\n`)); // 40 bytes each
    expect(f.rotated()).toHaveLength(2);
    expect(readdirSync(d).sort()[0]).toBe('svc.log');
    // current file holds the last two lines, nothing lost from the kept ones
    expect(readFileSync(join(d, 'svc.log'), 'utf8').split('\n').filter(Boolean).map((l) => l.slice(0, 2))).toEqual(['08', '09']);
    const kept = f.rotated().map((r) => readFileSync(join(d, r), 'utf8'));
    expect(kept.every((t) => t.length <= 100)).toBe(true);
  });
  it('rotates by age', () => {
    const d = dir();
    let now = 0;
    const f = new RotatingLogFile({ dir: d, file: 'a.log', maxAgeMs: 1000, now: () => now });
    f.writeLine(Buffer.from('one\n'));
    now = 999;
    f.writeLine(Buffer.from('two\n'));
    expect(f.rotated()).toHaveLength(0);
    now = 1000;
    f.writeLine(Buffer.from('three\n'));
    expect(f.rotated()).toHaveLength(1);
    expect(readFileSync(join(d, f.rotated()[0]!), 'utf8')).toBe('one\ntwo\n');
    expect(readFileSync(f.path, 'utf8')).toBe('three\n');
  });
  it('works as a stream', async () => {
    const d = dir();
    const f = new RotatingLogFile({ dir: d, file: 's.log' });
    f.write('a\n');
    f.write('b\n');
    await new Promise<void>((r) => f.end(r));
    expect(readFileSync(join(d, 's.log'), 'utf8')).toBe('a\nb\n');
  });
});
