/**
 * The process's file-descriptor budget: the soft RLIMIT_NOFILE raised to the
 * hard limit at start-up (an unprivileged process may), and how many
 * descriptors are open now (Linux `/proc/self/fd`). The HTTP guard derives
 * its connection caps from the limit and sheds new requests near it.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { nativeAddon } from '../erasure/native.ts';

export interface FileLimit {
  /** Soft limit in force after the attempt (-1: unlimited). */
  readonly soft: number;
  readonly hard: number;
  /** The soft limit was raised by this call. */
  readonly raised: boolean;
  /** How it was read or raised. */
  readonly via: 'native' | 'prlimit' | 'proc' | 'unknown';
}

/** `Max open files` of /proc/self/limits, or undefined off Linux. */
function procLimit(): { soft: number; hard: number } | undefined {
  try {
    const line = readFileSync('/proc/self/limits', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('Max open files'));
    const m = line === undefined ? null : /^Max open files\s+(\S+)\s+(\S+)/.exec(line);
    if (!m) return undefined;
    const n = (v: string) => (v === 'unlimited' ? -1 : Number(v));
    return { soft: n(m[1]!), hard: n(m[2]!) };
  } catch {
    return undefined;
  }
}

/** Raises the soft descriptor limit to the hard one, where allowed. */
export function raiseFileLimit(): FileLimit {
  if (typeof nativeAddon?.raiseFileLimit === 'function') {
    try {
      return { ...nativeAddon.raiseFileLimit(), via: 'native' };
    } catch {
      // fall through to the tools
    }
  }
  const before = procLimit();
  if (before === undefined) return { soft: -1, hard: -1, raised: false, via: 'unknown' };
  if (before.soft === -1 || (before.hard !== -1 && before.soft >= before.hard)) return { ...before, raised: false, via: 'proc' };
  const target = before.hard === -1 ? 1 << 20 : before.hard;
  const r = spawnSync('prlimit', ['--pid', String(process.pid), `--nofile=${target}:${before.hard === -1 ? 'unlimited' : before.hard}`], { stdio: 'ignore' });
  const after = procLimit() ?? before;
  return { ...after, raised: r.status === 0 && after.soft > before.soft, via: 'prlimit' };
}

/** Descriptors open in this process now, or undefined where that cannot be counted. */
export function openDescriptors(): number | undefined {
  try {
    return readdirSync('/proc/self/fd').length;
  } catch {
    return undefined;
  }
}
