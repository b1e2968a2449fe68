import { afterEach, describe, expect, it } from 'vitest';
import { type NdjsonEndpoint, ndjsonEndpoint } from '../../test/helpers/ndjson-endpoint.ts';
import { RemoteLogStream } from './remote-log-stream.ts';

const endpoints: NdjsonEndpoint[] = [];
afterEach(async () => {
  for (const e of endpoints.splice(0)) await e.stop();
});

async function endpoint(): Promise<NdjsonEndpoint> {
  const e = await ndjsonEndpoint();
  endpoints.push(e);
  return e;
}

const waitFor = async (probe: () => boolean, ms = 5_000) => {
  const end = Date.now() + ms;
  while (!probe()) {
    if (Date.now() > end) throw new Error('condition not met');
    await new Promise((r) => setTimeout(r, 20));
  }
};

describe('RemoteLogStream', () => {
  it('ships the records as batched ndjson', async () => {
    const ep = await endpoint();
    const notices: string[] = [];
    const s = new RemoteLogStream({ url: ep.url, flushMs: 20, notice: (t) => notices.push(t) });
    for (let i = 0; i < 100; i++) s.write(`${JSON.stringify({ level: 'info', n: i })}\n`);
    // The endpoint has the lines before the stream has read its answers and counted them shipped.
    await waitFor(() => ep.lines.length === 100 && s.shipped === 100);
    expect(ep.lines.map((l) => l['n'])).toEqual(Array.from({ length: 100 }, (_, i) => i));
    expect(ep.contentTypes.every((t) => t === 'application/x-ndjson')).toBe(true);
    expect(ep.contentTypes.length).toBeLessThan(100);
    expect(s.shipped).toBe(100);
    expect(s.dropped).toBe(0);
    await s.close();
    expect(notices).toEqual([]);
  });

  it('an endpoint that is down: writes never wait, records are dropped and counted, shipping resumes', async () => {
    const ep = await endpoint();
    await ep.stop();
    const notices: string[] = [];
    const s = new RemoteLogStream({ url: ep.url, flushMs: 20, maxQueueBytes: 10_000, notice: (t) => notices.push(t) });
    const t0 = performance.now();
    for (let i = 0; i < 5_000; i++) s.write(`${JSON.stringify({ level: 'info', n: i, pad: 'x'.repeat(40) })}\n`);
    // 5 000 writes against a dead endpoint take no network time at all.
    expect(performance.now() - t0).toBeLessThan(500);
    // The queue bound (10 000 bytes) dropped most at once; the failed batch adds to it.
    expect(s.dropped).toBeGreaterThan(4_800);
    await waitFor(() => notices.length === 1);
    expect(notices[0]).toMatch(/dropping log records/);
    await waitFor(() => s.dropped === 5_000);

    // The endpoint comes back: new records arrive again (after the backoff) and a notice says so.
    await ep.restart();
    s.write(`${JSON.stringify({ level: 'info', n: 'back' })}\n`);
    await waitFor(() => ep.lines.some((l) => l['n'] === 'back'), 10_000);
    // The endpoint has the line before the stream has its answer: the notice follows the answer.
    await waitFor(() => notices.length === 2);
    expect(notices[1]).toMatch(/answers again; 5000 log records dropped/);
    await s.close();
  });

  it('refuses a destination that is not http(s)', () => {
    expect(() => new RemoteLogStream({ url: 'ftp://logs.example/x' })).toThrow(/http or https/);
  });
});
