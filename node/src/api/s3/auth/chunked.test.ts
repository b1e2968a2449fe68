import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SvcError } from '../../../util/errors.ts';
import { type ChunkSigning, decodeAwsChunked } from './chunked.ts';
import { EMPTY_SHA256, hmacHex, sha256Hex, signingKey } from './sigv4.ts';

// The worked example of AWS's "Signature Calculations for the Authorization
// Header: Transferring Payload in Multiple Chunks" documentation.
const EXAMPLE: ChunkSigning = {
  signingKey: signingKey('wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', '20130524', 'us-east-1', 's3'),
  amzDate: '20130524T000000Z',
  scope: '20130524/us-east-1/s3/aws4_request',
  seedSignature: '4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9',
};

function sign(s: ChunkSigning, prev: string, data: Buffer): string {
  return hmacHex(s.signingKey, `AWS4-HMAC-SHA256-PAYLOAD\n${s.amzDate}\n${s.scope}\n${prev}\n${EMPTY_SHA256}\n${sha256Hex(data)}`);
}

/** Builds a signed aws-chunked body (optionally with a signed trailer). */
function signedBody(s: ChunkSigning, chunks: Buffer[], trailer?: [string, string]): { body: Buffer; sigs: string[] } {
  const out: Buffer[] = [];
  const sigs: string[] = [];
  let prev = s.seedSignature;
  for (const c of [...chunks, Buffer.alloc(0)]) {
    const sig = sign(s, prev, c);
    sigs.push(sig);
    out.push(Buffer.from(`${c.length.toString(16)};chunk-signature=${sig}\r\n`));
    if (c.length > 0) out.push(c, Buffer.from('\r\n'));
    prev = sig;
  }
  if (trailer) {
    const canon = `${trailer[0]}:${trailer[1]}\n`;
    const tsig = hmacHex(s.signingKey, `AWS4-HMAC-SHA256-TRAILER\n${s.amzDate}\n${s.scope}\n${prev}\n${sha256Hex(canon)}`);
    out.push(Buffer.from(`${trailer[0]}:${trailer[1]}\r\nx-amz-trailer-signature:${tsig}\r\n\r\n`));
  } else {
    out.push(Buffer.from('\r\n'));
  }
  return { body: Buffer.concat(out), sigs };
}

/** Feeds `buf` in pieces of `step` bytes, like a socket would. */
async function* pieces(buf: Buffer, step = 7): AsyncGenerator<Buffer> {
  for (let i = 0; i < buf.length; i += step) yield buf.subarray(i, i + step);
}

async function collect(gen: AsyncIterable<Buffer>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const p of gen) parts.push(p);
  return Buffer.concat(parts);
}

async function failure(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    if (err instanceof SvcError) return err.code;
    throw err;
  }
  return 'no error';
}

