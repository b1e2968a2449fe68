/** Shared pieces of the data-governance tests (object lock, lifecycle, SSE). */
import { randomBytes } from 'node:crypto';
import { S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { LocalKms } from '../../src/crypto/kms.ts';
import { type Clock, systemClock } from '../../src/util/clock.ts';
import type { S3Server } from './s3-server.ts';
import { keepAliveHandler } from './s3-client.ts';

/** The system clock moved by an adjustable offset: the server's own time, apart from the client's. */
export class OffsetClock implements Clock {
  offset = 0;
  now(): number {
    return Date.now() + this.offset;
  }
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return systemClock.sleep(ms, signal);
  }
  every(ms: number, fn: () => void): () => void {
    return systemClock.every(ms, fn);
  }
  advance(ms: number): void {
    this.offset += ms;
  }
}

export const DAY_MS = 86_400_000;

export function clientOf(srv: S3Server, opts: { requestChecksumCalculation?: 'WHEN_SUPPORTED' | 'WHEN_REQUIRED' } = {}): S3Client {
  return new S3Client({
    requestHandler: keepAliveHandler(),
    endpoint: srv.endpoint,
    region: srv.region,
    forcePathStyle: true,
    credentials: { accessKeyId: srv.accessKey, secretAccessKey: srv.secretKey },
    ...opts,
  });
}

/** The S3 error a call fails with (its code and HTTP status). */
export async function s3Error(p: Promise<unknown>): Promise<{ code: string; status: number | undefined; message: string }> {
  try {
    await p;
  } catch (err) {
    if (err instanceof S3ServiceException) return { code: err.name, status: err.$metadata.httpStatusCode, message: err.message };
    throw err;
  }
  throw new Error('expected the call to fail');
}

/** A key line for SVC_KMS_SECRET_KEY (`<id>:<base64>`). */
export function kmsKeyLine(id: string): string {
  return `${id}:${randomBytes(32).toString('base64')}`;
}

/** An in-memory key store with the given key lines (the first is the default). */
export function testKms(...lines: string[]): LocalKms {
  return new LocalKms({ secretKey: lines.join('\n'), readFile: async () => '', now: () => Date.now() });
}
