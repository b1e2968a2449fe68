/**
 * A free list of equal-sized stripe buffers. A fresh 1.4 MiB buffer is
 * page-faulted in on first write and later unmapped by the GC, which costs
 * more CPU than encoding into it (codec benchmark: encodeFramedStripe ~1.2
 * GB/cpu-s into fresh buffers vs ~3.9 into reused ones). Writers acquire a
 * buffer per block and release it once every drive has written its frames.
 */
import { SvcError } from '../util/errors.ts';
import { nativeAddon } from './native.ts';

export class BufferPool {
  readonly size: number;
  readonly #max: number;
  readonly #free: Buffer[] = [];
  readonly #out = new WeakSet<Buffer>();
  readonly #align: number;

  /**
   * Buffers of `size` bytes; at most `maxFree` kept when released. `align`
   * (a power of two): each buffer starts on a multiple of it, where the
   * native addon can tell (else wherever the allocator put it).
   */
  constructor(size: number, maxFree = 8, align = 0) {
    if (!Number.isInteger(size) || size <= 0) throw new SvcError('InternalError', `BufferPool: bad size ${size}`);
    this.size = size;
    this.#max = maxFree;
    this.#align = typeof nativeAddon?.alignOffset === 'function' && align > 1 ? align : 0;
  }

  /** Buffers waiting for reuse. */
  get free(): number {
    return this.#free.length;
  }

  acquire(): Buffer {
    const b = this.#free.pop() ?? this.#alloc();
    this.#out.add(b);
    return b;
  }

  #alloc(): Buffer {
    if (this.#align === 0) return Buffer.allocUnsafeSlow(this.size);
    const raw = Buffer.allocUnsafeSlow(this.size + this.#align);
    const off = nativeAddon!.alignOffset!(raw, this.#align);
    return raw.subarray(off, off + this.size);
  }

  /**
   * Returns `buf` for reuse. Releasing a buffer twice, or one this pool did
   * not hand out, throws: either would let two writers share memory.
   */
  release(buf: Buffer): void {
    if (!this.#out.has(buf)) throw new SvcError('InternalError', 'BufferPool: release of a buffer not acquired here');
    this.#out.delete(buf);
    if (this.#free.length < this.#max) this.#free.push(buf);
  }
}
