import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../util/logger.ts';
import { DriveFs } from './local-fs.ts';

describe('DriveFs paths', () => {
  it('filePath is join(root, vol, path) for every root spelling, built without normalizing', () => {
    for (const root of ['/srv/d1', '/srv/d1/', '/srv//d1', 'rel/d1', './d1', '.', '/']) {
      const fs = new DriveFs(root, 'e', silentLogger, undefined);
      for (const path of ['o', 'a/b/c/xl.meta', '.hidden/..x/.../x.', 'photos/2024__XLDIR__/xl.meta']) {
        expect(fs.filePath('bucket', path)).toBe(join(root, 'bucket', path));
      }
      expect(fs.filePath('bucket', '')).toBe(join(root, 'bucket'));
      expect(fs.volPath('.svc.sys')).toBe(join(root, '.svc.sys'));
    }
  });

  it('refuses paths with an empty, "." or ".." segment, a leading slash or a NUL, and odd volume names', () => {
    const fs = new DriveFs('/srv/d1', 'e', silentLogger, undefined);
    for (const path of ['a//b', './a', 'a/.', 'a/../b', '..', '.', 'a/', '/a', 'a\0b']) {
      expect(() => fs.filePath('bucket', path), path).toThrow(expect.objectContaining({ code: 'InvalidArgument' }));
    }
    for (const vol of ['', '.', '..', 'a/b']) expect(() => fs.volPath(vol), vol).toThrow(expect.objectContaining({ code: 'InvalidArgument' }));
  });
});
