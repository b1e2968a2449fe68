import { describe, expect, it } from 'vitest';
import { addResolvedLocalHosts, localHostSet } from './local-hosts.ts';

describe('local hosts', () => {
  it('a specific bind address is the node identity; a wildcard bind is every interface', () => {
    expect([...localHostSet('127.0.0.2')]).toEqual(['127.0.0.2']);
    expect([...localHostSet('[::1]')]).toEqual(['::1']);
    const any = localHostSet('');
    expect(any.has('127.0.0.1')).toBe(true);
    expect(any.has('localhost')).toBe(true);
    expect(localHostSet('0.0.0.0').has('127.0.0.1')).toBe(true);
  });
  it('adds names that resolve to a local address; unresolvable names stay remote', async () => {
    const local = new Set(['10.0.0.5', '127.0.0.1']);
    const table: Record<string, string[]> = { 'pod-0.svc.ns': ['10.0.0.5'], 'pod-1.svc.ns': ['10.0.0.6'] };
    const r = await addResolvedLocalHosts(['POD-0.svc.ns', 'pod-1.svc.ns', 'pod-2.svc.ns', '127.0.0.1'], local, {
      lookup: async (h) => {
        const v = table[h];
        if (!v) throw new Error('ENOTFOUND');
        return v;
      },
    });
    expect(r).toEqual({ resolvedLocal: ['pod-0.svc.ns'], unresolved: ['pod-2.svc.ns'] });
    expect(local.has('pod-0.svc.ns')).toBe(true);
    expect(local.has('pod-1.svc.ns')).toBe(false);
  });
  it('a hanging lookup times out as unresolved', async () => {
    const r = await addResolvedLocalHosts(['slow'], new Set(), { lookup: () => new Promise(() => {}), timeoutMs: 20 });
    expect(r.unresolved).toEqual(['slow']);
  });
});
