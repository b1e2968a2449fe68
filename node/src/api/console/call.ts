/**
 * One upstream call: send (a connection failure or timeout becomes an
 * `UpstreamError` the page can explain) and read an error answer (S3 XML,
 * admin JSON, or nothing for HEAD) into the API's code and message.
 */
import { errors as undiciErrors } from 'undici';
import { SvcError } from '../../util/errors.ts';
import { parseXml, xmlRawText, xmlText } from '../s3/xml.ts';
import { UpstreamError } from './console-errors.ts';
import type { SessionCredentials } from './sessions.ts';
import { type Upstream, type UpstreamRequest, type UpstreamResponse, upstreamHeader } from './upstream.ts';

const CONTROL_TIMEOUT_MS = 30_000;

/** Sends one request; a connection failure becomes `UpstreamError('Unreachable')`. */
export async function send(up: Upstream, cred: SessionCredentials, r: UpstreamRequest): Promise<UpstreamResponse> {
  try {
    return await up.request(cred, { ...r, signal: r.signal ?? AbortSignal.timeout(CONTROL_TIMEOUT_MS) });
  } catch (err) {
    if (err instanceof SvcError || err instanceof UpstreamError) throw err;
    if ((err as Error).name === 'AbortError' || (err as Error).name === 'TimeoutError') {
      throw new UpstreamError(504, 'Unreachable', 'the node did not answer in time');
    }
    const code = (err as { code?: string }).code ?? (err instanceof undiciErrors.UndiciError ? err.name : 'network error');
    throw new UpstreamError(502, 'Unreachable', `the console could not reach the node's S3 listener (${code})`);
  }
}

/** The error an API answered with (XML for S3, JSON for admin, none for HEAD). */
export async function failure(res: UpstreamResponse): Promise<UpstreamError> {
  let text = '';
  try {
    text = await res.body.text();
  } catch {
    // a body cut short: the status is all there is
  }
  return failureOf(res.status, upstreamHeader(res.headers, 'x-svc-readiness-pending'), text);
}

/** Parses an error document (pure). */
export function failureOf(status: number, pending: string | undefined, text: string): UpstreamError {
  let code = status === 404 ? 'NoSuchKey' : status === 403 ? 'AccessDenied' : status === 503 ? 'ServiceUnavailable' : `HTTP${status}`;
  let message = text.trim() === '' ? (status === 404 ? 'not found' : status === 403 ? 'access denied' : `the node answered ${status}`) : text.slice(0, 300);
  try {
    if (text.trimStart().startsWith('{')) {
      const j = JSON.parse(text) as { Code?: unknown; Message?: unknown; code?: unknown; message?: unknown };
      const c = j.Code ?? j.code;
      const m = j.Message ?? j.message;
      if (typeof c === 'string') code = c;
      if (typeof m === 'string') message = m;
    } else if (text.includes('<Error')) {
      const e = parseXml(text, 'Error');
      code = xmlText(e, 'Code') ?? code;
      message = xmlRawText(e, 'Message') ?? message;
    }
  } catch {
    // not a document we know (a proxy page): keep the raw text
  }
  return new UpstreamError(status, code, message, pending);
}
