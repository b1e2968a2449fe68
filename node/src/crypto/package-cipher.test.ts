import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decryptedSize, decryptPackages, encryptedSize, encryptStream, FULL_PACKAGE, PACKAGE_OVERHEAD, PACKAGE_SIZE, packageRange } from './package-cipher.ts';

async function collect(it: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const out: Buffer[] = [];
  for await (const c of it) out.push(Buffer.from(c));
  return Buffer.concat(out);
}

async function* chunks(b: Buffer, size: number): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < b.length; i += size) yield b.subarray(i, Math.min(b.length, i + size));
}

async function encrypt(key: Buffer, plain: Buffer, chunk = 10_000): Promise<Buffer> {
  return collect(encryptStream(key, chunks(plain, chunk)));
}

/** Decrypts plaintext [start, end] of `cipher` the way a ranged GET does: only the packages covering it. */
async function decryptRange(key: Buffer, cipher: Buffer, plain: number, start: number, end: number, chunk = 7_777): Promise<Buffer> {
  const span = packageRange(start, end, plain);
  const part = cipher.subarray(span.offset, span.offset + span.length);
  return collect(decryptPackages(key, chunks(part, chunk), { first: span.first, last: span.last, plain, skip: start - span.first * PACKAGE_SIZE, length: end - start + 1 }));
}

describe('package cipher', () => {
  const key = randomBytes(32);

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
      if (n > 0) expect(await decryptRange(key, cipher, n, 0, n - 1)).toEqual(plain);
    }
  });

  it('ranged reads decrypt only their packages and return exactly the range (property)', async () => {
    const plain = randomBytes(5 * PACKAGE_SIZE + 1234);
    const cipher = await encrypt(key, plain, 65_000);
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: plain.length - 1 }), fc.integer({ min: 0, max: plain.length - 1 }), fc.integer({ min: 1, max: 100_000 }), async (a, b, chunk) => {
        const [s, e] = a <= b ? [a, b] : [b, a];
        expect((await decryptRange(key, cipher, plain.length, s, e, chunk)).equals(plain.subarray(s, e + 1))).toBe(true);
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

  it('two encryptions of the same plaintext under one key differ (random stream nonce)', async () => {
    const plain = Buffer.alloc(1000, 7);
    expect((await encrypt(key, plain)).equals(await encrypt(key, plain))).toBe(false);
  });
});
