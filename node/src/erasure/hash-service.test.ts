import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { HashService, LANE_MIN_BYTES, parseHashMode, STAGE_BYTES, STAGE_DEPTH } from './hash-service.ts';
import { mbHashInterleave, mbHashKernels, mbHashSingle } from './mb-hash.ts';

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
  it('concurrent bodies through the service digest exactly as node:crypto, MD5 and SHA-256, every size class and chunking', async () => {
    for (const mode of ['on', 'auto'] as const) {
      const svc = new HashService(mode);
      const sizes = [0, 1, 55, 56, 63, 64, 65, 119, 120, 128, 4095, 65_536, 65_537, 1_000_003, STAGE_BYTES - 1, STAGE_BYTES, STAGE_BYTES + 1, 2 * 1024 * 1024, 5 * STAGE_BYTES + 77];
      const bodies = sizes.map((n) => randomBytes(n));
      const results = await Promise.all(
        bodies.map(async (body, i) => {
          // -1: size not declared (aws-chunked without x-amz-decoded-content-length), which auto sends here too
          const h = svc.body({ sha256: i % 2 === 0, size: i % 5 === 0 ? -1 : body.length });
          for (const piece of chunkings(body, i + 1)) {
            // the hasher copies: the piece may be reused at once, as socket reads are
            const scratch = Buffer.from(piece);
            const wait = h.update(scratch);
            scratch.fill(0xee);
            if (wait !== undefined) await wait;
            // other bodies advance between this body's pieces
            if (i % 3 === 0) await new Promise((r) => setImmediate(r));
          }
          return h.finish();
        }),
      );
      results.forEach((r, i) => {
        expect(r.md5, `${mode}: md5 of ${sizes[i]} bytes`).toBe(hex('md5', bodies[i]!));
        if (i % 2 === 0) expect(r.sha256, `${mode}: sha256 of ${sizes[i]} bytes`).toBe(hex('sha256', bodies[i]!));
        else expect(r.sha256).toBeUndefined();
      });
      const st = svc.stats();
      if (mode === 'on') expect(st.laneStreams).toBe(sizes.length);
      // Batched: fewer pool trips than staged buffers hashed.
      if (st.chunks > 0) expect(st.batches).toBeLessThan(st.chunks);
      expect(svc.open).toBe(0);
    }
  });

  it('a body stays at most STAGE_DEPTH staged buffers ahead of its hashing', async () => {
    const svc = new HashService('on');
    const h = svc.body({ sha256: true, size: -1 });
    const body = randomBytes((STAGE_DEPTH + 3) * STAGE_BYTES);
    let waited = 0;
    for (let off = 0; off < body.length; off += 65_536) {
      const wait = h.update(body.subarray(off, off + 65_536));
      if (wait !== undefined) {
        waited++;
        await wait;
      }
    }
    expect(waited).toBeGreaterThan(0);
    expect(await h.finish()).toEqual({ md5: hex('md5', body), sha256: hex('sha256', body) });
  });

  it('auto: small bodies stay on node:crypto; large ones, or of unknown size, use the service where 4 MD5 lanes win, alone or not', async () => {
    const svc = new HashService('auto');
    const small = svc.body({ sha256: true, size: LANE_MIN_BYTES - 1 });
    expect(small.update(Buffer.from('abc'))).toBeUndefined();
    expect(await small.finish()).toEqual({ md5: hex('md5', Buffer.from('abc')), sha256: hex('sha256', Buffer.from('abc')) });
    expect(svc.stats()).toMatchObject({ laneStreams: 0, sslStreams: 1 });
    const wins = svc.lanesWin('md5');
    // a lone large body: no other upload open
    const alone = svc.body({ sha256: true, size: LANE_MIN_BYTES });
    const body = randomBytes(LANE_MIN_BYTES);
    const wait = alone.update(body);
    if (wait !== undefined) await wait;
    expect(await alone.finish()).toEqual({ md5: hex('md5', body), sha256: hex('sha256', body) });
    svc.body({ sha256: false, size: -1 }).close();
    expect(svc.stats().laneStreams).toBe(wins ? 2 : 0);
    expect(svc.describe()).toMatchObject({ mode: 'auto', largeUploadsInService: wins, sha256InLanes: wins && svc.lanesWin('sha256'), single: mbHashSingle });
    expect(svc.open).toBe(0);
  });

  it('auto: with a SIMD kernel MD5 always goes to the lanes, whatever a busy machine does to start-up timings', () => {
    // A timing decided this before, and on a loaded machine 3-4 of 10 processes kept large
    // uploads on the event loop.
    const simd = mbHashKernels.some((k) => k !== 'scalar');
    for (let i = 0; i < 5; i++) expect(new HashService('auto').lanesWin('md5')).toBe(simd);
    expect(new HashService('auto').describe().largeUploadsInService).toBe(simd);
  });

  it('auto: with the SHA extensions SHA-256 stays out of the lanes (four interleaved streams beat them several times over)', () => {
    if (mbHashInterleave.sha256 < 2) return;
    expect(new HashService('auto').lanesWin('sha256')).toBe(false);
    expect(new HashService('auto').describe()).toMatchObject({ sha256InLanes: false, interleave: { sha256: mbHashInterleave.sha256 } });
  });

  it('an aborted body frees its place; its queued buffers are never hashed into a later body', async () => {
    const svc = new HashService('on');
    const aborted = svc.body({ sha256: true, size: -1 });
    aborted.update(randomBytes(3 * STAGE_BYTES));
    aborted.close();
    aborted.close();
    await expect(aborted.finish()).rejects.toThrow(/closed/);
    const next = svc.body({ sha256: true, size: -1 });
    const body = randomBytes(2 * STAGE_BYTES + 5);
    const wait = next.update(body);
    if (wait !== undefined) await wait;
    expect(await next.finish()).toEqual({ md5: hex('md5', body), sha256: hex('sha256', body) });
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
