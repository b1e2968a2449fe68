import { X509Certificate } from 'node:crypto';
import { createSecureContext } from 'node:tls';
import { describe, expect, it } from 'vitest';
import { createCa, generatedTiming, issueCertificate, parseGoDuration, renewalReason, renewalTime } from './generated.ts';

const NOW = new Date('2026-06-01T00:00:00Z');
const HOUR = 3_600_000;
const names = { dns: ['prod-p0-0.prod-hl.storage.svc.cluster.local', '*.prod-hl.storage.svc.cluster.local', 'prod'], ips: ['203.0.113.10'] };

describe('generated TLS (the operator as the cluster CA)', () => {
  it('durations: Go syntax, defaults of 90 days renewed a third before the end', () => {
    expect(parseGoDuration('2160h')).toBe(2160 * HOUR);
    expect(parseGoDuration('1h30m10s')).toBe(HOUR + 30 * 60_000 + 10_000);
    expect(parseGoDuration('1.5h')).toBe(1.5 * HOUR);
    for (const bad of ['', '10d', 'h', '5m x']) expect(() => parseGoDuration(bad)).toThrow(/invalid duration/);
    expect(generatedTiming(undefined)).toEqual({ lifetimeMs: 2160 * HOUR, renewBeforeMs: 720 * HOUR });
    expect(generatedTiming({ duration: '2h', renewBefore: '90m' })).toEqual({ lifetimeMs: 2 * HOUR, renewBeforeMs: 90 * 60_000 });
  });

  it('issues a certificate Node and OpenSSL accept, for exactly the names, chained to the CA', async () => {
    const ca = await createCa('prod', NOW);
    const caCert = new X509Certificate(ca.cert);
    expect(caCert.ca).toBe(true);
    expect(Date.parse(caCert.validTo) - NOW.getTime()).toBeGreaterThan(9 * 365 * 24 * HOUR);
    const leaf = await issueCertificate(ca, 'prod', names, NOW, 90 * 24 * HOUR);
    const cert = new X509Certificate(leaf.cert);
    expect(cert.subjectAltName).toBe('DNS:prod-p0-0.prod-hl.storage.svc.cluster.local, DNS:*.prod-hl.storage.svc.cluster.local, DNS:prod, IP Address:203.0.113.10');
    expect(cert.checkIssued(caCert)).toBe(true);
    expect(cert.verify(caCert.publicKey)).toBe(true);
    expect(cert.checkHost('prod-p0-1.prod-hl.storage.svc.cluster.local')).toBe('*.prod-hl.storage.svc.cluster.local');
    expect(cert.ca).toBe(false);
    expect(Date.parse(cert.validTo)).toBe(NOW.getTime() + 90 * 24 * HOUR);
    // key and certificate belong together, as svc's start-up check demands
    expect(() => createSecureContext({ cert: leaf.cert, key: leaf.key })).not.toThrow();
    expect(renewalReason(leaf.cert, leaf.key, ca, names, NOW, 30 * 24 * HOUR)).toBeUndefined();
    expect(renewalTime(leaf.cert, 30 * 24 * HOUR)).toBe(NOW.getTime() + 60 * 24 * HOUR);
  });

  it('renews when missing, foreign, renamed or close to its end', async () => {
    const ca = await createCa('prod', NOW);
    const other = await createCa('other', NOW);
    const leaf = await issueCertificate(ca, 'prod', names, NOW, 10 * HOUR);
    expect(renewalReason(undefined, undefined, ca, names, NOW, HOUR)).toBe('no certificate yet');
    expect(renewalReason('garbage', 'x', ca, names, NOW, HOUR)).toBe('the certificate cannot be read');
    expect(renewalReason(leaf.cert, leaf.key, other, names, NOW, HOUR)).toBe('the certificate was not issued by the cluster CA');
    expect(renewalReason(leaf.cert, leaf.key, ca, { dns: [...names.dns, 'prod-p1-0.prod-hl.storage.svc.cluster.local'], ips: names.ips }, NOW, HOUR)).toBe('the names to cover changed');
    expect(renewalReason(leaf.cert, leaf.key, ca, names, new Date(NOW.getTime() + 9.5 * HOUR), HOUR)).toMatch(/^it ends on /);
    expect(renewalReason(leaf.cert, leaf.key, ca, names, new Date(NOW.getTime() + 8 * HOUR), HOUR)).toBeUndefined();
  });
});
