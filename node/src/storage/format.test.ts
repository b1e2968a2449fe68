import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { hasCode } from '../util/errors.ts';
import {
  type DriveFormatState,
  decideFormat,
  ensurePoolFormat,
  type FormatFile,
  formatPath,
  formatInProgress,
  formatQuorum,
  localFormatIO,
  newPoolFormats,
  readFormatFile,
  validateFormat,
  writeFormatFile,
} from './format.ts';

const base = mkdtempSync(join(tmpdir(), 'svc-format-test-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));
let dirSeq = 0;
function drives(n: number): string[] {
  const d = join(base, `p${dirSeq++}`);
  const roots = Array.from({ length: n }, (_, i) => join(d, `d${i + 1}`));
  for (const r of roots) mkdirSync(r, { recursive: true });
  return roots;
}
const geo4 = { cmdline: '/x/d{1...4}', setCount: 1, setDriveCount: 4 };
const DEP = '11111111-2222-4333-8444-555555555555';
const formatted = (f: FormatFile): DriveFormatState => ({ state: 'formatted', format: f });
const U: DriveFormatState = { state: 'unformatted' };
const O: DriveFormatState = { state: 'offline', reason: 'EIO' };

describe('format.json file I/O', () => {
  it('missing root is VolumeNotFound and is not created', async () => {
    const missing = join(base, 'nope', 'd1');
    await expect(readFormatFile(missing)).rejects.toSatisfy((e) => hasCode(e, 'VolumeNotFound'));
    const [f] = newPoolFormats({ cmdline: '/a', setCount: 1, setDriveCount: 1 }, DEP);
    await expect(writeFormatFile(missing, f!)).rejects.toSatisfy((e) => hasCode(e, 'VolumeNotFound'));
    expect(() => readdirSync(missing)).toThrow();
  });
  it('round-trips atomically and leaves no temp files', async () => {
    const [root] = drives(1);
    expect(await readFormatFile(root!)).toEqual({ state: 'unformatted' });
    const [f] = newPoolFormats({ cmdline: root!, setCount: 1, setDriveCount: 1 }, DEP);
    await writeFormatFile(root!, f!);
    expect(await readFormatFile(root!)).toEqual({ state: 'formatted', format: f });
    expect(readdirSync(join(root!, '.svc.sys'))).toEqual(['format.json']);
    expect(JSON.parse(readFileSync(formatPath(root!), 'utf8'))).toMatchObject({ version: 1, format: 'erasure-single', id: DEP });
  });
  it('invalid content is corrupt', async () => {
    const [root] = drives(1);
    mkdirSync(join(root!, '.svc.sys'));
    writeFileSync(formatPath(root!), '{not json');
    expect((await readFormatFile(root!)).state).toBe('corrupt');
    writeFileSync(formatPath(root!), JSON.stringify({ version: 9 }));
    const r = await readFormatFile(root!);
    expect(r.state === 'corrupt' && r.reason).toContain('unsupported format version');
  });
  it('a .svc.sys that is a file is corrupt, not offline', async () => {
    const [root] = drives(1);
    writeFileSync(join(root!, '.svc.sys'), 'x');
    expect((await readFormatFile(root!)).state).toBe('corrupt');
  });
  it('validateFormat checks matrix consistency', () => {
    const [f] = newPoolFormats(geo4, DEP);
    expect(validateFormat(JSON.parse(JSON.stringify(f)))).toEqual(f);
    const bad = { ...f!, erasure: { ...f!.erasure, setDriveCount: 2 } };
    expect(() => validateFormat(bad)).toThrow(/geometry/);
    const alien = { ...f!, erasure: { ...f!.erasure, this: DEP } };
    expect(() => validateFormat(alien)).toThrow(/not a member/);
  });
});

describe('format quorum decision', () => {
  const fs4 = newPoolFormats(geo4, DEP);
  it('fresh only when every drive is reachable and unformatted', () => {
    expect(decideFormat(geo4, [U, U, U, U])).toEqual({ action: 'fresh' });
    expect(decideFormat(geo4, [U, U, O, U]).action).toBe('wait');
    expect(decideFormat(geo4, [U, U, { state: 'corrupt', reason: 'x' }, U])).toMatchObject({ action: 'fail', code: 'CorruptedFormat' });
  });
  it('uses an existing format, mapping slots by drive id (not command-line order)', () => {
    const d = decideFormat(geo4, [formatted(fs4[2]!), formatted(fs4[0]!), U, O]);
    expect(d.action).toBe('use');
    if (d.action !== 'use') return;
    expect(d.reference.id).toBe(DEP);
    expect(d.slots.map((s) => s.status)).toEqual(['ok', 'ok', 'unformatted', 'offline']);
    expect(d.slots[0]).toMatchObject({ set: 0, slot: 2 });
  });
  it('waits below quorum while offline drives may complete it; fails when they cannot', () => {
    const geo8 = { cmdline: '/x/d{1...8}', setCount: 1, setDriveCount: 8 };
    const fs8 = newPoolFormats(geo8, DEP);
    expect(decideFormat(geo8, [formatted(fs8[0]!), O, O, O, U, U, U, U]).action).toBe('wait');
    expect(decideFormat(geo8, [formatted(fs8[0]!), U, U, U, U, U, U, U])).toMatchObject({ action: 'fail', code: 'CorruptedFormat' });
  });
  it('a pool half way through its first format is recognised (nodes that do not format wait on it)', () => {
    const geo8 = { cmdline: '/x/d{1...8}', setCount: 1, setDriveCount: 8 };
    const fs8 = newPoolFormats(geo8, DEP);
    const other = newPoolFormats(geo8, '99999999-2222-4333-8444-555555555555');
    expect(formatInProgress([formatted(fs8[0]!), formatted(fs8[1]!), U, U, O, U, U, U])).toBe(true);
    expect(formatInProgress([U, U, U, U])).toBe(false);
    expect(formatInProgress([formatted(fs8[0]!), formatted(other[1]!), U, U, U, U, U, U])).toBe(false);
    expect(formatInProgress([formatted(fs8[0]!), { state: 'corrupt', reason: 'x' }, U, U, U, U, U, U])).toBe(false);
  });
  it('PoolTopologyMismatch for another drive count or set width', () => {
    const geo8 = { cmdline: '/x/d{1...8}', setCount: 1, setDriveCount: 8 };
    expect(decideFormat(geo8, [...fs4.map(formatted), U, U, U, U])).toMatchObject({ action: 'fail', code: 'PoolTopologyMismatch' });
    const geo2x2 = { cmdline: '/x/d{1...4}', setCount: 2, setDriveCount: 2 };
    expect(decideFormat(geo2x2, fs4.map(formatted))).toMatchObject({ action: 'fail', code: 'PoolTopologyMismatch' });
  });
  it('UnsupportedSnsdExpansion for the single-drive case', () => {
    const single = newPoolFormats({ cmdline: '/x', setCount: 1, setDriveCount: 1 }, DEP);
    expect(decideFormat(geo4, [formatted(single[0]!), U, U, U])).toMatchObject({ action: 'fail', code: 'UnsupportedSnsdExpansion' });
    expect(decideFormat({ cmdline: '/x', setCount: 1, setDriveCount: 1 }, [formatted(fs4[0]!)])).toMatchObject({
      action: 'fail',
      code: 'UnsupportedSnsdExpansion',
    });
  });
  it('drives of another deployment are foreign', () => {
    const other = newPoolFormats(geo4, '99999999-2222-4333-8444-555555555555');
    const d = decideFormat(geo4, [formatted(fs4[0]!), formatted(fs4[1]!), formatted(fs4[2]!), formatted(other[3]!)]);
    expect(d.action === 'use' && d.slots[3]!.status).toBe('foreign');
  });
  it('property: any subset of at least quorum healthy drives yields use with correct slots', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 4 }), fc.integer({ min: 2, max: 16 }), fc.infiniteStream(fc.constantFrom('ok', 'U', 'O')), (sets, width, pick) => {
        const geo = { cmdline: 'p', setCount: sets, setDriveCount: width };
        const fs = newPoolFormats(geo, DEP);
        const it = pick[Symbol.iterator]();
        const states = fs.map((f) => {
          const k = it.next().value;
          return k === 'ok' ? formatted(f) : k === 'U' ? U : O;
        });
        const ok = states.filter((s) => s.state === 'formatted').length;
        const d = decideFormat(geo, states);
        if (ok >= formatQuorum(fs.length)) {
          expect(d.action).toBe('use');
          if (d.action === 'use')
            d.slots.forEach((s, i) => {
              if (s.status === 'ok') expect(s.set * width + s.slot).toBe(i);
            });
        } else if (ok === 0 && states.every((s) => s.state === 'unformatted')) {
          expect(d.action).toBe('fresh');
        } else {
          expect(['wait', 'fail', 'fresh']).toContain(d.action);
        }
      }),
    );
  });
});

