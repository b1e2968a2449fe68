/**
 * The remote log destination (`SVC_OBS_LOG_DIRECTORY` holding `://`): the
 * pino records, exactly as they would go to stdout, shipped in batches as
 * newline-delimited JSON (`POST`, `Content-Type: application/x-ndjson`) to
 * that URL, which log shippers such as Vector, Fluent Bit or Logstash accept
 * with their HTTP inputs.
 *
 * Never blocks the writer: `write` appends to a bounded in-memory queue and
 * returns; a background timer sends. When the endpoint is down or slow the
 * batch in flight is dropped, the next attempt backs off (1 s doubling to
 * 30 s), and once the queue is full new records are dropped too. Every
 * dropped record is counted (`dropped`, exported as
 * `svc.log.records.dropped`), and a line on stderr says when shipping stops
 * and resumes.
 */
import { request } from 'undici';

export interface RemoteLogStreamOptions {
  readonly url: string;
  /** Queue bound in bytes (default 8 MiB); records beyond it are dropped. */
  readonly maxQueueBytes?: number;
  /** Largest request body (default 1 MiB). */
  readonly maxBatchBytes?: number;
  /** How often queued records are sent (default 1 s). */
  readonly flushMs?: number;
  /** Time allowed for one request (default 5 s). */
  readonly timeoutMs?: number;
  /** Where shipping failures are reported (default stderr). */
  readonly notice?: (text: string) => void;
}

const MAX_BACKOFF_MS = 30_000;

export class RemoteLogStream {
  readonly url: string;
  readonly #maxQueueBytes: number;
  readonly #maxBatchBytes: number;
  readonly #timeoutMs: number;
  readonly #notice: (text: string) => void;
  readonly #timer: NodeJS.Timeout;
  #queue: string[] = [];
  #queuedBytes = 0;
  #dropped = 0;
  #shipped = 0;
  #sending: Promise<void> | undefined;
  #backoffMs = 0;
  #retryAt = 0;
  #failing = false;
  #closed = false;

  constructor(opts: RemoteLogStreamOptions) {
    const u = new URL(opts.url);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error(`unsupported log destination scheme ${u.protocol} (http or https)`);
    this.url = opts.url;
    this.#maxQueueBytes = opts.maxQueueBytes ?? 8 * 1024 * 1024;
    this.#maxBatchBytes = opts.maxBatchBytes ?? 1024 * 1024;
    this.#timeoutMs = opts.timeoutMs ?? 5_000;
    this.#notice = opts.notice ?? ((t) => process.stderr.write(`${t}\n`));
    this.#timer = setInterval(() => void this.#tick(), opts.flushMs ?? 1_000);
    this.#timer.unref();
  }

  /** Records dropped so far (queue full, or their batch failed). */
  get dropped(): number {
    return this.#dropped;
  }

  /** Records the endpoint accepted so far. */
  get shipped(): number {
    return this.#shipped;
  }

  /** pino destination API: queues one serialized record; never waits. */
  write(line: string): boolean {
    if (this.#closed || this.#queuedBytes + line.length > this.#maxQueueBytes) {
      this.#dropped++;
      return true;
    }
    this.#queue.push(line);
    this.#queuedBytes += line.length;
    return true;
  }

  /** Sends what is queued now (ignoring any backoff); resolves when done or failed. */
  async flush(): Promise<void> {
    await this.#sending;
    this.#retryAt = 0;
    while (this.#queue.length > 0 && this.#retryAt === 0) await this.#send();
  }

  /** Stops the timer after a last flush bounded by `timeoutMs`; later writes are dropped. */
  async close(timeoutMs = 2_000): Promise<void> {
    clearInterval(this.#timer);
    let t: NodeJS.Timeout | undefined;
    await Promise.race([
      this.flush(),
      new Promise<void>((r) => {
        t = setTimeout(r, timeoutMs);
      }),
    ]);
    clearTimeout(t);
    this.#closed = true;
    this.#dropped += this.#queue.length;
    this.#queue = [];
    this.#queuedBytes = 0;
  }

  async #tick(): Promise<void> {
    if (this.#sending || this.#queue.length === 0 || Date.now() < this.#retryAt) return;
    await this.#send();
  }

  #send(): Promise<void> {
    if (this.#sending) return this.#sending;
    let bytes = 0;
    let n = 0;
    while (n < this.#queue.length && (n === 0 || bytes + this.#queue[n]!.length <= this.#maxBatchBytes)) bytes += this.#queue[n++]!.length;
    const batch = this.#queue.splice(0, n);
    this.#queuedBytes -= bytes;
    const body = batch.map((l) => (l.endsWith('\n') ? l : `${l}\n`)).join('');
    this.#sending = this.#post(body).then(
      () => {
        this.#shipped += batch.length;
        this.#backoffMs = 0;
        this.#retryAt = 0;
        if (this.#failing) {
          this.#failing = false;
          this.#notice(`svc: remote log destination ${this.url} answers again; ${this.#dropped} log records dropped so far`);
        }
      },
      (err: unknown) => {
        this.#dropped += batch.length;
        this.#backoffMs = Math.min(MAX_BACKOFF_MS, this.#backoffMs === 0 ? 1_000 : this.#backoffMs * 2);
        this.#retryAt = Date.now() + this.#backoffMs;
        if (!this.#failing) {
          this.#failing = true;
          this.#notice(`svc: remote log destination ${this.url} failed (${err instanceof Error ? err.message : String(err)}); dropping log records until it answers`);
        }
      },
    ).finally(() => {
      this.#sending = undefined;
    });
    return this.#sending;
  }

  async #post(body: string): Promise<void> {
    const res = await request(this.url, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/x-ndjson' },
      headersTimeout: this.#timeoutMs,
      bodyTimeout: this.#timeoutMs,
      signal: AbortSignal.timeout(this.#timeoutMs),
    });
    await res.body.dump();
    if (res.statusCode < 200 || res.statusCode >= 300) throw new Error(`HTTP ${res.statusCode}`);
  }
}
