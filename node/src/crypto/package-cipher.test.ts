import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { nativeAddon } from '../erasure/native.ts';
import { type CipherKernel, cipherKernel, decryptedSize, decryptPackages, encryptedSize, encryptStream, FULL_PACKAGE, PACKAGE_OVERHEAD, PACKAGE_SIZE, packageRange } from './package-cipher.ts';

const execFileAsync = promisify(execFile);

async function collect(it: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const out: Buffer[] = [];
  for await (const c of it) out.push(Buffer.from(c));
  return Buffer.concat(out);
}

/** `b` in chunks of `size`; `fresh`: each a copy of its own (what an in-place reader may overwrite). */
async function* chunks(b: Buffer, size: number, fresh = false): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < b.length; i += size) {
    const c = b.subarray(i, Math.min(b.length, i + size));
    yield fresh ? Buffer.from(c) : c;
  }
}

let kernel: CipherKernel = 'node';

async function encrypt(key: Buffer, plain: Buffer, chunk = 10_000, k: CipherKernel = kernel): Promise<Buffer> {
  return collect(encryptStream(key, chunks(plain, chunk), k));
}

/** Decrypts plaintext [start, end] of `cipher` the way a ranged GET does: only the packages covering it. */
async function decryptRange(
  key: Buffer,
  cipher: Buffer,
  plain: number,
  start: number,
  end: number,
  chunk = 7_777,
  k: CipherKernel = kernel,
  inPlace = false,
): Promise<Buffer> {
  const span = packageRange(start, end, plain);
  const part = cipher.subarray(span.offset, span.offset + span.length);
  const want = { first: span.first, last: span.last, plain, skip: start - span.first * PACKAGE_SIZE, length: end - start + 1 };
  return collect(decryptPackages(key, chunks(part, chunk, inPlace), want, { kernel: k, inPlace }));
}

// node:crypto always; the native kernel too where the addon was built with it (CI requires it).
const KERNELS: CipherKernel[] = cipherKernel === 'native' ? ['node', 'native'] : ['node'];

/** Encrypts with a pinned stream nonce (to compare kernels byte for byte). */
async function encryptPinned(key: Buffer, nonce: Buffer, plain: Buffer, chunk: number, k: CipherKernel): Promise<Buffer> {
  return collect(encryptStream(key, chunks(plain, chunk), k, nonce));
}

/** The `package` detail of the error decrypting all of `cipher` throws, or 'ok'. */
async function failure(key: Buffer, cipher: Buffer, plain: number, k: CipherKernel): Promise<unknown> {
  try {
    await decryptRange(key, cipher, plain, 0, plain - 1, 40_000, k);
    return 'ok';
  } catch (err) {
    const e = err as { code?: string; details?: { package?: number } };
    return `${e.code}:${e.details?.package}`;
  }
}

