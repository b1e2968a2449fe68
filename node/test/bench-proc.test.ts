/**
 * The S3 bench's per-CPU-second figures rest on reading another process's
 * CPU time and memory from /proc: check those readers against what this
 * process knows about itself.
 */
import { describe, expect, it } from 'vitest';
import { processCpuSeconds, processStatusBytes, RssSampler } from '../bench/lib/proc.ts';

/** Spins until this process has used `ms` of CPU (not wall time: on a loaded machine 400 ms of wall clock may hold far less CPU). */
function burn(ms: number): void {
  const c0 = process.cpuUsage();
  const until = performance.now() + 60_000;
  let x = 0;
  for (;;) {
    for (let i = 0; i < 10_000; i++) x += Math.sqrt(x + 1);
    const c = process.cpuUsage(c0);
    if ((c.user + c.system) / 1000 >= ms || performance.now() > until) break;
  }
  if (x < 0) throw new Error('unreachable');
}

describe('bench /proc readers', () => {
  it('processCpuSeconds follows process.cpuUsage (user + system, clock-tick resolution)', () => {
    const c0 = process.cpuUsage();
    const p0 = processCpuSeconds(process.pid);
    burn(400);
    const c = process.cpuUsage(c0);
    const own = (c.user + c.system) / 1e6;
    const seen = processCpuSeconds(process.pid) - p0;
    expect(own).toBeGreaterThan(0.2);
    // /proc counts every thread (GC helpers too) in 10 ms ticks.
    expect(seen).toBeGreaterThan(own * 0.8 - 0.03);
    expect(seen).toBeLessThan(own * 1.5 + 0.03);
  });

  it('reads the resident set and samples its peak', () => {
    const rss = processStatusBytes(process.pid, 'VmRSS');
    expect(Math.abs(rss - process.memoryUsage().rss)).toBeLessThan(64 * 1024 * 1024);
    const sampler = new RssSampler(process.pid, 5);
    const hold = Buffer.alloc(64 * 1024 * 1024, 1);
    const peak = sampler.stop();
    expect(hold[hold.length - 1]).toBe(1);
    expect(peak).toBeGreaterThanOrEqual(rss + 48 * 1024 * 1024);
  });

  it('refuses a process that does not exist', () => {
    expect(() => processCpuSeconds(2 ** 22 + 1)).toThrow();
  });
});