describe('ensurePoolFormat over local drives', () => {
  it('formats a fresh pool, then reuses it', async () => {
    const roots = drives(4);
    const first = await ensurePoolFormat(geo4, localFormatIO(roots));
    expect(first).toMatchObject({ action: 'use', formatted: true });
    const ids = roots.map((r) => JSON.parse(readFileSync(formatPath(r), 'utf8')).id);
    expect(new Set(ids).size).toBe(1);
    const again = await ensurePoolFormat(geo4, localFormatIO(roots));
    expect(again).toMatchObject({ action: 'use', formatted: false });
    expect(again.action === 'use' && again.reference.id).toBe(ids[0]);
  });
  it('refuses another geometry without touching the drives', async () => {
    const roots = drives(4);
    await ensurePoolFormat(geo4, localFormatIO(roots));
    const before = roots.map((r) => readFileSync(formatPath(r), 'utf8'));
    await expect(ensurePoolFormat({ ...geo4, setCount: 2, setDriveCount: 2 }, localFormatIO(roots))).rejects.toSatisfy((e) =>
      hasCode(e, 'PoolTopologyMismatch'),
    );
    expect(roots.map((r) => readFileSync(formatPath(r), 'utf8'))).toEqual(before);
  });
  it('adopts the deployment id given for a new pool', async () => {
    const roots = drives(2);
    const r = await ensurePoolFormat({ cmdline: 'p', setCount: 1, setDriveCount: 2 }, localFormatIO(roots), { deploymentId: DEP });
    expect(r.action === 'use' && r.reference.id).toBe(DEP);
  });
});
