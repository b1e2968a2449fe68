import { describe, expect, it } from 'vitest';
import { parseHealConfig, SPEED_TRANQUILITY } from './heal-config.ts';

describe('heal and scanner pace', () => {
  it('defaults: a cycle a minute, default speeds, one object in 64 deep-checked', () => {
    expect(parseHealConfig({})).toEqual({ scannerIntervalMs: 60_000, scannerSpeed: 'default', scannerDeepSample: 64, healSpeed: 'default', orphanAgeMs: 3_600_000 });
  });

  it('reads intervals with units, speeds by name and the deep sample', () => {
    expect(parseHealConfig({ SVC_SCANNER_INTERVAL: '5m', SVC_SCANNER_SPEED: 'Slow', SVC_SCANNER_DEEP_SAMPLE: '0', SVC_HEAL_SPEED: 'fastest' })).toEqual({
      scannerIntervalMs: 300_000,
      scannerSpeed: 'slow',
      scannerDeepSample: 0,
      healSpeed: 'fastest',
      orphanAgeMs: 3_600_000,
    });
    expect(parseHealConfig({ SVC_SCANNER_ORPHAN_AGE: '2s' }).orphanAgeMs).toBe(2_000);
    expect(parseHealConfig({ SVC_SCANNER_INTERVAL: '30' }).scannerIntervalMs).toBe(30_000);
    expect(SPEED_TRANQUILITY.default).toBe(2);
  });

  it('refuses what it cannot read, naming the variable', () => {
    for (const env of [{ SVC_SCANNER_INTERVAL: 'soon' }, { SVC_SCANNER_INTERVAL: '10ms' }, { SVC_SCANNER_SPEED: 'ludicrous' }, { SVC_HEAL_SPEED: 'x' }, { SVC_SCANNER_DEEP_SAMPLE: '-1' }, { SVC_SCANNER_ORPHAN_AGE: '500ms' }]) {
      expect(() => parseHealConfig(env)).toThrow(new RegExp(Object.keys(env)[0]!));
    }
  });
});