describe('package cipher kernels', () => {
  it('the native kernel is built (CI builds it), and both kernels read what the other wrote', async () => {
    if (process.env.SVC_REQUIRE_NATIVE === '1') expect(cipherKernel).toBe('native');
    if (cipherKernel !== 'native') return;
    const key = randomBytes(32);
    for (const n of [0, 5, PACKAGE_SIZE, 3 * PACKAGE_SIZE + 9]) {
      const plain = randomBytes(n);
      for (const [w, r] of [['native', 'node'], ['node', 'native']] as const) {
        const cipher = await encrypt(key, plain, 50_000, w);
        if (n > 0) expect((await decryptRange(key, cipher, n, 0, n - 1, 30_000, r)).equals(plain)).toBe(true);
      }
    }
  });

  it.runIf(cipherKernel === 'native')('the native open works in place only when out is the cipher buffer itself, never on a partial overlap', async () => {
    const addon = nativeAddon!;
    const key = randomBytes(32);
    const plain = randomBytes(3 * PACKAGE_SIZE + 5);
    const cipher = await encrypt(key, plain, 50_000, 'native');
    const nonce = cipher.subarray(4, 16);
    const buf = Buffer.from(cipher);
    expect(addon.gcmOpen(key, nonce, 0, 3, buf, buf)).toBe(plain.length);
    expect(buf.subarray(0, plain.length).equals(plain)).toBe(true);
    const shifted = Buffer.from(cipher);
    expect(() => addon.gcmOpen(key, nonce, 0, 3, shifted, shifted.subarray(16))).toThrow(RangeError);
    expect(shifted.equals(cipher)).toBe(true);
  });

  it.runIf(cipherKernel === 'native')('native and node:crypto write the same bytes and refuse the same tampering (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 3 * PACKAGE_SIZE + 500 }),
        fc.integer({ min: 1, max: 2 * FULL_PACKAGE }),
        fc.nat(),
        async (n, chunk, flipAt) => {
          const key = randomBytes(32);
          const nonce = randomBytes(12);
          const plain = randomBytes(n);
          const native = await encryptPinned(key, nonce, plain, chunk, 'native');
          const node = await encryptPinned(key, nonce, plain, chunk, 'node');
          expect(native.equals(node)).toBe(true);
          const flipped = Buffer.from(native);
          flipped[flipAt % flipped.length]! ^= 1 << (flipAt % 8);
          const verdict = await failure(key, flipped, n, 'native');
          expect(verdict).toMatch(/^XSvcObjectTampered:\d+$/);
          expect(await failure(key, flipped, n, 'node')).toBe(verdict);
          expect(await failure(randomBytes(32), native, n, 'native')).toBe('XSvcObjectTampered:0');
        },
      ),
      { numRuns: 40 },
    );
  });

  it.runIf(cipherKernel === 'native')('without AES-NI/PCLMUL (OpenSSL portable code) both kernels still write the same bytes', async () => {
    // OPENSSL_ia32cap masks the CPU features OpenSSL may use in the child: the
    // portable AES and GHASH code must produce what the accelerated code did here.
    const key = randomBytes(32);
    const nonce = randomBytes(12);
    // The same plaintext on both sides, computed (too large for an argument).
    const plain = Buffer.alloc(2 * PACKAGE_SIZE + 77);
    for (let i = 0; i < plain.length; i++) plain[i] = (i * 131 + (i >> 9)) & 0xff;
    const here = await encryptPinned(key, nonce, plain, 100_000, 'native');
    const script = `
      import { encryptStream, cipherKernel } from ${JSON.stringify(new URL('./package-cipher.ts', import.meta.url).href)};
      const [key, nonce] = process.argv.slice(1).map((h) => Buffer.from(h, 'hex'));
      const plain = Buffer.alloc(${plain.length});
      for (let i = 0; i < plain.length; i++) plain[i] = (i * 131 + (i >> 9)) & 0xff;
      const out = {};
      for (const k of ['native', 'node']) {
        const parts = [];
        async function* one() { yield plain; }
        for await (const c of encryptStream(key, one(), k, nonce)) parts.push(Buffer.from(c));
        out[k] = Buffer.concat(parts).toString('hex');
      }
      process.stdout.write(JSON.stringify({ kernel: cipherKernel, ...out }));
    `;
    const { stdout } = await execFileAsync(
      process.execPath,
      ['--input-type=module', '-e', script, key.toString('hex'), nonce.toString('hex')],
      { env: { ...process.env, OPENSSL_ia32cap: '~0x200000200000000' }, maxBuffer: 16 * 1024 * 1024 },
    );
    const child = JSON.parse(stdout) as { kernel: string; native: string; node: string };
    expect(child.kernel).toBe('native');
    expect(child.native).toBe(here.toString('hex'));
    expect(child.node).toBe(here.toString('hex'));
  });

  it('a huge source chunk is sealed and opened in bounded steps (at most 1 MiB of plaintext each)', async () => {
    const key = randomBytes(32);
    const plain = randomBytes(5 * 1024 * 1024 + 3);
    const outs: number[] = [];
    const parts: Buffer[] = [];
    for await (const c of encryptStream(key, chunks(plain, plain.length))) {
      outs.push(c.length);
      parts.push(Buffer.from(c));
    }
    expect(Math.max(...outs)).toBeLessThanOrEqual(16 * FULL_PACKAGE);
    const cipher = Buffer.concat(parts);
    const span = packageRange(0, plain.length - 1, plain.length);
    const sizes: number[] = [];
    const back: Buffer[] = [];
    for await (const c of decryptPackages(key, chunks(cipher, cipher.length), { first: span.first, last: span.last, plain: plain.length, skip: 0, length: plain.length })) {
      sizes.push(c.length);
      back.push(Buffer.from(c));
    }
    expect(Math.max(...sizes)).toBeLessThanOrEqual(16 * PACKAGE_SIZE);
    expect(Buffer.concat(back).equals(plain)).toBe(true);
  });
});