describe('aws-chunked decoding', () => {
  it('reproduces the chunk signatures of the AWS documentation example', () => {
    const { sigs } = signedBody(EXAMPLE, [Buffer.alloc(65536, 'a'), Buffer.alloc(1024, 'a')]);
    expect(sigs).toEqual([
      'ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648',
      '0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497',
      'b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9',
    ]);
  });

  it('decodes a signed body fed in odd-sized pieces', async () => {
    const data = [Buffer.alloc(65536, 'a'), Buffer.alloc(1024, 'a')];
    const { body } = signedBody(EXAMPLE, data);
    for (const step of [1, 7, 4096, body.length]) {
      const out = await collect(decodeAwsChunked(pieces(body, step), { signing: EXAMPLE, expectTrailers: [] }));
      expect(out.equals(Buffer.concat(data))).toBe(true);
    }
  });

  it('rejects tampered data, tampered and missing signatures', async () => {
    const { body } = signedBody(EXAMPLE, [Buffer.from('hello world')]);
    const tampered = Buffer.from(body);
    tampered[tampered.indexOf('hello')] = 'j'.charCodeAt(0);
    expect(await failure(collect(decodeAwsChunked(pieces(tampered), { signing: EXAMPLE, expectTrailers: [] })))).toBe('SignatureDoesNotMatch');
    const badSig = Buffer.from(body.toString('latin1').replace(/chunk-signature=[0-9a-f]{4}/, 'chunk-signature=0000'), 'latin1');
    expect(await failure(collect(decodeAwsChunked(pieces(badSig), { signing: EXAMPLE, expectTrailers: [] })))).toBe('SignatureDoesNotMatch');
    const noSig = Buffer.from('5\r\nhello\r\n0\r\n\r\n');
    expect(await failure(collect(decodeAwsChunked(pieces(noSig), { signing: EXAMPLE, expectTrailers: [] })))).toBe('SignatureDoesNotMatch');
    // chunks reordered: each signature chains on the previous one
    const a = signedBody(EXAMPLE, [Buffer.from('one'), Buffer.from('two')]).body.toString('latin1');
    const lines = a.split('\r\n');
    const swapped = [lines[2], lines[3], lines[0], lines[1], ...lines.slice(4)].join('\r\n');
    expect(await failure(collect(decodeAwsChunked(pieces(Buffer.from(swapped, 'latin1')), { signing: EXAMPLE, expectTrailers: [] })))).toBe(
      'SignatureDoesNotMatch',
    );
  });

  it('rejects truncated and malformed bodies', async () => {
    const { body } = signedBody(EXAMPLE, [Buffer.alloc(100, 'x')]);
    for (const cut of [3, 50, 150, body.length - 90]) {
      expect(await failure(collect(decodeAwsChunked(pieces(body.subarray(0, cut)), { signing: EXAMPLE, expectTrailers: [] })))).toBe(
        'IncompleteBody',
      );
    }
    const cases = ['zz\r\nab\r\n0\r\n\r\n', '2\r\nabc\r\n0\r\n\r\n', '3\r\nab', '', 'ffffffffffff\r\n', '0\r\n\r\ngarbage'];
    for (const c of cases) {
      expect(await failure(collect(decodeAwsChunked(pieces(Buffer.from(c)), { expectTrailers: [] })))).toBe('IncompleteBody');
    }
  });

  it('decodes unsigned trailers and reports them', async () => {
    const crc = 'DUoRhQ==';
    const body = Buffer.from(`5\r\nhello\r\n0\r\nx-amz-checksum-crc32:${crc}\r\n\r\n`);
    let seen: Map<string, string> | undefined;
    const out = await collect(
      decodeAwsChunked(pieces(body, 3), {
        expectTrailers: ['x-amz-checksum-crc32'],
        onTrailers: (t) => {
          seen = t;
        },
      }),
    );
    expect(out.toString()).toBe('hello');
    expect(seen?.get('x-amz-checksum-crc32')).toBe(crc);
    const missing = Buffer.from('5\r\nhello\r\n0\r\n\r\n');
    expect(await failure(collect(decodeAwsChunked(pieces(missing), { expectTrailers: ['x-amz-checksum-crc32'] })))).toBe('IncompleteBody');
  });

  it('verifies the trailer signature of signed streaming with trailers', async () => {
    const trailer: [string, string] = ['x-amz-checksum-crc32c', 'yZRlqg=='];
    const { body } = signedBody(EXAMPLE, [Buffer.from('payload')], trailer);
    let seen: Map<string, string> | undefined;
    const out = await collect(
      decodeAwsChunked(pieces(body), {
        signing: EXAMPLE,
        expectTrailers: [trailer[0]],
        onTrailers: (t) => {
          seen = t;
        },
      }),
    );
    expect(out.toString()).toBe('payload');
    expect(seen?.get(trailer[0])).toBe(trailer[1]);
    const forged = Buffer.from(body.toString('latin1').replace('yZRlqg==', 'AAAAAA=='), 'latin1');
    expect(await failure(collect(decodeAwsChunked(pieces(forged), { signing: EXAMPLE, expectTrailers: [trailer[0]] })))).toBe(
      'SignatureDoesNotMatch',
    );
  });

  it('never yields more than it verifies at the end: the error surfaces before completion', async () => {
    const h = createHash('sha256');
    const { body } = signedBody(EXAMPLE, [Buffer.alloc(10, 'q')]);
    const bad = Buffer.from(body);
    bad[bad.indexOf('qqqq')] = 'r'.charCodeAt(0);
    let completed = false;
    const err = await failure(
      (async () => {
        for await (const p of decodeAwsChunked(pieces(bad), { signing: EXAMPLE, expectTrailers: [] })) h.update(p);
        completed = true;
      })(),
    );
    expect(err).toBe('SignatureDoesNotMatch');
    expect(completed).toBe(false);
  });

  it('property: any chunking and any socket split round-trips; any flipped byte is caught', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.uint8Array({ minLength: 1, maxLength: 300 }), { minLength: 1, maxLength: 4 }),
        fc.integer({ min: 1, max: 97 }),
        fc.nat(),
        async (parts, step, flipSeed) => {
          const chunksIn = parts.map((p) => Buffer.from(p));
          const { body } = signedBody(EXAMPLE, chunksIn);
          const out = await collect(decodeAwsChunked(pieces(body, step), { signing: EXAMPLE, expectTrailers: [] }));
          expect(out.equals(Buffer.concat(chunksIn))).toBe(true);
          const flipped = Buffer.from(body);
          const at = flipSeed % flipped.length;
          flipped[at] = flipped[at]! ^ 0x01;
          let decoded: Buffer | undefined;
          try {
            decoded = await collect(decodeAwsChunked(pieces(flipped, step), { signing: EXAMPLE, expectTrailers: [] }));
          } catch (err) {
            expect(err).toBeInstanceOf(SvcError);
            expect(['SignatureDoesNotMatch', 'IncompleteBody']).toContain((err as SvcError).code);
          }
          // a flip the parser tolerates (e.g. hex digit case, trailing whitespace) must not change the data
          if (decoded !== undefined) expect(decoded.equals(Buffer.concat(chunksIn))).toBe(true);
        },
      ),
      { numRuns: 150 },
    );
  });
});
