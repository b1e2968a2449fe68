import { describe, expect, it } from 'vitest';
import { checkLockConfigChange, checkRetentionChange, decodeLockConfig, defaultRetainUntil, encodeLockConfig, lockOf, newVersionLock, removalBlocked, withLock } from './object-lock.ts';

const DAY = 86_400_000;
const T0 = Date.UTC(2030, 0, 15, 12);
const at = (now: number, graceMs = 0) => ({ now, graceMs });

describe('object lock: removal', () => {
  const gov = withLock({ acl: 'x' }, { mode: 'GOVERNANCE', retainUntil: T0 + DAY });
  const comp = withLock({}, { mode: 'COMPLIANCE', retainUntil: T0 + DAY });
  const held = withLock({}, { legalHold: 'ON' });

  it('stores its state beside other system metadata', () => {
    expect(gov.acl).toBe('x');
    expect(lockOf(gov)).toEqual({ mode: 'GOVERNANCE', retainUntil: T0 + DAY });
    expect(lockOf(withLock(gov, {}))).toEqual({});
    expect(withLock(gov, {}).acl).toBe('x');
  });

  it('GOVERNANCE yields to the bypass only; COMPLIANCE and legal hold to nothing', () => {
    expect(removalBlocked(gov, at(T0))).toMatch(/GOVERNANCE/);
    expect(removalBlocked(gov, at(T0), { bypassGovernance: true })).toBeUndefined();
    expect(removalBlocked(comp, at(T0), { bypassGovernance: true })).toMatch(/COMPLIANCE/);
    expect(removalBlocked(held, at(T0), { bypassGovernance: true })).toMatch(/legal hold/);
    expect(removalBlocked(withLock(comp, { mode: 'COMPLIANCE', retainUntil: T0 - 1, legalHold: 'ON' }), at(T0))).toMatch(/legal hold/);
    expect(removalBlocked(withLock({}, { legalHold: 'OFF' }), at(T0))).toBeUndefined();
  });

  it('expires at its date on one node, a grace later in a cluster (a clock ahead never releases early)', () => {
    expect(removalBlocked(comp, at(T0 + DAY - 1))).toBeDefined();
    expect(removalBlocked(comp, at(T0 + DAY))).toBeUndefined();
    expect(removalBlocked(comp, at(T0 + DAY, 300_000))).toBeDefined();
    expect(removalBlocked(comp, at(T0 + DAY + 300_000, 300_000))).toBeUndefined();
  });
});

describe('object lock: retention changes', () => {
  const comp = { mode: 'COMPLIANCE' as const, retainUntil: T0 + 10 * DAY };
  const gov = { mode: 'GOVERNANCE' as const, retainUntil: T0 + 10 * DAY };

  it('COMPLIANCE is extended only, even with the bypass', () => {
    expect(() => checkRetentionChange(comp, { mode: 'COMPLIANCE', retainUntil: T0 + 11 * DAY }, at(T0), false)).not.toThrow();
    for (const bypass of [false, true]) {
      expect(() => checkRetentionChange(comp, { mode: 'COMPLIANCE', retainUntil: T0 + 9 * DAY }, at(T0), bypass)).toThrow(/COMPLIANCE/);
      expect(() => checkRetentionChange(comp, { mode: 'GOVERNANCE', retainUntil: T0 + 20 * DAY }, at(T0), bypass)).toThrow(/COMPLIANCE/);
      expect(() => checkRetentionChange(comp, undefined, at(T0), bypass)).toThrow(/COMPLIANCE/);
    }
  });

  it('GOVERNANCE is shortened, removed or changed (to COMPLIANCE too) only with the bypass; extended without', () => {
    expect(() => checkRetentionChange(gov, { mode: 'GOVERNANCE', retainUntil: T0 + DAY }, at(T0), false)).toThrow(/bypass/);
    expect(() => checkRetentionChange(gov, undefined, at(T0), false)).toThrow(/bypass/);
    expect(() => checkRetentionChange(gov, undefined, at(T0), true)).not.toThrow();
    expect(() => checkRetentionChange(gov, { mode: 'GOVERNANCE', retainUntil: T0 + DAY }, at(T0), true)).not.toThrow();
    expect(() => checkRetentionChange(gov, { mode: 'GOVERNANCE', retainUntil: T0 + 11 * DAY }, at(T0), false)).not.toThrow();
    // S3 refuses GOVERNANCE -> COMPLIANCE without the bypass, even for a later date
    expect(() => checkRetentionChange(gov, { mode: 'COMPLIANCE', retainUntil: T0 + 10 * DAY }, at(T0), false)).toThrow(/bypass/);
    expect(() => checkRetentionChange(gov, { mode: 'COMPLIANCE', retainUntil: T0 + 20 * DAY }, at(T0), false)).toThrow(/bypass/);
    expect(() => checkRetentionChange(gov, { mode: 'COMPLIANCE', retainUntil: T0 + 10 * DAY }, at(T0), true)).not.toThrow();
  });

  it('an expired retention is replaced freely; a new date must be in the future', () => {
    expect(() => checkRetentionChange(comp, { mode: 'GOVERNANCE', retainUntil: T0 + 12 * DAY }, at(T0 + 11 * DAY), false)).not.toThrow();
    expect(() => checkRetentionChange({}, { mode: 'GOVERNANCE', retainUntil: T0 }, at(T0), false)).toThrow(/future/);
  });
});

describe('object lock: bucket configuration and defaults', () => {
  it('round trips the document and applies the default retention to new versions', () => {
    const cfg = decodeLockConfig(encodeLockConfig({ enabled: true, rule: { mode: 'COMPLIANCE', days: 3 } }))!;
    expect(newVersionLock(cfg, undefined, T0)).toEqual({ mode: 'COMPLIANCE', retainUntil: T0 + 3 * DAY });
    // an explicit retention wins over the default; a legal hold is added to the default
    expect(newVersionLock(cfg, { mode: 'GOVERNANCE', retainUntil: T0 + DAY }, T0)).toEqual({ mode: 'GOVERNANCE', retainUntil: T0 + DAY });
    expect(newVersionLock(cfg, { legalHold: 'ON' }, T0)).toEqual({ mode: 'COMPLIANCE', retainUntil: T0 + 3 * DAY, legalHold: 'ON' });
    expect(defaultRetainUntil({ mode: 'GOVERNANCE', years: 1 }, Date.UTC(2028, 1, 29))).toBe(Date.UTC(2029, 2, 1));
    expect(() => newVersionLock(undefined, { legalHold: 'ON' }, T0)).toThrow(/missing Object Lock/);
    expect(newVersionLock(undefined, undefined, T0)).toEqual({});
  });

  it('is enabled on versioned buckets only, and never removed', () => {
    const on = encodeLockConfig({ enabled: true });
    expect(() => checkLockConfigChange('Unversioned', undefined, on)).toThrow(/Versioning must be 'Enabled'/);
    expect(() => checkLockConfigChange('Enabled', undefined, on)).not.toThrow();
    expect(() => checkLockConfigChange('Enabled', on, undefined)).toThrow(/cannot be disabled/);
    expect(() => checkLockConfigChange('Enabled', on, encodeLockConfig({ enabled: true, rule: { mode: 'GOVERNANCE', days: 1 } }))).not.toThrow();
  });
});
