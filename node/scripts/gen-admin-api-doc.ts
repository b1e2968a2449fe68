/**
 * Regenerates docs/admin-api.md from a live two-pool `svc server`:
 *   node node/scripts/gen-admin-api-doc.ts
 * The admin API test fails when the document and the live answers drift apart.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ADMIN_ROUTES } from '../src/api/admin/routes.ts';
import { admin, startTwoPoolServer } from '../test/helpers/admin.ts';
import { EXAMPLE_SERVER_ENV, exampleQuery, type LiveAnswer, prepareExamples, renderDoc, ROUTE_EXAMPLES, sanitize } from '../test/helpers/admin-doc.ts';

const REPO = join(import.meta.dirname, '..', '..');
const DOC = join(REPO, 'docs', 'admin-api.md');
const MARK = '## Routes';

const current = readFileSync(DOC, 'utf8');
const intro = current.slice(0, current.indexOf(MARK) + MARK.length);
const s = await startTwoPoolServer(EXAMPLE_SERVER_ENV);
try {
  await prepareExamples(s.url, s.creds);
  const answers: LiveAnswer[] = [];
  for (const r of ADMIN_ROUTES) {
    const e = ROUTE_EXAMPLES[r.op];
    const query = exampleQuery(e, s.pools);
    const res = await admin(s.url, s.creds, { method: e.method, path: e.path, query, ...(e.body ? { body: e.body } : {}) });
    const qs = new URLSearchParams(query).toString();
    answers.push({
      op: r.op,
      target: sanitize(`/svc/admin/${e.path}${qs ? `?${decodeURIComponent(qs)}` : ''}`, s.base, s.run.port),
      status: res.status,
      body: sanitize(res.body, s.base, s.run.port),
    });
  }
  writeFileSync(DOC, renderDoc(`${intro}\n`, answers));
  process.stdout.write(`wrote ${DOC}\n`);
} finally {
  await s.stop();
}
