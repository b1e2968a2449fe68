import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../util/clock.ts';
import { LoginLimiter } from './login-limiter.ts';
import { csrfMatches, SessionStore } from './sessions.ts';

const cred = { accessKey: 'ak', secretKey: 'sk' };

describe('SessionStore', () => {
  it('hands out unguessable tokens and finds sessions only by them', () => {
    const clock = new ManualClock(1_000_000);
    const store = new SessionStore({ clock, idleMs: 60_000, maxMs: 600_000 });
    const a = store.create(cred, true);
    const b = store.create(cred, false);
    expect(a.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(a.token).not.toBe(b.token);
    expect(a.session.csrfToken).not.toBe(b.session.csrfToken);
    expect(store.get(a.token)).toBe(a.session);
    expect(store.get(b.token)?.admin).toBe(false);
    // forged: well-formed but unknown; malformed; another session's CSRF token
    expect(store.get('A'.repeat(43))).toBeUndefined();
    expect(store.get(`${a.token}x`)).toBeUndefined();
    expect(store.get(a.session.csrfToken)).toBeUndefined();
    expect(store.get('')).toBeUndefined();
  });

  it('ends a session after idleMs without a request, and maxMs after sign-in however active', async () => {
    const clock = new ManualClock(0);
    const store = new SessionStore({ clock, idleMs: 60_000, maxMs: 150_000 });
    const { token, session } = store.create(cred, true);
    await clock.advance(59_000);
    expect(store.get(token)).toBe(session); // touched: idle timer restarts
    await clock.advance(59_000);
    expect(store.get(token)).toBe(session);
    expect(store.expiresAt(session)).toBe(150_000);
    expect(store.endsBy(session)).toBe(150_000);
    await clock.advance(32_000);
    expect(store.get(token)).toBeUndefined(); // 150 s after sign-in
    const idle = store.create(cred, true);
    await clock.advance(60_000);
    expect(store.get(idle.token)).toBeUndefined();
    expect(store.size).toBe(0);
  });

  it('sign-out ends the session; memory stays bounded', () => {
    const clock = new ManualClock(0);
    const store = new SessionStore({ clock, idleMs: 60_000, maxMs: 600_000, maxSessions: 3 });
    const first = store.create(cred, true);
    const second = store.create(cred, true);
    store.end(second.token);
    expect(store.get(second.token)).toBeUndefined();
    store.get(first.token); // most recently used
    const more = [store.create(cred, true), store.create(cred, true), store.create(cred, true)];
    expect(store.size).toBe(3);
    expect(store.get(first.token)).toBeUndefined(); // the least recently used went first
    expect(more.every((m) => store.get(m.token) !== undefined)).toBe(true);
  });

  it('compares CSRF tokens exactly', () => {
    const store = new SessionStore({ clock: new ManualClock(0), idleMs: 1000, maxMs: 2000 });
    const { session } = store.create(cred, true);
    expect(csrfMatches(session, session.csrfToken)).toBe(true);
    expect(csrfMatches(session, undefined)).toBe(false);
    expect(csrfMatches(session, '')).toBe(false);
    expect(csrfMatches(session, `${session.csrfToken.slice(0, -1)}x`)).toBe(false);
  });
});

describe('LoginLimiter', () => {
  it('refuses after max failures per key until the oldest leaves the window', async () => {
    const clock = new ManualClock(0);
    const lim = new LoginLimiter({ clock, max: 3, windowMs: 60_000 });
    const keys = ['address:1.2.3.4', 'key:root'];
    for (let i = 0; i < 3; i++) {
      expect(lim.retryAfterMs(keys)).toBe(0);
      lim.fail(keys);
      await clock.advance(1000);
    }
    expect(lim.retryAfterMs(keys)).toBe(57_000);
    // the same access key from elsewhere is limited too; another key from elsewhere is not
    expect(lim.retryAfterMs(['address:5.6.7.8', 'key:root'])).toBe(57_000);
    expect(lim.retryAfterMs(['address:5.6.7.8', 'key:other'])).toBe(0);
    await clock.advance(57_000);
    expect(lim.retryAfterMs(keys)).toBe(0);
  });

  it('a higher limit for keys with a prefix: the per-address count outlasts the per-pair one', () => {
    const clock = new ManualClock(0);
    const lim = new LoginLimiter({ clock, max: 2, windowMs: 60_000, maxByPrefix: { 'address:': 5 } });
    const pair = (key: string) => [`pair:1.2.3.4\u0000${key}`, 'address:1.2.3.4'];
    lim.fail(pair('root'));
    lim.fail(pair('root'));
    expect(lim.retryAfterMs(pair('root'))).toBeGreaterThan(0);
    // the same key from another address: free (no lockout of a key's owner)
    expect(lim.retryAfterMs(['pair:9.9.9.9\u0000root', 'address:9.9.9.9'])).toBe(0);
    // other keys from the first address: free until that address has failed 5 times
    lim.fail(pair('a'));
    lim.fail(pair('b'));
    expect(lim.retryAfterMs(pair('c'))).toBe(0);
    lim.fail(pair('c'));
    expect(lim.retryAfterMs(pair('d'))).toBeGreaterThan(0);
  });

  it('a success forgets its address; memory is bounded', () => {
    const clock = new ManualClock(0);
    const lim = new LoginLimiter({ clock, max: 2, windowMs: 60_000, maxKeys: 2 });
    lim.fail(['address:a']);
    lim.fail(['address:a']);
    expect(lim.retryAfterMs(['address:a'])).toBeGreaterThan(0);
    lim.succeed('address:a');
    expect(lim.retryAfterMs(['address:a'])).toBe(0);
    lim.fail(['k1']);
    lim.fail(['k2']);
    lim.fail(['k3']);
    lim.fail(['k1']);
    // k1 was dropped when k3 came (bound of 2), so one failure since: still allowed
    expect(lim.retryAfterMs(['k1'])).toBe(0);
  });
});
