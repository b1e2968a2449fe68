import { describe, expect, it } from 'vitest';
import { settingFromXml, settingToXml } from './bucket-settings.ts';

describe('bucket settings: AWS-CLI JSON to S3 XML and back', () => {
  it('lifecycle: rules repeat as <Rule>, an And filter keeps its tags as <Tag>', () => {
    const value = {
      Rules: [
        { ID: 'tidy', Status: 'Enabled', Filter: { Prefix: 'tmp/' }, Expiration: { Days: 7 }, AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 } },
        { ID: 'tagged', Status: 'Disabled', Filter: { And: { Prefix: 'logs/', Tags: [{ Key: 'env', Value: 'dev' }, { Key: 'team', Value: 'a&b' }] } }, NoncurrentVersionExpiration: { NoncurrentDays: 30 } },
        { ID: 'one-tag', Status: 'Enabled', Filter: { Tag: { Key: 'k', Value: 'v' } }, Expiration: { ExpiredObjectDeleteMarker: true } },
      ],
    };
    const xml = settingToXml('lifecycle', value);
    expect(xml).toContain('<Rule><ID>tidy</ID>');
    expect(xml).toContain('<And><Prefix>logs/</Prefix><Tag><Key>env</Key><Value>dev</Value></Tag><Tag><Key>team</Key><Value>a&amp;b</Value></Tag></And>');
    expect(xml).not.toContain('<Rules>');
    expect(settingFromXml('lifecycle', xml)).toEqual(value);
  });

  it('CORS, tags, encryption and object lock round-trip in the shapes the SDKs use', () => {
    const cors = { CORSRules: [{ AllowedOrigins: ['https://a.example'], AllowedMethods: ['GET', 'PUT'], AllowedHeaders: ['*'], ExposeHeaders: ['ETag'], MaxAgeSeconds: 600 }] };
    expect(settingToXml('cors', cors)).toContain('<AllowedMethod>GET</AllowedMethod><AllowedMethod>PUT</AllowedMethod>');
    expect(settingFromXml('cors', settingToXml('cors', cors))).toEqual(cors);
    const tags = { TagSet: [{ Key: 'team', Value: 'storage' }] };
    expect(settingToXml('tagging', tags)).toContain('<TagSet><Tag><Key>team</Key><Value>storage</Value></Tag></TagSet>');
    expect(settingFromXml('tagging', settingToXml('tagging', tags))).toEqual(tags);
    const enc = { Rules: [{ ApplyServerSideEncryptionByDefault: { SSEAlgorithm: 'aws:kms', KMSMasterKeyID: 'k1' }, BucketKeyEnabled: true }] };
    expect(settingFromXml('encryption', settingToXml('encryption', enc))).toEqual(enc);
    const lock = { ObjectLockEnabled: 'Enabled', Rule: { DefaultRetention: { Mode: 'GOVERNANCE', Days: 5 } } };
    expect(settingFromXml('object-lock', settingToXml('object-lock', lock))).toEqual(lock);
  });

  it('refuses what is not a document of the kind: lists where none belong, odd field names', () => {
    expect(() => settingToXml('lifecycle', [])).toThrow(/JSON object/);
    expect(() => settingToXml('lifecycle', { Rule: [{ ID: 'x' }] })).toThrow(/list is not expected/);
    expect(() => settingToXml('cors', { 'CORSRules><x': 1 })).toThrow(/not a field/);
  });
});
