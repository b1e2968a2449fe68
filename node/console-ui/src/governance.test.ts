import { describe, expect, it } from 'vitest';
import { describeActions, describeEncryption, describeFilter, describeObjectLock } from './governance.ts';

describe('governance lines', () => {
  it('object lock and encryption', () => {
    expect(describeObjectLock({ enabled: false })).toBe('Off');
    expect(describeObjectLock({ enabled: true })).toBe('On, no default retention (each version sets its own)');
    expect(describeObjectLock({ enabled: true, defaultRetention: { mode: 'GOVERNANCE', days: 30 } })).toBe('On: new versions kept 30 days (GOVERNANCE)');
    expect(describeObjectLock({ enabled: true, defaultRetention: { mode: 'COMPLIANCE', years: 1 } })).toBe('On: new versions kept 1 year (COMPLIANCE)');
    expect(describeEncryption(undefined)).toBe('None');
    expect(describeEncryption({ algorithm: 'AES256' })).toBe('SSE-S3 (AES256)');
    expect(describeEncryption({ algorithm: 'aws:kms', kmsKeyId: 'k2' })).toBe('SSE-KMS, key k2');
    expect(describeEncryption({ algorithm: 'aws:kms' })).toBe('SSE-KMS, the default key');
  });
  it('lifecycle filters and actions', () => {
    expect(describeFilter({})).toBe('every object');
    expect(describeFilter({ prefix: '' })).toBe('every object');
    expect(describeFilter({ prefix: 'logs/', tags: [{ key: 'env', value: 'dev' }], sizeGreaterThan: 1024 * 1024, sizeLessThan: 1536 })).toBe('prefix logs/, tag env=dev, over 1.00 MiB, under 1.50 KiB');
    expect(
      describeActions({
        id: 'r',
        status: 'Enabled',
        filter: {},
        expiration: { days: 7, expiredObjectDeleteMarker: true },
        noncurrentVersionExpiration: { noncurrentDays: 30, newerNoncurrentVersions: 2 },
        abortIncompleteMultipartUpload: { daysAfterInitiation: 1 },
      }),
    ).toEqual(['expire current versions after 7 days', 'remove delete markers with no versions left', 'delete noncurrent versions after 30 days (keeping the newest 2)', 'abort unfinished uploads after 1 day']);
    expect(describeActions({ id: 'd', status: 'Disabled', filter: {}, expiration: { date: '2027-01-01T00:00:00Z' } })).toEqual(['expire current versions on 2027-01-01']);
  });
});
