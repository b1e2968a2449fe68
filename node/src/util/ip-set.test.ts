import { describe, expect, it } from 'vitest';
import { IpSet, plainIp } from './ip-set.ts';

describe('IpSet', () => {
  it('parses CIDRs, single addresses and the loopback shorthand', () => {
    const s = IpSet.parse('10.0.0.0/8, 192.168.1.7 fd00::/8,loopback');
    expect(s.networks).toEqual(['10.0.0.0/8', '192.168.1.7/32', 'fd00::/8', '127.0.0.0/8', '::1/128']);
    expect(s.has('10.200.3.4')).toBe(true);
    expect(s.has('192.168.1.7')).toBe(true);
    expect(s.has('192.168.1.8')).toBe(false);
    expect(s.has('fd12::1')).toBe(true);
    expect(s.has('fe80::1')).toBe(false);
    expect(s.has('127.0.0.9')).toBe(true);
    expect(s.has('::1')).toBe(true);
  });

  it('matches IPv4-mapped IPv6 peers (a dual-stack listener) as IPv4', () => {
    const s = IpSet.parse('127.0.0.3/32');
    expect(s.has('::ffff:127.0.0.3')).toBe(true);
    expect(s.has('::ffff:127.0.0.2')).toBe(false);
    expect(plainIp('::FFFF:10.1.2.3')).toBe('10.1.2.3');
  });

  it('is empty by default and trusts nothing', () => {
    for (const raw of [undefined, '', ' , ']) {
      const s = IpSet.parse(raw);
      expect(s.empty).toBe(true);
      expect(s.has('127.0.0.1')).toBe(false);
    }
  });

  it('refuses anything that is not an address or CIDR, naming the variable', () => {
    for (const bad of ['10.0.0.0/33', 'example.com', '10.0.0/8', '::1/129', '1.2.3.4/8/1', '10.0.0.0/x']) {
      expect(() => IpSet.parse(bad)).toThrow(/SVC_TRUSTED_PROXIES: ".*" is not an IP address or CIDR/);
    }
  });

  it('garbage never matches', () => {
    expect(IpSet.parse('0.0.0.0/0').has('not an ip')).toBe(false);
  });
});
