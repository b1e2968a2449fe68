/**
 * What an export pipeline holds, counted: the records a batch processor has
 * queued, the ones dropped at the queue's cap, and the exports in flight.
 *
 * The SDK's batch processors bound their queues but keep the count to
 * themselves. Here a thin processor in front of each batch processor admits a
 * finished record only while the queue is below its capacity (the same cap the
 * batch processor has, so it never drops on its own) and counts the rest as
 * dropped, and a thin exporter behind it counts what was handed over. Queued =
 * admitted − handed over, exactly. `telemetry.ts` exports these as metrics, so
 * a collector sees when this node's traces or logs are being lost, and the
 * tests can prove the memory bound by counting instead of by timing.
 */
import { type Context, TraceFlags } from '@opentelemetry/api';
import type { ExportResult } from '@opentelemetry/core';
import type { LogRecordProcessor, ReadWriteLogRecord } from '@opentelemetry/sdk-logs';
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace';

export interface BacklogCounts {
  /** Records waiting in the batch processor's queue. */
  readonly queued: number;
  /** The queue's cap. */
  readonly capacity: number;
  /** Records refused because the queue was full, since start. */
  readonly dropped: number;
  /** Records the exporter received, since start. */
  readonly handed: number;
  /** Export calls that have not called back yet. */
  readonly exportsInFlight: number;
}

/** The shape SpanExporter and LogRecordExporter share. */
interface Exporter<T> {
  export(items: T[], done: (r: ExportResult) => void): void;
  shutdown(): Promise<void>;
  forceFlush?(): Promise<void>;
}

export class ExportBacklog {
  readonly capacity: number;
  #admitted = 0;
  #handed = 0;
  #dropped = 0;
  #inFlight = 0;

  constructor(capacity: number) {
    this.capacity = capacity;
  }

  /** A finished record arrives: true when it may be queued, false when the queue is full (counted as dropped). */
  admit(): boolean {
    if (this.#admitted - this.#handed >= this.capacity) {
      this.#dropped++;
      return false;
    }
    this.#admitted++;
    return true;
  }

  /** Wraps an exporter so that what it receives leaves the queue's count. */
  exporter<T>(inner: Exporter<T>): Required<Exporter<T>> {
    return {
      export: (items, done) => {
        this.#handed += items.length;
        this.#inFlight++;
        let called = false;
        inner.export(items, (r) => {
          if (!called) this.#inFlight--;
          called = true;
          done(r);
        });
      },
      shutdown: () => inner.shutdown(),
      forceFlush: () => inner.forceFlush?.() ?? Promise.resolve(),
    };
  }

  counts(): BacklogCounts {
    return { queued: this.#admitted - this.#handed, capacity: this.capacity, dropped: this.#dropped, handed: this.#handed, exportsInFlight: this.#inFlight };
  }
}

/** In front of a BatchSpanProcessor: sampled spans pass while its queue has room. */
export function boundedSpanProcessor(inner: SpanProcessor, backlog: ExportBacklog): SpanProcessor {
  return {
    onStart: (span: Span, ctx: Context) => inner.onStart(span, ctx),
    onEnd: (span: ReadableSpan) => {
      // the batch processor ignores unsampled spans: they never enter the queue
      if ((span.spanContext().traceFlags & TraceFlags.SAMPLED) === 0) return;
      if (backlog.admit()) inner.onEnd(span);
    },
    forceFlush: () => inner.forceFlush(),
    shutdown: () => inner.shutdown(),
  };
}

/** In front of a BatchLogRecordProcessor: records pass while its queue has room. */
export function boundedLogRecordProcessor(inner: LogRecordProcessor, backlog: ExportBacklog): LogRecordProcessor {
  return {
    onEmit: (record: ReadWriteLogRecord, ctx?: Context) => {
      if (backlog.admit()) inner.onEmit(record, ctx);
    },
    forceFlush: () => inner.forceFlush(),
    shutdown: () => inner.shutdown(),
  };
}
