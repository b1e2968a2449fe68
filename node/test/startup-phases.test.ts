/**
 * Start-up composes the node in phases that construct values and pass them
 * forward (docs/architecture.md, "Start-up phases"): nothing is attached or
 * set after construction, and no bag of optional fields is filled in later.
 * The composition modules are read with the TypeScript parser; this fails on
 *
 * - a member of a composed value (an interface other than an
 *   `…Options`/`…Deps` input) named like a late binder, `attach…`, `set…`,
 *   `install…`, `on…`, or a public class method named `attach…`,
 *   `detach…`, `install…` (the removed
 *   `admin.attach`, `dispatcher.setHandlers`, `cluster.attachReadiness`,
 *   `cluster.onBucketMetaChanged`, `DriveHealer.attach`);
 * - a property without `readonly` in any interface of the server's
 *   composition (a mutable bag such as the removed `AdminWorkers`);
 * - a `let` in `start-node.ts` (a closure over a later-assigned value).
 *
 * A later phase's result reaches earlier ones as one settle-once
 * `Eventual` (`util/eventual.ts`).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const src = join(import.meta.dirname, '..', 'src');

/** The modules that compose the node at start-up. */
const COMPOSITION = [
  'server/start-node.ts',
  'server/start-server.ts',
  'server/admin-plane.ts',
  'server/dispatcher.ts',
  'server/healing-plane.ts',
  'server/node-jobs.ts',
  'cluster/cluster-node.ts',
];

/** Compositions inside the background layer: late binders only (their records, such as a drive's rebuild tracker, are state by design). */
const BACKGROUND_COMPOSITION = ['background/healing.ts', 'background/heal/drive-healer.ts'];

const LATE_BINDER = /^(attach|detach|install)|^set[A-Z]|^on[A-Z]/;
/** On classes, whose `set…` methods are often runtime state (a rebuild's progress), only the wiring verbs. */
const CLASS_LATE_BINDER = /^(attach|detach|install)/;

/** Late-binding members and mutable fields declared in one source text. */
export function findLateBinding(file: string, text: string, o: { noLet?: boolean; mutableFields?: boolean } = {}): string[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const out: string[] = [];
  const at = (n: ts.Node) => `${file}:${sf.getLineAndCharacterOfPosition(n.getStart()).line + 1}`;
  const visit = (node: ts.Node): void => {
    if (ts.isInterfaceDeclaration(node)) {
      const input = /(Options|Deps)$/.test(node.name.text);
      for (const m of node.members) {
        const name = m.name !== undefined && (ts.isIdentifier(m.name) || ts.isStringLiteral(m.name)) ? m.name.text : '';
        if (!input && LATE_BINDER.test(name)) out.push(`${at(m)} ${node.name.text}.${name}: a late binder on a composed value`);
        if (o.mutableFields !== false && ts.isPropertySignature(m) && !m.modifiers?.some((x) => x.kind === ts.SyntaxKind.ReadonlyKeyword)) {
          out.push(`${at(m)} ${node.name.text}.${name}: a mutable field`);
        }
      }
    }
    if (ts.isClassDeclaration(node)) {
      for (const m of node.members) {
        if (!ts.isMethodDeclaration(m) || !ts.isIdentifier(m.name)) continue;
        if (m.modifiers?.some((x) => x.kind === ts.SyntaxKind.PrivateKeyword)) continue;
        if (CLASS_LATE_BINDER.test(m.name.text)) out.push(`${at(m)} ${node.name?.text ?? 'class'}.${m.name.text}: a late binder on a composed value`);
      }
    }
    if (o.noLet === true && ts.isVariableDeclarationList(node) && (node.flags & ts.NodeFlags.Let) !== 0) {
      out.push(`${at(node)} let ${node.declarations.map((d) => d.name.getText(sf)).join(', ')}: a later-assigned value`);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

describe('start-up phases without late binding', () => {
  it('the check finds the kinds of late binding it forbids', () => {
    const sample = `
      export interface AdminWorkers { heal?: HealWorker; readonly usage?: () => number }
      export interface AdminPlane { readonly handler: Handler; attach(layer: Layer): void }
      export interface Dispatcher { readonly handle: Handler; setHandlers(h: Handlers): void }
      export interface ClusterNode { onBucketMetaChanged(h: (b: string) => void): void; registerPeerService(s: Service): void }
      export interface ServerDeps { readonly onFatal?: (e: Error) => void }
      export async function startNode() { let layer; const x = 1; }
      export class DriveHealer { check(): void {} attach(s: Sequences): void {} #own(): void {} }
    `;
    expect(findLateBinding('sample.ts', sample, { noLet: true })).toEqual([
      'sample.ts:2 AdminWorkers.heal: a mutable field',
      'sample.ts:3 AdminPlane.attach: a late binder on a composed value',
      'sample.ts:4 Dispatcher.setHandlers: a late binder on a composed value',
      'sample.ts:5 ClusterNode.onBucketMetaChanged: a late binder on a composed value',
      'sample.ts:7 let layer: a later-assigned value',
      'sample.ts:8 DriveHealer.attach: a late binder on a composed value',
    ]);
  });

  it('the composition modules declare none', () => {
    const findings = [
      ...COMPOSITION.flatMap((f) => findLateBinding(f, readFileSync(join(src, f), 'utf8'), { noLet: f === 'server/start-node.ts' })),
      ...BACKGROUND_COMPOSITION.flatMap((f) => findLateBinding(f, readFileSync(join(src, f), 'utf8'), { mutableFields: false })),
    ];
    expect(findings).toEqual([]);
  });
});
