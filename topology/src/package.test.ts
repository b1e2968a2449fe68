/**
 * The package stays shareable: its modules import only Node's built-ins and
 * each other (no server or operator code, no npm package), so the server,
 * the operator and their images can carry it alone; and its errors are the
 * server's (the registry mark, code, status and details).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { buildPoolLayouts, TopologyError } from './index.ts';

const here = dirname(fileURLToPath(import.meta.url));

describe('svc-topology package', () => {
  it('imports nothing but node: built-ins and its own modules', () => {
    const files = readdirSync(here).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'));
    expect(files).toContain('index.ts');
    for (const f of files) {
      for (const m of readFileSync(join(here, f), 'utf8').matchAll(/^(?:import|export)\b[^;]*?from '([^']+)'/gms)) {
        const spec = m[1]!;
        if (spec.startsWith('node:')) continue;
        expect(spec.startsWith('./'), `${f} imports ${spec}`).toBe(true);
        expect(dirname(resolve(here, spec)), `${f} imports ${spec}`).toBe(here);
      }
    }
  });

  it('refuses a bad layout with a TopologyError that carries the server registry mark', () => {
    const err = (() => {
      try {
        buildPoolLayouts(['/d1', '/e{1...4}'], { storageClass: { standard: { kind: 'auto' }, rrs: { kind: 'auto' } }, cwd: '/' });
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(TopologyError);
    expect(err).toMatchObject({ code: 'InvalidTopology', status: 500, name: 'SvcError' });
    expect((err as Record<symbol, unknown>)[Symbol.for('svc.error')]).toBe(true);
  });
});
