import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const NODE = join(import.meta.dirname, '..', '..', '..', 'node_modules', '.bin', 'node');
const EXIT = join(import.meta.dirname, 'exit.ts');

/** Runs a script that writes `bytes` to stdout then exits, read through a pipe that is slow to start; returns what arrived. */
function slowPipe(exitLine: string, bytes: number): Promise<{ got: number; code: number | null }> {
  const script = `const { exitAfterFlush } = await import(${JSON.stringify(EXIT)}); process.stdout.write('x'.repeat(${bytes})); ${exitLine}`;
  return new Promise((resolve) => {
    const child = spawn(NODE, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let got = 0;
    child.stdout.pause();
    // The reader starts late: the pipe fills (64 KiB) and the rest waits in the writer.
    setTimeout(() => child.stdout.resume(), 300);
    child.stdout.on('data', (d: Buffer) => (got += d.length));
    child.on('close', (code) => resolve({ got, code }));
  });
}

describe('exitAfterFlush', () => {
  it('leaves only once stdout is out through a full pipe (process.exit() drops what waits)', async () => {
    const size = 1 << 20;
    const dropped = await slowPipe('process.exit(0);', size);
    expect(dropped.got).toBeLessThan(size);
    const flushed = await slowPipe('await exitAfterFlush(3);', size);
    expect(flushed).toEqual({ got: size, code: 3 });
  });
});
