import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../util/clock.ts';
import { SvcError } from '../util/errors.ts';
import { RPC_TOKEN_VALIDITY_MS, RpcAuth } from './rpc-auth.ts';

function deniedReason(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(SvcError);
    expect((err as SvcError).code).toBe('AccessDenied');
    return String((err as SvcError).details?.['reason']);
  }
  throw new Error('expected AccessDenied');
}

const ARGS = Buffer.from('["bkt","obj"]');

describe('RpcAuth', () => {
  const clock = new ManualClock(1_700_000_000_000);
  const auth = new RpcAuth('root:secret', clock);

  it('accepts a token it signed for these arguments and returns the caller node id', () => {
    const token = auth.sign('POST', '/svc/rpc/v1/d1/readAll', 'http://127.0.0.1:9000', ARGS);
    const v = auth.verify('POST', '/svc/rpc/v1/d1/readAll', token);
    expect(v.nodeId).toBe('http://127.0.0.1:9000');
    auth.checkArgs(v, Buffer.from(ARGS));
    auth.checkArgs(auth.verify('POST', '/p', auth.sign('POST', '/p', 'n', new Uint8Array(0))), new Uint8Array(0));
  });

  it('binds the token to the arguments: the same call with other arguments is refused', () => {
    const v = auth.verify('POST', '/svc/rpc/v1/d1/delete', auth.sign('POST', '/svc/rpc/v1/d1/delete', 'n1', ARGS));
    expect(deniedReason(() => auth.checkArgs(v, Buffer.from('["bkt","other"]')))).toBe('arguments do not match the token');
    expect(deniedReason(() => auth.checkArgs(v, new Uint8Array(0)))).toBe('arguments do not match the token');
    // Swapping in the digest of other arguments breaks the MAC.
    const parts = auth.sign('POST', '/p', 'n1', ARGS).split('.');
    parts[3] = createHash('sha256').update('["bkt","other"]').digest('base64url');
    expect(deniedReason(() => auth.verify('POST', '/p', parts.join('.')))).toBe('bad signature');
  });

  it('refuses a missing or malformed token', () => {
    expect(deniedReason(() => auth.verify('POST', '/p', undefined))).toBe('missing token');
    expect(deniedReason(() => auth.verify('POST', '/p', ''))).toBe('missing token');
    expect(deniedReason(() => auth.verify('POST', '/p', 'Bearer abc'))).toBe('malformed token');
    expect(deniedReason(() => auth.verify('POST', '/p', 'v2.a.notanumber.b.c'))).toBe('malformed token');
    expect(deniedReason(() => auth.verify('POST', '/p', 'v2.a.1.short.c'))).toBe('malformed token');
    // the previous format (no argument digest) is not accepted
    expect(deniedReason(() => auth.verify('POST', '/p', 'v1.a.1.b'))).toBe('malformed token');
  });

  it('refuses a token signed with another secret', () => {
    const other = new RpcAuth('root:other', clock);
    const token = other.sign('POST', '/p', 'n1', ARGS);
    expect(deniedReason(() => auth.verify('POST', '/p', token))).toBe('bad signature');
  });

  it('binds the token to method, path and node id', () => {
    const token = auth.sign('POST', '/svc/rpc/v1/d1/deleteFile', 'n1', ARGS);
    expect(deniedReason(() => auth.verify('GET', '/svc/rpc/v1/d1/deleteFile', token))).toBe('bad signature');
    expect(deniedReason(() => auth.verify('POST', '/svc/rpc/v1/d2/deleteFile', token))).toBe('bad signature');
    const parts = token.split('.');
    parts[1] = Buffer.from('n2').toString('base64url');
    expect(deniedReason(() => auth.verify('POST', '/svc/rpc/v1/d1/deleteFile', parts.join('.')))).toBe('bad signature');
    parts[1] = Buffer.from('n1').toString('base64url');
    parts[2] = String(Number(parts[2]) + 1);
    expect(deniedReason(() => auth.verify('POST', '/svc/rpc/v1/d1/deleteFile', parts.join('.')))).toBe('bad signature');
  });

  it('refuses a token outside the validity window, either way', async () => {
    const c = new ManualClock(1_000_000_000);
    const a = new RpcAuth('s', c);
    const token = a.sign('POST', '/p', 'n', ARGS);
    await c.advance(RPC_TOKEN_VALIDITY_MS);
    expect(a.verify('POST', '/p', token)).toMatchObject({ nodeId: 'n', skewMs: RPC_TOKEN_VALIDITY_MS });
    await c.advance(1);
    // The signature is good, so who it is and how far off its clock is are known: said, not just "expired".
    expect(deniedReason(() => a.verify('POST', '/p', token))).toBe('clock skew');
    try {
      a.verify('POST', '/p', token);
    } catch (err) {
      expect((err as SvcError).details).toMatchObject({ nodeId: 'n', skewMs: RPC_TOKEN_VALIDITY_MS + 1 });
      expect((err as SvcError).message).toMatch(/the token of n is 300 s old/);
    }

    const early = new RpcAuth('s', new ManualClock(c.now() + RPC_TOKEN_VALIDITY_MS + 1));
    expect(deniedReason(() => a.verify('POST', '/p', early.sign('POST', '/p', 'n', ARGS)))).toBe('clock skew');
  });

  it('needs a non-empty secret', () => {
    expect(() => new RpcAuth('', clock)).toThrow(SvcError);
  });

  it('during a rotation a node signs with both secrets and accepts either; after the grace period only the new one', () => {
    let rotated: string[] = ['new', 'old'];
    const switched = new RpcAuth(() => rotated, clock);
    const notYet = new RpcAuth('old', clock);
    // A peer that switched and one that has not authenticate each other, both ways.
    const fromSwitched = switched.sign('POST', '/p', 'n1', ARGS);
    expect(fromSwitched.split('.')).toHaveLength(6);
    expect(notYet.verify('POST', '/p', fromSwitched).nodeId).toBe('n1');
    expect(switched.verify('POST', '/p', notYet.sign('POST', '/p', 'n2', ARGS)).nodeId).toBe('n2');
    // Both switched: one MAC again; the old secret alone is refused.
    rotated = ['new'];
    const done = switched.sign('POST', '/p', 'n1', ARGS);
    expect(done.split('.')).toHaveLength(5);
    expect(new RpcAuth('new', clock).verify('POST', '/p', done).nodeId).toBe('n1');
    expect(deniedReason(() => notYet.verify('POST', '/p', done))).toBe('bad signature');
    expect(deniedReason(() => switched.verify('POST', '/p', notYet.sign('POST', '/p', 'n2', ARGS)))).toBe('bad signature');
    // More than two MACs is malformed.
    expect(deniedReason(() => switched.verify('POST', '/p', `${fromSwitched}.x`))).toBe('malformed token');
  });
});
