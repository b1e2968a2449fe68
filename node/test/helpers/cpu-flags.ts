/** The CPU feature flags Linux reports (`/proc/cpuinfo`), for tests that expect a kernel per CPU; empty elsewhere. */
import { readFileSync } from 'node:fs';

const flags = (() => {
  try {
    return readFileSync('/proc/cpuinfo', 'utf8');
  } catch {
    return '';
  }
})();

/** True when the CPU reports every one of `names` (e.g. `avx2`, `avx512vl`, `sha_ni`). */
export function cpuHas(...names: string[]): boolean {
  return names.every((n) => new RegExp(`\\b${n}\\b`).test(flags));
}
