/**
 * The audit log: one record per S3 and admin request — who (access key,
 * client address, user agent), what (operation, bucket, object), the
 * outcome (status, error code) and the latency — sent to webhook targets
 * (`SVC_AUDIT_WEBHOOK_*`, MinIO's names) as MinIO's audit entry JSON, one
 * POST per record.
 *
 * Records go through the target's persistent queue like events, written in
 * batches (every 100 ms or 256 records, one fsync per batch) rather than
 * one fsync per request: a crash of the node loses at most the last 100 ms
 * of records, an outage of the receiver loses none (up to the queue's
 * limit; past it records are dropped and counted, never the request).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { auditTagOf } from './audit-tag.ts';
import { requestOrigin } from './request-origin.ts';
import { type PeriodicProgress, periodicWorker, sleepUnlessAborted, Worker, type WorkerTask, type WorkResult } from '../util/worker.ts';
import type { Clock } from '../util/clock.ts';
import type { Logger } from '../util/logger.ts';
import { QueueStore } from '../notify/queue-store.ts';
import type { WebhookTarget } from '../notify/targets/webhook.ts';

export interface AuditEntry {
  version: '1';
  deploymentid: string;
  time: string;
  trigger: 'incoming';
  api: {
    name: string;
    bucket?: string;
    object?: string;
    status: string;
    statusCode: number;
    /** Error code of a refused request (`AccessDenied`, `NoSuchKey`, …). */
    errorCode?: string;
    /** Request body bytes as declared (`Content-Length`, or the decoded length of an aws-chunked body). */
    rx: number;
    /** Response body bytes as declared (`Content-Length`; 0 for a streamed answer without one). */
    tx: number;
    timeToResponse: string;
    timeToResponseInNS: string;
  };
  remotehost: string;
  requestID: string;
  userAgent: string;
  accessKey: string;
}

const FLUSH_MS = 100;
const FLUSH_COUNT = 256;

/** One audit webhook: its queue and the worker delivering it. */
class AuditSink implements WorkerTask<{ queued: number; delivered: number; dropped: number; lastError?: string }> {
  readonly name: string;
  readonly worker: Worker<{ queued: number; delivered: number; dropped: number; lastError?: string }>;
  readonly #target: WebhookTarget;
  readonly #store: QueueStore<AuditEntry>;
  readonly #clock: Clock;
  readonly #log: Logger;
  #pending: AuditEntry[] = [];
  #flushing: Promise<void> | undefined;
  #delivered = 0;
  #dropped = 0;
  #lastError: string | undefined;
  #retryAt = 0;
  #backoff = 0;

  constructor(target: WebhookTarget, store: QueueStore<AuditEntry>, clock: Clock, log: Logger) {
    this.name = `audit:${target.id}`;
    this.#target = target;
    this.#store = store;
    this.#clock = clock;
    this.#log = log;
    this.worker = new Worker(this, { clock, logger: log, idleMs: 5_000 });
  }

