import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { SvcError } from '../../util/errors.ts';
import { silentLogger } from '../../util/logger.ts';
import { sendError } from './errors.ts';

async function answer(err: unknown): Promise<{ status: number; retryAfter: string | null; body: string }> {
  const srv = createServer((req, res) => sendError(res, err, { method: req.method ?? 'GET', resource: '/b/k', requestId: 'R', hostId: 'H', logger: silentLogger }));
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  try {
    const res = await fetch(`http://127.0.0.1:${(srv.address() as AddressInfo).port}/b/k`);
    return { status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.text() };
  } finally {
    srv.close();
  }
}

describe('S3 error answers', () => {
  it('503s carry Retry-After (drives or peers away, retry shortly); a full store (507) and client errors do not', async () => {
    for (const code of ['ErasureWriteQuorum', 'ErasureReadQuorum', 'SlowDown', 'ServiceUnavailable'] as const) {
      const a = await answer(new SvcError(code));
      expect([a.status, a.retryAfter], code).toEqual([503, '5']);
    }
    const full = await answer(new SvcError('XSvcStorageFull'));
    expect([full.status, full.retryAfter]).toEqual([507, null]);
    expect(full.body).toContain('<Code>XSvcStorageFull</Code>');
    const name = await answer(new SvcError('XSvcObjectNameSegmentTooLong'));
    expect([name.status, name.retryAfter]).toEqual([400, null]);
  });
});
