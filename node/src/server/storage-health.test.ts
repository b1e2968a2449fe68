import { describe, expect, it } from 'vitest';
import { type DriveFormatState, newPoolFormats } from '../storage/format.ts';
import { buildPoolLayouts, parseParity } from 'svc-topology';
import { layoutWarnings } from './start-server.ts';
import { evaluateStorage } from './storage-health.ts';

const DEP = '11111111-2222-4333-8444-555555555555';
const U: DriveFormatState = { state: 'unformatted' };

describe('storage health', () => {
  const fs = newPoolFormats({ cmdline: 'p', setCount: 2, setDriveCount: 4 }, DEP);
  const ok = fs.map((f): DriveFormatState => ({ state: 'formatted', format: f }));
  const pool = (drives: DriveFormatState[], parity = 2) => ({ setDriveCount: 4, standardParity: parity, reference: fs[0], drives });
  it('all drives online: read and write quorum', () => {
    const r = evaluateStorage([pool(ok)]);
    expect(r).toMatchObject({ read: true, write: true });
    expect(r.detail).toBe('2 of 2 erasure sets have read quorum');
  });
  it('K = M = 2: two drives down keeps read, loses write (K+1)', () => {
    const r = evaluateStorage([pool([U, U, ok[2]!, ok[3]!, ...ok.slice(4)])]);
    expect(r).toMatchObject({ read: true, write: false });
  });
  it('three down in one set loses read quorum and names the set', () => {
    const r = evaluateStorage([pool([...ok.slice(0, 4), U, U, U, ok[7]!])]);
    expect(r.read).toBe(false);
    expect(r.detail).toContain('pool 0 set 1 (1/4 online, 2 needed)');
  });
  it('a drive down with parity left: ready, and the detail names the short set', () => {
    const r = evaluateStorage([pool([U, ...ok.slice(1)])]);
    expect(r).toMatchObject({ read: true, write: true });
    expect(r.detail).toBe('2 of 2 erasure sets have read quorum; drives offline in pool 0 set 0 (3/4 online)');
  });
  it('zero parity: a drive down leaves the set serving (only zero-parity objects fail); the .svc.sys quorum still decides', () => {
    expect(evaluateStorage([pool([U, ...ok.slice(1)], 0)])).toMatchObject({ read: true, write: true });
    expect(evaluateStorage([pool([U, U, ...ok.slice(2)], 0)])).toMatchObject({ read: true, write: false });
    const lost = evaluateStorage([pool([U, U, U, ...ok.slice(3)], 0)]);
    expect(lost.read).toBe(false);
    expect(lost.detail).toContain('pool 0 set 0 (1/4 online, 2 needed)');
  });
  it('normal parity still loses readiness below its read quorum (EC:1 on 4 drives needs 3)', () => {
    expect(evaluateStorage([pool([U, U, ...ok.slice(2)], 1)]).read).toBe(false);
    expect(evaluateStorage([pool([U, ...ok.slice(1)], 1)]).read).toBe(true);
  });
  it('no reference format: not ready', () => {
    expect(evaluateStorage([{ setDriveCount: 4, standardParity: 2, reference: undefined, drives: [] }])).toMatchObject({ read: false, write: false });
  });
});

describe('layout warnings', () => {
  const sc = (standard?: string) => ({ standard: parseParity('S', standard), rrs: parseParity('R', undefined) });
  it('host_failure_data_unavailable for every multi-drive pool', () => {
    const pools = buildPoolLayouts(['/a/d{1...4}', '/b/d{1...2}'], { storageClass: sc(), cwd: '/' });
    expect(layoutWarnings(pools).map((w) => [w.event, w.pool])).toEqual([
      ['host_failure_data_unavailable', 0],
      ['host_failure_data_unavailable', 1],
    ]);
  });
  it('zero-redundancy only for automatic zero parity', () => {
    expect(layoutWarnings(buildPoolLayouts(['/a'], { storageClass: sc(), cwd: '/' })).map((w) => w.event)).toEqual(['zero_redundancy']);
    expect(layoutWarnings(buildPoolLayouts(['/a'], { storageClass: sc('EC:0'), cwd: '/' }))).toEqual([]);
    expect(layoutWarnings(buildPoolLayouts(['/a/d{1...4}'], { storageClass: sc('EC:0'), cwd: '/' })).map((w) => w.event)).toEqual([
      'host_failure_data_unavailable',
    ]);
  });
});
