import { describe, expect, it } from 'vitest';
import { BufferPool } from './buffer-pool.ts';
import { nativeAddon } from './native.ts';

describe('BufferPool', () => {
  it('reuses released buffers up to maxFree', () => {
    const pool = new BufferPool(1000, 1);
    const a = pool.acquire();
    const b = pool.acquire();
    expect(a.length).toBe(1000);
    expect(a).not.toBe(b);
    pool.release(a);
    pool.release(b);
    expect(pool.free).toBe(1);
    expect(pool.acquire()).toBe(a);
    expect(pool.acquire()).not.toBe(b);
  });

  it('refuses double releases and foreign buffers', () => {
    const pool = new BufferPool(16);
    const a = pool.acquire();
    pool.release(a);
    expect(() => pool.release(a)).toThrow(expect.objectContaining({ code: 'InternalError' }));
    expect(() => pool.release(Buffer.alloc(16))).toThrow(expect.objectContaining({ code: 'InternalError' }));
    expect(() => new BufferPool(0)).toThrow();
  });

  it.skipIf(typeof nativeAddon?.alignOffset !== 'function')('hands out buffers starting on the alignment asked for', () => {
    const pool = new BufferPool(10_000, 2, 4096);
    for (let i = 0; i < 4; i++) {
      const b = pool.acquire();
      expect(b.length).toBe(10_000);
      expect(nativeAddon!.alignOffset!(b, 4096)).toBe(0);
    }
  });
});
