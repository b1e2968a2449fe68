/**
 * vitest global setup: builds the web console (node/console-ui →
 * node/build/console) once per run, as `npm ci` does, so the servers the
 * tests start serve the pages of the sources under test. A child process,
 * as npm runs it (its type stripper's experimental warning stays there).
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

export const BUILD_SCRIPT = join(import.meta.dirname, '..', '..', 'scripts', 'build-console.mjs');

/** Runs the console build (into `out` when given; `script`: a copy elsewhere builds the sources beside it); throws with its output when it fails. */
export function runConsoleBuild(out?: string, script = BUILD_SCRIPT): string {
  const r = spawnSync(process.execPath, ['--disable-warning=ExperimentalWarning', script, ...(out ? ['--out', out] : [])], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`console build failed: ${r.stderr || r.stdout}`);
  return r.stdout;
}

export default function setup(): void {
  runConsoleBuild();
}
