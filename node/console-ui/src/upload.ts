/**
 * Uploading a file through the console: small files in one request, files
 * above 16 MiB in parts (S3 multipart: 8 MiB parts or larger so that at most
 * 10 000 are needed, three in flight, a failed part retried twice; anything
 * else aborts the upload so no parts are left behind). XMLHttpRequest
 * because it reports upload progress, which fetch does not.
 */
import type { UploadResult } from '../../src/api/console/wire.ts';
import { ApiError, apiUrl, csrfHeader, errorFromBody, NETWORK_ERROR, SIGNED_OUT_EVENT } from './api.js';

export const UPLOAD = {
  /** Files above this go up in parts. */
  multipartThreshold: 16 * 1024 * 1024,
  /** Smallest part (S3's minimum is 5 MiB). */
  minPartSize: 8 * 1024 * 1024,
  maxParts: 10_000,
  /** Parts in flight at once. */
  concurrency: 3,
  retries: 2,
} as const;

/** Part size for a file of `size` bytes: at least 8 MiB, whole MiB, at most 10 000 parts. */
export function partSize(size: number): number {
  const mib = 1024 * 1024;
  return Math.max(UPLOAD.minPartSize, Math.ceil(size / UPLOAD.maxParts / mib) * mib);
}

export interface UploadHandle {
  readonly done: Promise<UploadResult>;
  cancel(): void;
}

interface Sent {
  readonly xhr: XMLHttpRequest;
  readonly result: Promise<unknown>;
}

/** One request with upload progress; resolves with the JSON answer. */
function send(method: string, url: string, body: Blob | string | null, headers: Record<string, string>, onProgress?: (loaded: number) => void): Sent {
  const xhr = new XMLHttpRequest();
  const result = new Promise<unknown>((resolve, reject) => {
    xhr.open(method, url);
    for (const [k, v] of Object.entries({ ...headers, ...csrfHeader() })) xhr.setRequestHeader(k, v);
    if (onProgress) xhr.upload.onprogress = (ev) => onProgress(ev.loaded);
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) {
        resolve(xhr.responseText === '' ? undefined : JSON.parse(xhr.responseText));
        return;
      }
      const err = errorFromBody(xhr.status, xhr.responseText, xhr.getResponseHeader('retry-after'));
      if (xhr.status === 401) window.dispatchEvent(new CustomEvent(SIGNED_OUT_EVENT, { detail: err }));
      reject(err);
    };
    xhr.onerror = () => reject(NETWORK_ERROR());
    xhr.onabort = () => reject(new ApiError(0, 'Canceled', 'The upload was canceled.', 'Upload the file again if you still want it.'));
    xhr.send(body);
  });
  return { xhr, result };
}

const retryable = (err: unknown) => err instanceof ApiError && err.code !== 'Canceled' && (err.status === 0 || err.status >= 500) && err.status !== 501;

export function uploadFile(bucket: string, key: string, file: Blob, onProgress: (loaded: number, total: number) => void): UploadHandle {
  const total = file.size;
  const inFlight = new Set<XMLHttpRequest>();
  let canceled = false;
  const base = `buckets/${encodeURIComponent(bucket)}`;
  const type = file.type || 'application/octet-stream';
  const track = (s: Sent) => {
    inFlight.add(s.xhr);
    return s.result.finally(() => inFlight.delete(s.xhr));
  };

  const single = async (): Promise<UploadResult> => {
    const r = await track(send('PUT', apiUrl(`${base}/upload`, { key }), file, { 'content-type': type }, (n) => onProgress(n, total)));
    onProgress(total, total);
    return r as UploadResult;
  };

  const multipart = async (): Promise<UploadResult> => {
    const size = partSize(total);
    const count = Math.ceil(total / size);
    const { uploadId } = (await track(send('POST', apiUrl(`${base}/multipart`, { key, contentType: type }), null, {}))) as { uploadId: string };
    const loaded = new Array<number>(count).fill(0);
    const report = () => onProgress(Math.min(total, loaded.reduce((a, b) => a + b, 0)), total);
    const etags = new Array<string>(count);
    let next = 0;
    const worker = async () => {
      while (!canceled && next < count) {
        const i = next++;
        const blob = file.slice(i * size, Math.min(total, (i + 1) * size));
        for (let attempt = 0; ; attempt++) {
          try {
            const r = (await track(
              send('PUT', apiUrl(`${base}/multipart/${encodeURIComponent(uploadId)}/${i + 1}`, { key }), blob, { 'content-type': 'application/octet-stream' }, (n) => {
                loaded[i] = n;
                report();
              }),
            )) as { etag: string };
            etags[i] = r.etag;
            loaded[i] = blob.size;
            report();
            break;
          } catch (err) {
            loaded[i] = 0;
            if (attempt >= UPLOAD.retries || !retryable(err) || canceled) throw err;
          }
        }
      }
    };
    try {
      await Promise.all(Array.from({ length: Math.min(UPLOAD.concurrency, count) }, worker));
      if (canceled) throw new ApiError(0, 'Canceled', 'The upload was canceled.', 'Upload the file again if you still want it.');
      return (await track(send('POST', apiUrl(`${base}/multipart/${encodeURIComponent(uploadId)}/complete`, { key }), JSON.stringify({ parts: etags.map((etag, i) => ({ part: i + 1, etag })) }), { 'content-type': 'application/json' }))) as UploadResult;
    } catch (err) {
      for (const x of inFlight) x.abort();
      // leave no parts behind
      await track(send('DELETE', apiUrl(`${base}/multipart/${encodeURIComponent(uploadId)}`, { key }), null, {})).catch(() => undefined);
      throw err;
    }
  };

  const done = total > UPLOAD.multipartThreshold ? multipart() : single();
  return {
    done,
    cancel() {
      canceled = true;
      for (const x of inFlight) x.abort();
    },
  };
}
