/**
 * A selection of objects downloaded as one ZIP. The page posts the keys
 * (up to 1000) and gets a one-time ticket, then the browser downloads
 * `zip/<ticket>` as an ordinary link, so the archive streams to disk like
 * any download: each object is read from the node in turn and written
 * stored (not recompressed: objects are usually compressed already), with
 * ZIP64 where sizes need it (yazl). A failure mid-way cuts the download
 * rather than hand over a short archive that looks whole.
 *
 * A folder (a prefix) is the same download: the node lists every key under
 * it when the ticket is asked for (so a folder over the limit is refused
 * before anything downloads) and the archive holds them under the folder's
 * own name, their paths below it kept (`album/2024/a.jpg`); zero-byte
 * folder markers (`album/empty/`) become directory entries.
 *
 * Tickets live in this node's memory for five minutes, belong to the
 * session that asked, and are used once; at most 256 wait at a time.
 */
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { finished, pipeline } from 'node:stream/promises';
import type { Clock } from '../../util/clock.ts';
import { SvcError } from '../../util/errors.ts';
import type { Logger } from '../../util/logger.ts';
import { attachmentDisposition, DOWNLOAD_HEADERS } from './assets.ts';
import * as s3 from './s3-calls.ts';
import type { Session, SessionCredentials } from './sessions.ts';
import { type Upstream, upstreamHeader } from './upstream.ts';

const TICKET_MS = 5 * 60_000;
const MAX_TICKETS = 256;
export const MAX_ZIP_KEYS = 1000;

/** What one ZIP download holds. */
export interface ZipSelection {
  readonly keys: readonly string[];
  /** Names are taken relative to this (the folder the selection was made in). */
  readonly base: string;
  /** The archive's file name (`<bucket>.zip`, or `<folder>.zip` for a folder). */
  readonly name: string;
  /** Keys written as directory entries, not fetched (a folder's zero-byte markers). */
  readonly dirs?: ReadonlySet<string>;
}

interface Ticket extends ZipSelection {
  readonly session: Session;
  readonly bucket: string;
  readonly expiresAt: number;
}

export class ZipTickets {
  readonly #clock: Clock;
  readonly #tickets = new Map<string, Ticket>();

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  issue(session: Session, bucket: string, selection: ZipSelection): string {
    const now = this.#clock.now();
    for (const [t, v] of this.#tickets) if (v.expiresAt <= now) this.#tickets.delete(t);
    while (this.#tickets.size >= MAX_TICKETS) this.#tickets.delete(this.#tickets.keys().next().value!);
    const ticket = randomBytes(18).toString('base64url');
    this.#tickets.set(ticket, { ...selection, session, bucket, expiresAt: now + TICKET_MS });
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

/**
 * Every key under the folder `prefix` (recursive, current versions), up to
 * MAX_ZIP_KEYS; a folder holding more is refused with what to do instead.
 */
export async function folderSelection(up: Upstream, cred: SessionCredentials, bucket: string, prefix: string): Promise<ZipSelection & { readonly bytes: number }> {
  if (prefix === '' || !prefix.endsWith('/')) throw new SvcError('InvalidArgument', 'give the folder as its prefix, ending in /');
  const keys: string[] = [];
  const dirs = new Set<string>();
  let bytes = 0;
  let token = '';
  do {
    const page = await s3.listObjects(up, cred, bucket, { prefix, token, maxKeys: 1000, recursive: true });
    for (const o of page.objects) {
      if (keys.length === MAX_ZIP_KEYS) {
        throw new SvcError('InvalidArgument', `the folder ${prefix} holds more than ${MAX_ZIP_KEYS} objects, the most one ZIP takes: download the folders inside it one by one, or copy it with an S3 client (aws s3 cp --recursive, rclone copy)`);
      }
      keys.push(o.key);
      bytes += o.size;
      if (o.key.endsWith('/') && o.size === 0) dirs.add(o.key);
    }
    token = page.truncated ? page.nextToken : '';
  } while (token !== '');
  if (keys.length === 0) throw new SvcError('InvalidArgument', `nothing is stored under ${prefix}: there is nothing to download`);
  // the folder itself is the archive's top directory: names are taken from its parent
  const parent = prefix.slice(0, prefix.slice(0, -1).lastIndexOf('/') + 1);
  const folder = entryName(prefix, parent);
  return { keys, dirs, base: parent, name: `${folder}.zip`, bytes };
}

/** Streams the ticket's objects as a ZIP into `res`. */
export async function streamZip(o: { up: Upstream; session: Session; ticket: Ticket; res: ServerResponse; signal: AbortSignal; logger: Logger }): Promise<void> {
  const { ticket, res } = o;
  // yazl is loaded with the first ZIP download (idle memory).
  const { ZipFile } = await import('yazl');
  const zip = new ZipFile();
  res.writeHead(200, {
    'content-type': 'application/zip',
    'content-disposition': attachmentDisposition(ticket.name),
    ...DOWNLOAD_HEADERS,
  });
  // settles when the archive is written out (or fails: yazl refusing an entry, the browser gone)
  const written = pipeline(zip.outputStream, res);
  written.catch(() => undefined);
  const used = new Set<string>();
  try {
    for (const key of ticket.keys) {
      const base = entryName(key, ticket.base);
      let name = base;
      for (let i = 2; used.has(name); i++) name = `${base} (${i})`;
      used.add(name);
      if (ticket.dirs?.has(key) === true) {
        zip.addEmptyDirectory(name);
        continue;
      }
      const obj = await s3.getObject(o.up, o.session.credentials, ticket.bucket, key, { signal: o.signal });
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
