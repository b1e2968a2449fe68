/**
 * Every action svc itself asks a policy about is one a policy may name: the
 * S3 operations' actions, the admin routes' and identity handlers'
 * permissions, the console's questions. A policy granting exactly what svc
 * asks for must never be refused as naming an unknown action.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { actionProblem } from '../iam/policy-actions.ts';
import { CONSOLE_ACTIONS } from './admin/iam.ts';
import { ADMIN_ROUTES } from './admin/routes.ts';
import { ACTIONS } from './s3/authz/actions.ts';
import type { S3Endpoint } from './s3/router.ts';

const known = (a: string) => actionProblem(a, ['s3', 'admin', 'kms', 'sts']) === undefined;

describe("svc's own actions", () => {
  it('every S3 operation asks for a known action (versioned or not)', () => {
    const plain: S3Endpoint = { op: 'GetObject', bucket: 'b', key: 'k', query: new Map() };
    const versioned: S3Endpoint = { op: 'GetObject', bucket: 'b', key: 'k', query: new Map([['versionId', 'v1']]) };
    for (const [op, spec] of Object.entries(ACTIONS)) {
      const asked = typeof spec.action === 'string' ? [spec.action] : [spec.action(plain), spec.action(versioned)];
      for (const a of asked) expect(known(a), `${op}: ${a}`).toBe(true);
    }
  });

  it('every admin route, identity handler and console question names a known action', () => {
    for (const r of ADMIN_ROUTES) expect(known(r.action), `${r.op}: ${r.action}`).toBe(true);
    for (const a of CONSOLE_ACTIONS) expect(known(a), a).toBe(true);
    // the identity handlers ask inline (need(…, 'admin:CreateUser')): every such name in the admin API's sources
    const dir = join(import.meta.dirname, 'admin');
    const named = readdirSync(dir)
      .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
      .flatMap((f) => [...readFileSync(join(dir, f), 'utf8').matchAll(/'(admin:[A-Za-z]+)'/g)].map((m) => m[1]!));
    expect(named.length).toBeGreaterThan(20);
    for (const a of new Set(named)) expect(known(a), a).toBe(true);
  });
});