describe.each(KERNELS)('package cipher (%s kernel)', (k) => {
  const key = randomBytes(32);
  beforeAll(() => {
    kernel = k;
  });

  it('sizes: one package at least, 32 bytes per package', () => {
    expect(encryptedSize(0)).toBe(PACKAGE_OVERHEAD);
    expect(encryptedSize(1)).toBe(1 + PACKAGE_OVERHEAD);
    expect(encryptedSize(PACKAGE_SIZE)).toBe(FULL_PACKAGE);
    expect(encryptedSize(PACKAGE_SIZE + 1)).toBe(FULL_PACKAGE + 1 + PACKAGE_OVERHEAD);
    for (const n of [0, 1, 65535, 65536, 65537, 3 * 65536, 10_000_000]) expect(decryptedSize(encryptedSize(n))).toBe(n);
    for (const bad of [0, 31, FULL_PACKAGE + 1, FULL_PACKAGE + 32 - 1 + 1 - 1]) {
      if (bad === FULL_PACKAGE + PACKAGE_OVERHEAD) continue;
      expect(() => decryptedSize(bad)).toThrow();
    }
  });

  it('round trips any size and chunking, and the ciphertext holds no plaintext', async () => {
    for (const n of [0, 1, 100, PACKAGE_SIZE - 1, PACKAGE_SIZE, PACKAGE_SIZE + 1, 3 * PACKAGE_SIZE, 3 * PACKAGE_SIZE + 17]) {
      const plain = Buffer.alloc(n, 'secret-plaintext-');
      const cipher = await encrypt(key, plain, 1 + (n % 50_000));
      expect(cipher.length).toBe(encryptedSize(n));
      if (n > 16) expect(cipher.includes(Buffer.from('secret-plaintext-'))).toBe(false);
      if (n > 0) expect((await decryptRange(key, cipher, n, 0, n - 1)).equals(plain)).toBe(true);
    }
  });

  it('ranged reads decrypt only their packages and return exactly the range (property)', async () => {
    const plain = randomBytes(5 * PACKAGE_SIZE + 1234);
    const cipher = await encrypt(key, plain, 65_000);
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: plain.length - 1 }), fc.integer({ min: 0, max: plain.length - 1 }), fc.integer({ min: 1, max: 100_000 }), async (a, b, chunk) => {
        const [s, e] = a <= b ? [a, b] : [b, a];
        expect((await decryptRange(key, cipher, plain.length, s, e, chunk)).equals(plain.subarray(s, e + 1))).toBe(true);
        expect((await decryptRange(key, cipher, plain.length, s, e, chunk, kernel, true)).equals(plain.subarray(s, e + 1))).toBe(true);
      }),
      { numRuns: 60 },
    );
    const span = packageRange(2 * PACKAGE_SIZE + 5, 2 * PACKAGE_SIZE + 10, plain.length);
    expect(span).toMatchObject({ first: 2, last: 2, offset: 2 * FULL_PACKAGE, length: FULL_PACKAGE });
  });

  it('refuses a wrong key, a flipped byte, a moved package and a stream cut short', async () => {
    const plain = randomBytes(3 * PACKAGE_SIZE);
    const cipher = await encrypt(key, plain);
    await expect(decryptRange(randomBytes(32), cipher, plain.length, 0, 10)).rejects.toMatchObject({ code: 'XSvcObjectTampered' });
    const flipped = Buffer.from(cipher);
    flipped[FULL_PACKAGE + 100]! ^= 1;
    await expect(decryptRange(key, flipped, plain.length, PACKAGE_SIZE, PACKAGE_SIZE + 1)).rejects.toMatchObject({ code: 'XSvcObjectTampered' });
    // package 0 swapped into position 1
    const swapped = Buffer.concat([cipher.subarray(0, FULL_PACKAGE), cipher.subarray(0, FULL_PACKAGE), cipher.subarray(2 * FULL_PACKAGE)]);
    await expect(decryptRange(key, swapped, plain.length, PACKAGE_SIZE, PACKAGE_SIZE + 1)).rejects.toMatchObject({ code: 'XSvcObjectTampered' });
    // the first two packages presented as a whole stream: the second lacks the final flag
    const cut = cipher.subarray(0, 2 * FULL_PACKAGE);
    await expect(decryptRange(key, cut, 2 * PACKAGE_SIZE, PACKAGE_SIZE, 2 * PACKAGE_SIZE - 1)).rejects.toMatchObject({ code: 'XSvcObjectTampered' });
    // a package of another stream under the same key (a re-uploaded part)
    const other = await encrypt(key, plain);
    const mixed = Buffer.concat([cipher.subarray(0, FULL_PACKAGE), other.subarray(FULL_PACKAGE)]);
    await expect(decryptRange(key, mixed, plain.length, 0, plain.length - 1)).rejects.toMatchObject({ code: 'XSvcObjectTampered' });
  });

  it('in place: runs are opened in the chunks themselves (no copy) and still refuse tampering', async () => {
    const plain = randomBytes(40 * PACKAGE_SIZE + 77);
    const cipher = await encrypt(key, plain, 65_000);
    const given: Uint8Array[] = [];
    async function* owned(): AsyncGenerator<Uint8Array> {
      for await (const c of chunks(cipher, 3 * FULL_PACKAGE + 100, true)) {
        given.push(c);
        yield c;
      }
    }
    const span = { first: 0, last: 40, plain: plain.length, skip: 0, length: plain.length };
    const out: Uint8Array[] = [];
    for await (const b of decryptPackages(key, owned(), span, { kernel, inPlace: true })) out.push(b);
    expect(Buffer.concat(out).equals(plain)).toBe(true);
    // The first run is the first chunk's three packages, opened where they lay.
    // (compared as booleans: a failing toBe would print both 200 KB buffers)
    expect(out[0]!.buffer === given[0]!.buffer, 'the first run opened in its own chunk').toBe(true);
    expect(out[0]!.byteOffset).toBe(given[0]!.byteOffset);
    expect(Buffer.from(given[0]!.subarray(0, 3 * PACKAGE_SIZE)).equals(plain.subarray(0, 3 * PACKAGE_SIZE))).toBe(true);
    const flipped = Buffer.from(cipher);
    flipped[7 * FULL_PACKAGE + 100]! ^= 1;
    await expect(decryptRange(key, flipped, plain.length, 0, plain.length - 1, 200_000, kernel, true)).rejects.toMatchObject({
      code: 'XSvcObjectTampered',
      details: { package: 7 },
    });
  });

  it('two encryptions of the same plaintext under one key differ (random stream nonce)', async () => {
    const plain = Buffer.alloc(1000, 7);
    expect((await encrypt(key, plain)).equals(await encrypt(key, plain))).toBe(false);
  });
});
