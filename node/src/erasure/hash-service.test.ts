import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { HashService, LANE_MIN_BYTES, MIN_STREAMS, parseHashMode } from './hash-service.ts';
import { mbHashKernels } from './mb-hash.ts';

/** A body cut at random places, including empty and one-byte pieces and 64-byte boundaries. */
function chunkings(body: Buffer, seed: number): Buffer[] {
  const out: Buffer[] = [];
  let x = seed;
  let off = 0;
  while (off < body.length) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    const r = x >>> 8;
    const pick = [0, 1, 63, 64, 65, 4096, 65536, 1 + (r % 200_000)][r % 8]!;
    const n = Math.min(pick, body.length - off);
    if (n === 0 && out.length > 0 && out[out.length - 1]!.length === 0) continue;
    out.push(body.subarray(off, off + n));
    off += n;
  }
  return out;
}

const hex = (alg: string, b: Buffer) => createHash(alg).update(b).digest('hex');

describe.skipIf(mbHashKernels.length === 0)('hashing service', () => {
  it('concurrent bodies through the lanes digest exactly as node:crypto, MD5 and SHA-256, every size class', async () => {
    const svc = new HashService('on');
    const sizes = [0, 1, 55, 56, 63, 64, 65, 119, 120, 128, 4095, 65_536, 65_537, 1_000_003, 2 * 1024 * 1024];
    const bodies = sizes.map((n) => randomBytes(n));
    const results = await Promise.all(
      bodies.map(async (body, i) => {
        const h = svc.body({ sha256: i % 2 === 0, size: body.length });
        for (const piece of chunkings(body, i + 1)) {
          await h.update(piece);
          // other bodies advance between this body's pieces
          if (i % 3 === 0) await new Promise((r) => setImmediate(r));
        }
        return h.finish();
      }),
    );
    results.forEach((r, i) => {
      expect(r.md5, `md5 of ${sizes[i]} bytes`).toBe(hex('md5', bodies[i]!));
      if (i % 2 === 0) expect(r.sha256, `sha256 of ${sizes[i]} bytes`).toBe(hex('sha256', bodies[i]!));
      else expect(r.sha256).toBeUndefined();
    });
    const st = svc.stats();
    expect(st.laneStreams).toBe(sizes.length);
    // Batched: far fewer addon calls than chunks hashed.
    expect(st.batches).toBeLessThan(st.chunks);
    expect(svc.open).toBe(0);
  });

  it('auto: lone, small or MD5-only uploads stay on OpenSSL; with enough others open a large signed one joins the lanes where both win', async () => {
    const svc = new HashService('auto');
    const alone = svc.body({ sha256: true, size: LANE_MIN_BYTES });
    await alone.update(Buffer.from('abc'));
    expect(await alone.finish()).toEqual({ md5: hex('md5', Buffer.from('abc')), sha256: hex('sha256', Buffer.from('abc')) });
    expect(svc.stats()).toMatchObject({ laneStreams: 0, sslStreams: 1 });
    const others = Array.from({ length: MIN_STREAMS - 1 }, () => svc.body({ sha256: false, size: -1 }));
    // A small body, or one that needs only MD5, stays on OpenSSL even then.
    svc.body({ sha256: true, size: LANE_MIN_BYTES - 1 }).close();
    svc.body({ sha256: false, size: LANE_MIN_BYTES }).close();
    expect(svc.stats().laneStreams).toBe(0);
    const joined = svc.body({ sha256: true, size: -1 });
    const body = randomBytes(300_000);
    await joined.update(body);
    expect(await joined.finish()).toEqual({ md5: hex('md5', body), sha256: hex('sha256', body) });
    expect(svc.stats().laneStreams).toBe(svc.lanesWin('md5') && svc.lanesWin('sha256') ? 1 : 0);
    for (const o of others) o.close();
    expect(svc.open).toBe(0);
  });

  it('off never uses the lanes; a closed hasher is released once and refuses more input', async () => {
    const svc = new HashService('off');
    const h = svc.body({ sha256: false, size: 1 });
    await h.update(Buffer.from('x'));
    h.close();
    h.close();
    expect(svc.open).toBe(0);
    await expect(h.update(Buffer.from('y'))).rejects.toThrow(/closed/);
    expect(svc.stats()).toMatchObject({ laneStreams: 0, sslStreams: 1, batches: 0 });
  });

  it('SVC_HASH_MULTIBUFFER accepts auto, on and off only', () => {
    expect(parseHashMode(undefined)).toBe('auto');
    expect(parseHashMode('on')).toBe('on');
    expect(parseHashMode('off')).toBe('off');
    expect(() => parseHashMode('yes')).toThrow(/expected auto, on or off/);
  });
});
