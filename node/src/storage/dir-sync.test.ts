/**
 * The group commit of directory fsyncs: a caller is released only by an
 * fsync of its directory that started after it asked (never by one already
 * in flight), concurrent callers share fsyncs, and a failed fsync fails
 * every caller it was meant to cover.
 */
import { describe, expect, it } from 'vitest';
import { DirSyncGroups } from './dir-sync.ts';

/** An fsync double whose calls the test ends one by one, with a log of events in order. */
function gatedFsync() {
  const log: string[] = [];
  const open: { dir: string; end(err?: Error): void }[] = [];
  const fsync = (dir: string) =>
    new Promise<void>((resolve, reject) => {
      log.push(`start ${dir}`);
      open.push({
        dir,
        end: (err) => {
          log.push(`end ${dir}`);
          if (err) reject(err);
          else resolve();
        },
      });
    });
  return { log, open, fsync };
}

const tick = () => new Promise<void>((r) => setImmediate(r));

describe('DirSyncGroups', () => {
  it('releases a caller only after an fsync that started after its call', async () => {
    const f = gatedFsync();
    const g = new DirSyncGroups(f.fsync);
    const done: string[] = [];
    const first = g.sync('/d').then(() => done.push('first'));
    expect(f.open).toHaveLength(1); // started at once: nothing was running
    // Arrives while the first fsync is in flight: that fsync may have written
    // the directory before this caller's entry existed, so it must not count.
    const second = g.sync('/d').then(() => done.push('second'));
    f.open.shift()!.end();
    await first;
    await tick();
    expect(done).toEqual(['first']);
    expect(f.open).toHaveLength(1); // the next fsync, started only now
    f.open.shift()!.end();
    await second;
    expect(done).toEqual(['first', 'second']);
    expect(f.log).toEqual(['start /d', 'end /d', 'start /d', 'end /d']);
    expect(g.pending).toBe(0);
  });

  it('callers that gather while one fsync runs share the next one', async () => {
    const f = gatedFsync();
    const g = new DirSyncGroups(f.fsync);
    const all = [g.sync('/d')];
    for (let i = 0; i < 15; i++) all.push(g.sync('/d'));
    expect(f.open).toHaveLength(1);
    f.open.shift()!.end();
    await tick();
    expect(f.open).toHaveLength(1);
    f.open.shift()!.end();
    await Promise.all(all);
    expect(f.log.filter((e) => e.startsWith('start'))).toHaveLength(2);
  });

  it('keeps directories apart', async () => {
    const f = gatedFsync();
    const g = new DirSyncGroups(f.fsync);
    const a = g.sync('/a');
    const b = g.sync('/b');
    expect(f.open.map((o) => o.dir)).toEqual(['/a', '/b']);
    f.open[1]!.end();
    await b;
    let aDone = false;
    void a.then(() => (aDone = true));
    await tick();
    expect(aDone).toBe(false);
    f.open[0]!.end();
    await a;
  });

  it('a failed fsync fails every caller it covered; the next batch runs again', async () => {
    const f = gatedFsync();
    const g = new DirSyncGroups(f.fsync);
    const first = g.sync('/d');
    const waiting = [g.sync('/d'), g.sync('/d')];
    const later = g.sync('/d');
    f.open.shift()!.end();
    await first;
    await tick();
    const eio = Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' });
    f.open.shift()!.end(eio);
    for (const w of [...waiting, later]) await expect(w).rejects.toBe(eio);
    await tick();
    expect(g.pending).toBe(0);
    const after = g.sync('/d');
    expect(f.open).toHaveLength(1);
    f.open.shift()!.end();
    await expect(after).resolves.toBeUndefined();
  });

  it('an fsync that throws at once rejects its callers', async () => {
    const g = new DirSyncGroups(() => {
      throw new Error('ENOENT');
    });
    await expect(g.sync('/gone')).rejects.toThrow('ENOENT');
    expect(g.pending).toBe(0);
  });
});
