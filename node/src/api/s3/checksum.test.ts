import { crc32 as zlibCrc32 } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  checksumBase64,
  compositeChecksum,
  createChecksummer,
  fullObjectChecksum,
  isValidChecksumValue,
  parseChecksumAlgorithm,
} from './checksum.ts';

const CHECK = Buffer.from('123456789');

describe('checksums', () => {
  it('match the standard check values of "123456789"', () => {
    expect(Buffer.from(checksumBase64('CRC32', CHECK), 'base64').toString('hex')).toBe('cbf43926');
    expect(Buffer.from(checksumBase64('CRC32C', CHECK), 'base64').toString('hex')).toBe('e3069283');
    expect(Buffer.from(checksumBase64('CRC64NVME', CHECK), 'base64').toString('hex')).toBe('ae8b14860a799888');
    expect(Buffer.from(checksumBase64('SHA1', CHECK), 'base64').toString('hex')).toBe('f7c3bc1d808e04732adf679965ccc34ca7ae3441');
  });

  it('CRC64NVME of the empty string is 0 and of 4 KiB zeros is stable across chunkings', () => {
    expect(Buffer.from(checksumBase64('CRC64NVME', Buffer.alloc(0)), 'base64').toString('hex')).toBe('0000000000000000');
    const data = Buffer.alloc(4096, 0);
    const one = checksumBase64('CRC64NVME', data);
    const h = createChecksummer('CRC64NVME');
    h.update(data.subarray(0, 3));
    h.update(data.subarray(3, 1001));
    h.update(data.subarray(1001));
    expect(h.digest().toString('base64')).toBe(one);
  });

  it('incremental hashing equals one-shot hashing for every algorithm (property)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.nat(300), fc.constantFrom('CRC32', 'CRC32C', 'CRC64NVME', 'SHA1', 'SHA256' as const), (bytes, cut, alg) => {
        const buf = Buffer.from(bytes);
        const at = Math.min(cut, buf.length);
        const h = createChecksummer(alg);
        h.update(buf.subarray(0, at));
        h.update(buf.subarray(at));
        expect(h.digest().toString('base64')).toBe(checksumBase64(alg, buf));
      }),
    );
  });

  it('CRC32 agrees with zlib, for any chunking of views into larger buffers (property)', () => {
    const data = Buffer.from('hello, svc');
    const v = Buffer.alloc(4);
    v.writeUInt32BE(zlibCrc32(data));
    expect(checksumBase64('CRC32', data)).toBe(v.toString('base64'));
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 70_000 }), fc.array(fc.nat(), { maxLength: 6 }), fc.nat(16), (bytes, cuts, pad) => {
        // the data sits at an offset inside a larger ArrayBuffer, as pieces of a socket read do
        const backing = new Uint8Array(pad + bytes.length + 7);
        backing.set(bytes, pad);
        const view = backing.subarray(pad, pad + bytes.length);
        const h = createChecksummer('CRC32');
        let at = 0;
        for (const c of [...cuts.map((x) => x % (bytes.length + 1))].sort((a, b) => a - b)) {
          h.update(view.subarray(at, Math.max(at, c)));
          at = Math.max(at, c);
        }
        h.update(view.subarray(at));
        const want = Buffer.alloc(4);
        want.writeUInt32BE(zlibCrc32(bytes) >>> 0);
        expect(h.digest().equals(want)).toBe(true);
      }),
      { numRuns: 80 },
    );
  });

  it('full-object combination equals the checksum of the concatenation (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.uint8Array({ maxLength: 200 }), { minLength: 1, maxLength: 5 }),
        fc.constantFrom('CRC32', 'CRC32C', 'CRC64NVME' as const),
        (parts, alg) => {
          const bufs = parts.map((p) => Buffer.from(p));
          const combined = fullObjectChecksum(
            alg,
            bufs.map((b) => ({ value: checksumBase64(alg, b), size: b.length })),
          );
          expect(combined).toBe(checksumBase64(alg, Buffer.concat(bufs)));
        },
      ),
      { numRuns: 60 },
    );
  });

  it('composite checksums hash the raw part digests and append -N', () => {
    const a = checksumBase64('SHA256', Buffer.from('a'));
    const b = checksumBase64('SHA256', Buffer.from('b'));
    const expected = checksumBase64('SHA256', Buffer.concat([Buffer.from(a, 'base64'), Buffer.from(b, 'base64')]));
    expect(compositeChecksum('SHA256', [a, b])).toBe(`${expected}-2`);
  });

  it('validates values and names', () => {
    expect(isValidChecksumValue('CRC32', checksumBase64('CRC32', CHECK))).toBe(true);
    expect(isValidChecksumValue('CRC32', checksumBase64('SHA1', CHECK))).toBe(false);
    expect(isValidChecksumValue('CRC32', 'not base64!')).toBe(false);
    expect(parseChecksumAlgorithm('crc64nvme')).toBe('CRC64NVME');
    expect(parseChecksumAlgorithm('md5')).toBeUndefined();
  });
});
