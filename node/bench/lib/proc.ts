/**
 * Another process's CPU time and memory, read from Linux `/proc`, so a
 * benchmark can put the server's own CPU-seconds (all its threads: the main
 * thread, libuv's pool, workers) under each figure while the client runs in
 * a different process.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

let ticks: number | undefined;

/** Clock ticks per second of `/proc/<pid>/stat` times (`getconf CLK_TCK`, 100 when unknown). */
function clockTicks(): number {
  if (ticks === undefined) {
    try {
      ticks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticks = 100;
    }
  }
  return ticks;
}

/** User + system CPU-seconds `pid` has used so far (every thread of it). */
export function processCpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name, which is in parentheses and may hold spaces.
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // rest[0] is field 3 (state): utime is field 14, stime field 15.
  const utime = Number(rest[11]);
  const stime = Number(rest[12]);
  return (utime + stime) / clockTicks();
}

/** A `/proc/<pid>/status` size field (`VmRSS`, `VmHWM`) in bytes. */
export function processStatusBytes(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no ${field} in /proc/${pid}/status`);
  return Number(m[1]) * 1024;
}

/** Samples a process's resident set every `everyMs` until stopped; `peak` is the largest seen. */
export class RssSampler {
  peak = 0;
  readonly #timer: NodeJS.Timeout;
  readonly #pid: number;

  constructor(pid: number, everyMs = 20) {
    this.#pid = pid;
    this.#sample();
    this.#timer = setInterval(() => this.#sample(), everyMs);
  }

  #sample(): void {
    try {
      this.peak = Math.max(this.peak, processStatusBytes(this.#pid, 'VmRSS'));
    } catch {
      // The process exited: the peak so far stands.
    }
  }

  stop(): number {
    clearInterval(this.#timer);
    this.#sample();
    return this.peak;
  }
}
