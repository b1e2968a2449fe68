import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { describe, expect, it } from 'vitest';
import { SvcError } from '../../util/errors.ts';
import type { AuthContext } from './auth/sigv4.ts';
import { checksumBase64 } from './checksum.ts';
import { buildPutData, readSmallBody } from './put-data.ts';

const unsigned: AuthContext = {
  accessKey: 'k',
  payload: { kind: 'unsigned' },
  signingKey: Buffer.alloc(32),
  signature: '0'.repeat(64),
  amzDate: '20260101T000000Z',
  scope: '20260101/us-east-1/s3/aws4_request',
  presigned: false,
};

async function* chunks(...parts: string[]): AsyncGenerator<Uint8Array> {
  for (const p of parts) yield Buffer.from(p);
}

async function consume(headers: IncomingHttpHeaders, parts: string[], auth = unsigned, maxSize = 1 << 20) {
  const d = buildPutData(headers, chunks(...parts), auth, { maxSize });
  let n = 0;
  for await (const p of d.stream) n += p.byteLength;
  return { n, md5: d.md5Hex(), checksum: d.checksum(), size: d.size };
}

async function code(p: Promise<unknown> | (() => unknown)): Promise<string | undefined> {
  try {
    await (typeof p === 'function' ? p() : p);
  } catch (err) {
    if (err instanceof SvcError) return err.code;
    throw err;
  }
  return undefined;
}

const md5b64 = (s: string) => createHash('md5').update(s).digest('base64');

describe('buildPutData', () => {
  it('streams, counts and hashes; MD5 and requested checksum available after consumption', async () => {
    const r = await consume({ 'content-length': '11', 'x-amz-sdk-checksum-algorithm': 'CRC32C' }, ['hello', ' world']);
    expect(r.n).toBe(11);
    expect(r.size).toBe(11);
    expect(r.md5).toBe(createHash('md5').update('hello world').digest('hex'));
    expect(r.checksum).toEqual({ algorithm: 'CRC32C', value: checksumBase64('CRC32C', Buffer.from('hello world')), type: 'FULL_OBJECT' });
  });

  it('verifies Content-MD5, hex payload hash, header checksums and length, failing only at the end', async () => {
    expect(await code(consume({ 'content-length': '3', 'content-md5': md5b64('abc') }, ['abc']))).toBeUndefined();
    expect(await code(consume({ 'content-length': '3', 'content-md5': md5b64('abd') }, ['abc']))).toBe('BadDigest');
    expect(await code(() => buildPutData({ 'content-md5': 'xyz' }, chunks(), unsigned, { maxSize: 10 }))).toBe('InvalidDigest');
    const hex = createHash('sha256').update('abc').digest('hex');
    const signedHex: AuthContext = { ...unsigned, payload: { kind: 'sha256', hex } };
    expect(await code(consume({ 'content-length': '3' }, ['abc'], signedHex))).toBeUndefined();
    expect(await code(consume({ 'content-length': '3' }, ['abd'], signedHex))).toBe('XAmzContentSHA256Mismatch');
    const good = checksumBase64('SHA1', Buffer.from('abc'));
    expect((await consume({ 'content-length': '3', 'x-amz-checksum-sha1': good }, ['abc'])).checksum?.value).toBe(good);
    expect(await code(consume({ 'content-length': '3', 'x-amz-checksum-sha1': checksumBase64('SHA1', Buffer.from('x')) }, ['abc']))).toBe('BadDigest');
    expect(await code(consume({ 'content-length': '5' }, ['abc']))).toBe('IncompleteBody');
    expect(await code(consume({ 'content-length': '2' }, ['abc']))).toBe('IncompleteBody');
  });

  it('refuses oversized declarations, ambiguous checksums and misplaced trailers before reading', async () => {
    expect(await code(() => buildPutData({ 'content-length': '11' }, chunks(), unsigned, { maxSize: 10 }))).toBe('EntityTooLarge');
    const two = { 'x-amz-checksum-crc32': checksumBase64('CRC32', Buffer.from('a')), 'x-amz-checksum-sha1': checksumBase64('SHA1', Buffer.from('a')) };
    expect(await code(() => buildPutData(two, chunks(), unsigned, { maxSize: 10 }))).toBe('InvalidRequest');
    expect(await code(() => buildPutData({ 'x-amz-checksum-crc32': 'bad!' }, chunks(), unsigned, { maxSize: 10 }))).toBe('InvalidRequest');
    expect(await code(() => buildPutData({ 'x-amz-trailer': 'x-amz-checksum-crc32' }, chunks(), unsigned, { maxSize: 10 }))).toBe('InvalidRequest');
    expect(await code(() => buildPutData({ 'x-amz-sdk-checksum-algorithm': 'MD4' }, chunks(), unsigned, { maxSize: 10 }))).toBe('InvalidRequest');
  });

  it('decodes aws-chunked bodies with unsigned trailers and checks the trailer checksum', async () => {
    const auth: AuthContext = { ...unsigned, payload: { kind: 'streaming', signed: false, trailer: true } };
    const crc = checksumBase64('CRC32', Buffer.from('hello'));
    const headers = { 'x-amz-decoded-content-length': '5', 'x-amz-trailer': 'x-amz-checksum-crc32', 'content-encoding': 'aws-chunked' };
    const ok = await consume(headers, [`5\r\nhel`, `lo\r\n0\r\nx-amz-checksum-crc32:${crc}\r\n\r\n`], auth);
    expect(ok.checksum?.value).toBe(crc);
    const bad = checksumBase64('CRC32', Buffer.from('other'));
    expect(await code(consume(headers, [`5\r\nhello\r\n0\r\nx-amz-checksum-crc32:${bad}\r\n\r\n`], auth))).toBe('BadDigest');
  });

  it('a client that disconnects mid-body is IncompleteBody, not an internal error', async () => {
    async function* dropped(): AsyncGenerator<Uint8Array> {
      yield Buffer.from('abc');
      throw Object.assign(new Error('aborted'), { code: 'ECONNRESET' });
    }
    const d = buildPutData({ 'content-length': '10' }, dropped(), unsigned, { maxSize: 100 });
    expect(await code((async () => {
      for await (const _ of d.stream) {
        // consume
      }
    })())).toBe('IncompleteBody');
  });

  it('readSmallBody caps XML bodies', async () => {
    expect((await readSmallBody({ 'content-length': '3' }, chunks('abc'), unsigned, 10)).toString()).toBe('abc');
    expect(await code(readSmallBody({ 'content-length': '30' }, chunks('a'.repeat(30)), unsigned, 10))).toBe('EntityTooLarge');
    // undeclared length: cut off while streaming
    expect(await code(readSmallBody({ 'transfer-encoding': 'chunked' }, chunks('a'.repeat(30)), unsigned, 10))).toBe('EntityTooLarge');
  });
});
