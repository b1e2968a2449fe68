/**
 * Feeds a node's `MetricsHistory` (history.ts) from the diagnostics
 * channels the OTLP bridge reads, so the console's graphs and the exported
 * metrics count the same events.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  capacitySampled,
  type CapacitySampledMessage,
  healTaskFinished,
  type HealTaskFinishedMessage,
  type HttpRequestMessage,
  httpRequestEnd,
  httpRequestStart,
  scannerObject,
} from '../util/diagnostics.ts';
import type { MetricsHistory } from './history.ts';

function declaredLength(headers: IncomingMessage['headers']): number {
  const decoded = headers['x-amz-decoded-content-length'];
  const raw = typeof decoded === 'string' ? decoded : headers['content-length'];
  const n = Number(raw);
  return Number.isSafeInteger(n) && n > 0 ? n : 0;
}

function responseLength(res: ServerResponse): number {
  const n = Number(res.getHeader('content-length'));
  return Number.isSafeInteger(n) && n > 0 ? n : 0;
}

/** Feeds `h` from the diagnostics channels until the returned function is called. */
export function recordHistory(h: MetricsHistory): () => void {
  // the dispatcher publishes request ends only while the start channel has a subscriber
  const onStart = () => undefined;
  const onEnd = (m: unknown) => {
    const r = m as HttpRequestMessage;
    if (r.api !== 's3') return;
    const status = r.res.statusCode;
    h.add('s3Requests');
    if (status >= 500) h.add('s3ServerErrors');
    else if (status >= 400) h.add('s3ClientErrors');
    h.add('s3BytesIn', declaredLength(r.req.headers));
    if (r.req.method !== 'HEAD') h.add('s3BytesOut', responseLength(r.res));
  };
  const onCapacity = (m: unknown) => {
    const c = m as CapacitySampledMessage;
    h.set('capacityUsedBytes', c.usedBytes);
    h.set('capacityTotalBytes', c.totalBytes);
  };
  const onHeal = (m: unknown) => {
    h.add('healTasks');
    if ((m as HealTaskFinishedMessage).result === 'error') h.add('healFailures');
  };
  const onScanned = () => h.add('scannerObjects');
  httpRequestStart.subscribe(onStart);
  httpRequestEnd.subscribe(onEnd);
  capacitySampled.subscribe(onCapacity);
  healTaskFinished.subscribe(onHeal);
  scannerObject.subscribe(onScanned);
  return () => {
    httpRequestStart.unsubscribe(onStart);
    httpRequestEnd.unsubscribe(onEnd);
    capacitySampled.unsubscribe(onCapacity);
    healTaskFinished.unsubscribe(onHeal);
    scannerObject.unsubscribe(onScanned);
  };
}
