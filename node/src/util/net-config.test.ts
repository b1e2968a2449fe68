import { describe, expect, it } from 'vitest';
import { connectionCaps, DEFAULT_HTTP_LIMITS, DEFAULT_RPC_LIMITS, parseHttpLimits, parseRpcLimits } from './net-config.ts';

describe('HTTP limits configuration', () => {
  it('defaults to timeouts of at most a minute and caps derived from the descriptor limit', () => {
    const l = parseHttpLimits({});
    expect(l).toEqual(DEFAULT_HTTP_LIMITS);
    for (const ms of [l.headerTimeoutMs, l.idleTimeoutMs, l.bodyTimeoutMs]) expect(ms).toBeLessThanOrEqual(60_000);
    expect(connectionCaps(l, 20_000)).toEqual({ global: 10_000, perAddress: 2_500 });
    expect(connectionCaps(l, 512)).toEqual({ global: 256, perAddress: 64 });
    expect(connectionCaps(l, 1 << 20).global).toBe(32_768);
  });

  it('reads every variable and refuses bad values', () => {
    const l = parseHttpLimits({
      SVC_HTTP_HEADER_TIMEOUT: '500ms',
      SVC_HTTP_IDLE_TIMEOUT: '1m',
      SVC_HTTP_BODY_TIMEOUT: '10',
      SVC_HTTP_BODY_MIN_BYTES: '1KiB',
      SVC_HTTP_MAX_CONNECTIONS: '100',
      SVC_HTTP_MAX_CONNECTIONS_PER_ADDRESS: '7',
    });
    expect(l).toEqual({ headerTimeoutMs: 500, idleTimeoutMs: 60_000, bodyTimeoutMs: 10_000, bodyMinBytes: 1024, maxConnections: 100, maxConnectionsPerAddress: 7 });
    expect(connectionCaps(l, 20_000)).toEqual({ global: 100, perAddress: 7 });
    expect(() => parseHttpLimits({ SVC_HTTP_HEADER_TIMEOUT: '10ms' })).toThrow(/SVC_HTTP_HEADER_TIMEOUT: at least 100ms/);
    expect(() => parseHttpLimits({ SVC_HTTP_IDLE_TIMEOUT: '61m' })).toThrow(/at most 1h/);
    expect(() => parseHttpLimits({ SVC_HTTP_BODY_TIMEOUT: 'soon' })).toThrow(/invalid duration/);
    expect(() => parseHttpLimits({ SVC_HTTP_MAX_CONNECTIONS: '0' })).toThrow(/at least 1/);
  });

  it('internode deadlines: a slow peer is found within stall check + ping timeout, under a second by default', () => {
    const r = parseRpcLimits({});
    expect(r).toEqual(DEFAULT_RPC_LIMITS);
    expect(r.stallCheckMs + r.pingTimeoutMs).toBeLessThan(1_000);
    expect(parseRpcLimits({ SVC_RPC_TIMEOUT: '3s', SVC_RPC_STREAM_TIMEOUT: '1m', SVC_RPC_STALL_CHECK: '100ms', SVC_RPC_PING_TIMEOUT: '300ms' })).toEqual({
      callTimeoutMs: 3_000,
      streamTimeoutMs: 60_000,
      stallCheckMs: 100,
      pingTimeoutMs: 300,
    });
    expect(() => parseRpcLimits({ SVC_RPC_PING_TIMEOUT: '5ms' })).toThrow(/SVC_RPC_PING_TIMEOUT: at least 50ms/);
  });
});