  add(e: AuditEntry): void {
    this.#pending.push(e);
    if (this.#pending.length >= FLUSH_COUNT) void this.flush();
  }

  /** Writes what is pending to the queue (one batch at a time). */
  async flush(): Promise<void> {
    await this.#flushing;
    if (this.#pending.length === 0) return;
    const batch = this.#pending;
    this.#pending = [];
    this.#flushing = (async () => {
      const room = Math.max(0, this.#store.limit - this.#store.length);
      const take = batch.slice(0, room);
      if (take.length < batch.length) {
        this.#dropped += batch.length - take.length;
        this.#log.warn({ event: 'audit_queue_full', target: this.#target.id, dropped: batch.length - take.length }, 'audit queue full: records dropped');
      }
      try {
        if (take.length > 0) await this.#store.put(take);
      } catch (err) {
        this.#dropped += take.length;
        this.#log.error({ event: 'audit_queue_write_failed', target: this.#target.id, err }, 'audit records could not be queued');
      }
      this.worker.wake();
    })();
    await this.#flushing;
    this.#flushing = undefined;
  }

  async work(signal: AbortSignal): Promise<WorkResult> {
    if (this.#clock.now() < this.#retryAt) return 'idle';
    const batch = await this.#store.peek(64);
    if (batch.length === 0) return 'idle';
    for (const e of batch) {
      if (signal.aborted) return 'busy';
      try {
        await this.#target.post(JSON.stringify(e.value));
      } catch (err) {
        this.#lastError = err instanceof Error ? err.message : String(err);
        this.#backoff = this.#backoff === 0 ? 1_000 : Math.min(this.#backoff * 2, 60_000);
        this.#retryAt = this.#clock.now() + this.#backoff;
        this.#log.warn({ event: 'audit_delivery_failed', target: this.#target.id, err: this.#lastError, retryInMs: this.#backoff }, 'audit webhook did not take a record; retrying');
        return 'idle';
      }
      await this.#store.remove([e.id]);
      this.#delivered++;
      this.#backoff = 0;
    }
    return 'busy';
  }

  async waitForWork(signal: AbortSignal): Promise<void> {
    const wait = this.#retryAt > this.#clock.now() ? this.#retryAt - this.#clock.now() : 5_000;
    await sleepUnlessAborted(this.#clock, wait, signal);
  }

  progress() {
    return { queued: this.#store.length, delivered: this.#delivered, dropped: this.#dropped, ...(this.#lastError !== undefined ? { lastError: this.#lastError } : {}) };
  }

  async close(): Promise<void> {
    await this.flush();
    await this.worker.stop();
    await this.#target.close();
  }
}

export class AuditLog {
  readonly #sinks: AuditSink[] = [];
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #deploymentId: () => string;
  /** Writes what each webhook's sink gathered to its queue every `FLUSH_MS`. */
  readonly flusher: Worker<PeriodicProgress>;
  #closing: Promise<void> | undefined;

  constructor(o: { clock: Clock; logger: Logger; deploymentId: () => string }) {
    this.#clock = o.clock;
    this.#log = o.logger;
    this.#deploymentId = o.deploymentId;
    this.flusher = periodicWorker({
      name: 'audit-flush',
      everyMs: FLUSH_MS,
      atStart: false,
      tick: () => {
        for (const s of this.#sinks) void s.flush();
      },
      clock: o.clock,
      logger: o.logger,
    });
    this.flusher.start();
  }

  /** The flush loop and every webhook's delivery worker. */
  workers(): Worker<unknown>[] {
    return [this.flusher, ...this.#sinks.map((s) => s.worker)];
  }

  get enabled(): boolean {
    return this.#sinks.length > 0;
  }

  async addWebhook(target: WebhookTarget, queue: { dir: string; limit: number }): Promise<void> {
    const store = new QueueStore<AuditEntry>(queue.dir, queue.limit);
    await store.open();
    const sink = new AuditSink(target, store, this.#clock, this.#log);
    this.#sinks.push(sink);
    sink.worker.start();
  }

  /** Wraps an HTTP handler: every request it serves is recorded when its response is done. */
  wrap(handler: (req: IncomingMessage, res: ServerResponse) => void): (req: IncomingMessage, res: ServerResponse) => void {
    return (req, res) => {
      if (this.#sinks.length === 0) {
        handler(req, res);
        return;
      }
      const t0 = process.hrtime.bigint();
      const time = new Date(this.#clock.now()).toISOString();
      // Body bytes as declared (the decoded length of an aws-chunked body): reading the stream here would take it from the handler.
      const declared = Number(req.headers['x-amz-decoded-content-length'] ?? req.headers['content-length'] ?? 0);
      const rx = Number.isFinite(declared) ? declared : 0;
      res.once('close', () => {
        const ns = process.hrtime.bigint() - t0;
        const tag = auditTagOf(req);
        const status = res.statusCode;
        const len = Number(res.getHeader('content-length') ?? 0);
        const entry: AuditEntry = {
          version: '1',
          deploymentid: this.#deploymentId(),
          time,
          trigger: 'incoming',
          api: {
            name: tag.api ?? 'Unknown',
            ...(tag.bucket ? { bucket: tag.bucket } : {}),
            ...(tag.object ? { object: tag.object } : {}),
            status: res.writableFinished ? (status < 400 ? 'OK' : 'Error') : 'Canceled',
            statusCode: status,
            ...(tag.errorCode ? { errorCode: tag.errorCode } : {}),
            rx,
            tx: Number.isFinite(len) ? len : 0,
            timeToResponse: `${ns}ns`,
            timeToResponseInNS: String(ns),
          },
          remotehost: requestOrigin(req).sourceIp,
          requestID: String(res.getHeader('x-amz-request-id') ?? ''),
          userAgent: req.headers['user-agent'] ?? '',
          accessKey: tag.accessKey ?? '',
        };
        for (const s of this.#sinks) s.add(entry);
      });
      handler(req, res);
    };
  }

  status(): { target: string; queued: number; delivered: number; dropped: number; lastError?: string }[] {
    return this.#sinks.map((s) => ({ target: s.name, ...s.progress() }));
  }

  /** Flushes and stops every webhook; once (later calls wait for the first). */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    await this.flusher.stop();
    for (const s of this.#sinks) await s.close();
  }
}
