/**
 * `npm run bench [-- <section filter>...]`: runs every benchmark module in
 * this directory (codec first, then object, s3, then any other, each module
 * registering sections with `section()` from `harness.ts`) and exits non-zero
 * if a section failed. `BENCH_SCALE=3` lengthens every timed loop.
 */
import { readdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { sizeThreadpool } from '../src/util/threadpool.ts';
import { runSections } from './harness.ts';

// The same worker pool the `svc` command runs with (set before any I/O).
sizeThreadpool();

const here = dirname(fileURLToPath(import.meta.url));
const order = ['codec.ts', 'object.ts', 's3.ts'];
const modules = readdirSync(here)
  .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && f !== 'run.ts' && f !== 'harness.ts')
  .sort((a, b) => {
    const ia = order.indexOf(a);
    const ib = order.indexOf(b);
    return (ia === -1 ? order.length : ia) - (ib === -1 ? order.length : ib) || a.localeCompare(b);
  });

for (const m of modules) await import(pathToFileURL(`${here}/${m}`).href);

console.log(`svc benchmarks: node ${process.version}, ${modules.join(', ')}`);
const results = await runSections(process.argv.slice(2));
const failed = results.filter((r) => r.error !== undefined);
if (failed.length > 0) {
  console.log(`\n${failed.length} section(s) failed: ${failed.map((f) => f.name).join(', ')}`);
  process.exitCode = 1;
}
