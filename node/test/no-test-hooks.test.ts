/**
 * No production class accepts a test-hook option: crash points and drive
 * faults come from test-side decorators (`helpers/faulty-drive.ts`). Every
 * property, parameter and constructor option declared in node/src and
 * operator/src (tests excluded) is read with the TypeScript parser; one whose
 * name says test, crash, fault or failpoint, whose doc calls it test-only, or
 * a `hooks` option other than the scanner's production hooks, fails here.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');

/** Production hook options, each with why it is not a test seam. */
const ALLOWED_HOOKS = new Map<string, string>([
  ['node/src/background/scanner.ts', 'ScannerOptions.hooks: per-object work of the scanner cycle (the lifecycle executor)'],
  ['node/src/object/post-commit.ts', 'combineHooks(hooks): the post-commit consumers (notifications, replication) asked as one'],
  ['node/src/object/server-pools.ts', '#hooks: the post-commit consumers by slot (notifications, replication), registered by the server'],
]);

const SUSPECT_NAME = /^(test|crash|fault|failpoint|inject)|(Test|Crash|Fault|Failpoint|Inject)[A-Z]?[a-z]*$|^(commit|drive|step|test)Hooks?$/;
const SUSPECT_DOC = /\btest[- ]only\b|\bfor tests\b|\btests only\b|\btest hooks?\b|\bcrash points?\b/i;

export interface Finding {
  file: string;
  line: number;
  name: string;
  why: string;
}

/** Test-hook declarations in one source text. */
export function findTestHooks(file: string, text: string): Finding[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const out: Finding[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isPropertySignature(node) || ts.isPropertyDeclaration(node) || ts.isParameter(node)) {
      const nameNode = node.name;
      const name = ts.isIdentifier(nameNode) || ts.isPrivateIdentifier(nameNode) || ts.isStringLiteral(nameNode) ? nameNode.text.replace(/^#/, '') : '';
      const docs = ts
        .getLeadingCommentRanges(text, node.getFullStart())
        ?.map((r) => text.slice(r.pos, r.end))
        .join('\n');
      const line = sf.getLineAndCharacterOfPosition(node.getStart()).line + 1;
      if (name && SUSPECT_NAME.test(name)) out.push({ file, line, name, why: 'its name says it is a test seam' });
      else if (docs && SUSPECT_DOC.test(docs)) out.push({ file, line, name, why: 'its doc calls it test-only' });
      else if (/^hooks$/i.test(name) && !ALLOWED_HOOKS.has(file)) out.push({ file, line, name, why: 'a hooks option outside the production hook list' });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

function productionFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== 'node_modules' && e.name !== '__golden__') out.push(...productionFiles(p));
    } else if (e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') && !e.name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

describe('no test hooks in production classes', () => {
  it('the check finds the kinds of seam it forbids', () => {
    const sample = `
      export interface SetOptions { drives: string[]; /** Test-only crash points of the commit. */ hooks?: { afterStep(): void } }
      export interface DriveOptions { endpoint?: string; commitHooks?: unknown; faultInjector?: () => void }
      export class Drive { constructor(readonly root: string, private readonly testDelay = 0) {} }
      export interface ScannerOptions { hooks?: readonly unknown[]; latest: boolean; contest: number }
    `;
    const found = findTestHooks('node/src/sample.ts', sample).map((f) => f.name);
    expect(found).toEqual(['hooks', 'commitHooks', 'faultInjector', 'testDelay', 'hooks']);
    expect(findTestHooks('node/src/background/scanner.ts', 'interface ScannerOptions { hooks?: readonly unknown[] }')).toEqual([]);
  });

  it('node/src and operator/src declare none', () => {
    const files = [...productionFiles(join(root, 'node', 'src')), ...productionFiles(join(root, 'operator', 'src'))];
    expect(files.length).toBeGreaterThan(200);
    const findings = files.flatMap((f) => findTestHooks(relative(root, f), readFileSync(f, 'utf8')));
    expect(findings.map((f) => `${f.file}:${f.line} ${f.name}: ${f.why}`)).toEqual([]);
  });
});
