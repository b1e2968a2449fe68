import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { capYoungGeneration, restartWithServerHeap, SERVER_OLD_SPACE_MB, serverHeapArgs, serverRestartArgs } from './heap.ts';

const heapModule = join(dirname(fileURLToPath(import.meta.url)), 'heap.ts');

/** Largest young-generation size a churn with many survivors reaches in a fresh process, in bytes. */
function youngPeak(cap: boolean): number {
  const script = `
    import { getHeapSpaceStatistics } from 'node:v8';
    import { capYoungGeneration } from ${JSON.stringify(heapModule)};
    if (${cap}) capYoungGeneration([], {});
    const keep = [];
    let peak = 0;
    for (let i = 0; i < 2e6; i++) {
      keep.push({ a: i, b: [i] });
      if (keep.length > 200000) keep.splice(0, 100000);
      if (i % 50000 === 0) peak = Math.max(peak, getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size);
    }
    process.stdout.write(String(peak));`;
  return Number(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }));
}

describe('capYoungGeneration', () => {
  it('keeps the young generation from growing under survivor-heavy churn', () => {
    const grown = youngPeak(false);
    const capped = youngPeak(true);
    expect(grown).toBeGreaterThan(0);
    expect(capped).toBeLessThan(grown / 2);
  });

  it('leaves a young-generation size the operator chose alone', () => {
    expect(capYoungGeneration(['--max-semi-space-size=8'], {})).toBe(false);
    expect(capYoungGeneration([], { NODE_OPTIONS: '--max-old-space-size=512 --min_semi_space_size=2' })).toBe(false);
  });
});

describe('server heap options', () => {
  it('asks for the starting old-generation size once, keeping node options and the command line', () => {
    const heap = [`--initial-old-space-size=${SERVER_OLD_SPACE_MB}`];
    expect(serverHeapArgs([], {})).toEqual(heap);
    const argv = ['/usr/bin/node', '/opt/svc/node/bin/svc.js', 'server', '/mnt/d{1...4}'];
    expect(serverRestartArgs(argv, ['--cpu-prof'], {})).toEqual([process.execPath, ...heap, '--cpu-prof', '/opt/svc/node/bin/svc.js', 'server', '/mnt/d{1...4}']);
    // after the restart the options are there: no second restart
    expect(serverRestartArgs(argv, heap, {})).toBeNull();
  });

  it("leaves an operator's own heap sizing alone", () => {
    expect(serverHeapArgs(['--initial-old-space-size=256'], {})).toEqual([]);
    expect(serverHeapArgs(['--initial_heap_size=512'], {})).toEqual([]);
    expect(serverRestartArgs(['node', 'svc.js', 'server'], ['--initial-heap-size=128'], {})).toBeNull();
  });

  it('a refused exec leaves the server running with the defaults, and says so', () => {
    const calls: string[][] = [];
    const refuse = (_file: string, args: string[]) => {
      calls.push(args);
      throw new Error('EACCES');
    };
    expect(restartWithServerHeap(['node', 'svc.js', 'server'], [], {}, refuse)).toBe(false);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toContain(`--initial-old-space-size=${SERVER_OLD_SPACE_MB}`);
    // nothing to do once the options are there: no exec at all
    expect(restartWithServerHeap(['node', 'svc.js', 'server'], calls[0]!.slice(1, 2), {}, refuse)).toBe(false);
    expect(calls).toHaveLength(1);
  });
});
