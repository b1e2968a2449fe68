/**
 * Reference SigV4 signing for tests that hand-craft requests, via
 * @smithy/signature-v4 (the AWS SDK's own signer), plus a raw HTTP helper.
 */
import { request } from 'node:http';
import { SignatureV4 } from '@smithy/signature-v4';
import { Sha256 } from '../../src/cli/admin/client.ts';

/** SHA-256 / HMAC-SHA256 in the shape @smithy/signature-v4 expects (the admin client's). */
export { Sha256 };

export interface RawRequest {
  method: string;
  /** Path with the bucket (path style), already percent-encoded. */
  path: string;
  query?: Record<string, string>;
  headers?: Record<string, string>;
  body?: Buffer | string;
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** Signs `r` for `endpoint` with the given credentials; returns the headers to send. */
export async function signHeaders(
  endpoint: string,
  creds: { accessKey: string; secretKey: string },
  r: RawRequest,
  signingDate = new Date(),
): Promise<Record<string, string>> {
  const u = new URL(endpoint);
  const signer = new SignatureV4({
    credentials: { accessKeyId: creds.accessKey, secretAccessKey: creds.secretKey },
    region: 'us-east-1',
    service: 's3',
    sha256: Sha256,
    uriEscapePath: false,
    applyChecksum: false,
  });
  const signed = await signer.sign(
    {
      method: r.method,
      protocol: 'http:',
      hostname: u.hostname,
      port: Number(u.port),
      path: r.path,
      query: r.query ?? {},
      headers: { host: u.host, ...r.headers },
    },
    { signingDate },
  );
  return signed.headers as Record<string, string>;
}

/** One HTTP/1.1 request with exactly the given headers and body. */
export function rawRequest(endpoint: string, r: RawRequest, headers: Record<string, string>): Promise<RawResponse> {
  const u = new URL(endpoint);
  const qs = new URLSearchParams(r.query ?? {}).toString().replace(/\+/g, '%20');
  return new Promise((resolve, reject) => {
    const req = request(
      { host: u.hostname, port: u.port, method: r.method, path: qs ? `${r.path}?${qs}` : r.path, headers, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(r.body);
  });
}

/** Signs and sends. */
export async function signedRequest(
  endpoint: string,
  creds: { accessKey: string; secretKey: string },
  r: RawRequest,
  signingDate?: Date,
): Promise<RawResponse> {
  const headers = await signHeaders(endpoint, creds, r, signingDate);
  return rawRequest(endpoint, r, headers);
}

/** The `<Code>` of an S3 XML error body. */
export function errorCode(body: string): string | undefined {
  return /<Code>([^<]+)<\/Code>/.exec(body)?.[1];
}
