/**
 * A selection of objects downloaded as one ZIP. The page posts the keys
 * (up to 1000) and gets a one-time ticket, then the browser downloads
 * `zip/<ticket>` as an ordinary link, so the archive streams to disk like
 * any download: each object is read from the node in turn and written
 * stored (not recompressed: objects are usually compressed already), with
 * ZIP64 where sizes need it (yazl). A failure mid-way cuts the download
 * rather than hand over a short archive that looks whole.
 *
 * Tickets live in this node's memory for five minutes, belong to the
 * session that asked, and are used once; at most 256 wait at a time.
 */
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { finished, pipeline } from 'node:stream/promises';
import { ZipFile } from 'yazl';
import type { Clock } from '../../util/clock.ts';
import { SvcError } from '../../util/errors.ts';
import type { Logger } from '../../util/logger.ts';
import { DOWNLOAD_HEADERS } from './assets.ts';
import * as s3 from './s3-calls.ts';
import type { Session } from './sessions.ts';
import { type Upstream, upstreamHeader } from './upstream.ts';

const TICKET_MS = 5 * 60_000;
const MAX_TICKETS = 256;
export const MAX_ZIP_KEYS = 1000;

interface Ticket {
  readonly session: Session;
  readonly bucket: string;
  readonly keys: readonly string[];
  /** Names are taken relative to this (the folder the selection was made in). */
  readonly base: string;
  readonly expiresAt: number;
}

export class ZipTickets {
  readonly #clock: Clock;
  readonly #tickets = new Map<string, Ticket>();

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  issue(session: Session, bucket: string, keys: readonly string[], base: string): string {
    const now = this.#clock.now();
    for (const [t, v] of this.#tickets) if (v.expiresAt <= now) this.#tickets.delete(t);
    while (this.#tickets.size >= MAX_TICKETS) this.#tickets.delete(this.#tickets.keys().next().value!);
    const ticket = randomBytes(18).toString('base64url');
    this.#tickets.set(ticket, { session, bucket, keys, base, expiresAt: now + TICKET_MS });
    return ticket;
  }

  /** The ticket's selection, once; refused for another session, another bucket or after it expired. */
  take(ticket: string, session: Session, bucket: string): Ticket {
    const t = this.#tickets.get(ticket);
    this.#tickets.delete(ticket);
    if (t === undefined || t.session !== session || t.bucket !== bucket || t.expiresAt <= this.#clock.now()) {
      throw new SvcError('InvalidArgument', 'this download link has expired or was used already; select the objects and download again');
    }
    return t;
  }
}

/** The name of `key` inside the archive: relative to the folder, never absolute, never climbing out. */
export function entryName(key: string, base: string): string {
  const rel = key.startsWith(base) ? key.slice(base.length) : key;
  const parts = rel.split('/').filter((p) => p !== '' && p !== '.' && p !== '..');
  return parts.join('/') || 'object';
}

/** Streams the ticket's objects as a ZIP into `res`. */
export async function streamZip(o: { up: Upstream; session: Session; ticket: Ticket; res: ServerResponse; signal: AbortSignal; logger: Logger }): Promise<void> {
  const { ticket, res } = o;
  const zip = new ZipFile();
  res.writeHead(200, {
    'content-type': 'application/zip',
    'content-disposition': `attachment; filename="${ticket.bucket}.zip"`,
    ...DOWNLOAD_HEADERS,
  });
  // settles when the archive is written out (or fails: yazl refusing an entry, the browser gone)
  const written = pipeline(zip.outputStream, res);
  written.catch(() => undefined);
  const used = new Set<string>();
  try {
    for (const key of ticket.keys) {
      const obj = await s3.getObject(o.up, o.session.credentials, ticket.bucket, key, { signal: o.signal });
      const base = entryName(key, ticket.base);
      let name = base;
      for (let i = 2; used.has(name); i++) name = `${base} (${i})`;
      used.add(name);
      const size = Number(upstreamHeader(obj.headers, 'content-length'));
      const modified = Date.parse(upstreamHeader(obj.headers, 'last-modified') ?? '');
      const read = finished(obj.body);
      zip.addReadStream(obj.body, name, {
        compress: false,
        ...(Number.isSafeInteger(size) ? { size } : {}),
        ...(Number.isFinite(modified) ? { mtime: new Date(modified) } : {}),
      });
      // one object at a time: the next is asked for once this one went into the archive
      await Promise.race([read, written]);
    }
    zip.end();
    await written;
  } catch (err) {
    if (!o.signal.aborted) o.logger.warn({ event: 'console_zip_interrupted', bucket: ticket.bucket, entries: used.size, err: String(err) }, 'console ZIP download cut short');
    res.destroy();
  }
}
