import { describe, expect, it } from 'vitest';
import { ManualClock } from './clock.ts';
import { createLogger } from './logger.ts';
import { LogLimiter } from './log-limiter.ts';

describe('LogLimiter', () => {
  it('warns once per key and period, and the next warning says how many were suppressed', async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = createLogger('info', { write: (l: string) => lines.push(JSON.parse(l) as Record<string, unknown>) });
    const clock = new ManualClock(0);
    const lim = new LogLimiter(logger, clock, 10_000);
    lim.warn('a', { event: 'x' }, 'first');
    lim.warn('a', { event: 'x' }, 'again');
    lim.warn('a', { event: 'x' }, 'again');
    lim.warn('b', { event: 'y' }, 'other key');
    expect(lines.map((l) => l.msg)).toEqual(['first', 'other key']);
    await clock.advance(10_000);
    lim.warn('a', { event: 'x' }, 'later');
    expect(lines.at(-1)).toMatchObject({ level: 'warn', event: 'x', msg: 'later', suppressed: 2 });
    await clock.advance(10_000);
    lim.warn('a', { event: 'x' }, 'quiet since');
    expect(lines.at(-1)).not.toHaveProperty('suppressed');
  });
});
