import { TraceFlags } from '@opentelemetry/api';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanProcessor } from '@opentelemetry/sdk-trace';
import { describe, expect, it } from 'vitest';
import { boundedSpanProcessor, ExportBacklog } from './backlog.ts';

const span = (sampled: boolean) => ({ spanContext: () => ({ traceId: '1'.repeat(32), spanId: '2'.repeat(16), traceFlags: sampled ? TraceFlags.SAMPLED : TraceFlags.NONE }) }) as unknown as ReadableSpan;

describe('export backlog', () => {
  it('admits up to the cap, counts the rest as dropped; what the exporter receives leaves the queue; exports in flight until they call back', () => {
    const b = new ExportBacklog(3);
    const passed: ReadableSpan[] = [];
    const inner: SpanProcessor = { onStart: () => undefined, onEnd: (s) => passed.push(s), forceFlush: async () => undefined, shutdown: async () => undefined };
    const p = boundedSpanProcessor(inner, b);
    for (let i = 0; i < 5; i++) p.onEnd(span(true));
    p.onEnd(span(false)); // unsampled: never queued, never dropped
    expect(passed).toHaveLength(3);
    expect(b.counts()).toMatchObject({ queued: 3, capacity: 3, dropped: 2, handed: 0, exportsInFlight: 0 });

    const pending: ((r: ExportResult) => void)[] = [];
    const exporter = b.exporter<ReadableSpan>({ export: (_items, done) => pending.push(done), shutdown: async () => undefined });
    const results: ExportResult[] = [];
    exporter.export(passed.splice(0, 2), (r) => results.push(r));
    expect(b.counts()).toMatchObject({ queued: 1, handed: 2, exportsInFlight: 1 });
    p.onEnd(span(true));
    p.onEnd(span(true));
    p.onEnd(span(true));
    expect(b.counts()).toMatchObject({ queued: 3, dropped: 3 });
    pending[0]!({ code: ExportResultCode.FAILED });
    pending[0]!({ code: ExportResultCode.FAILED }); // a second call back counts once
    expect(b.counts().exportsInFlight).toBe(0);
    expect(results).toHaveLength(2);
  });
});
