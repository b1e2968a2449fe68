/**
 * Server-side printing (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`,
 * what `kubectl get` asks for): a `meta.k8s.io/v1` Table whose columns are
 * Name and the CRD's `additionalPrinterColumns` (evaluated by their
 * JSONPath), or Name and Age where a kind declares none (as the API server's
 * default table for custom resources). Rows carry the object's
 * metadata (PartialObjectMetadata), as kubectl's default `includeObject`.
 */
import { isObject } from './structured.ts';
import type { Obj } from './store.ts';

export interface PrinterColumn {
  name: string;
  type: string;
  jsonPath: string;
  description?: string;
  priority?: number;
  format?: string;
}

/** Whether an Accept header asks for a Table. */
export function wantsTable(accept: string | undefined): boolean {
  return (accept ?? '').split(',').some((part) => part.includes('as=Table') && part.includes('g=meta.k8s.io') && /v=v1(;|$)/.test(part.replace(/\s/g, '')));
}

/** A JSONPath of the subset printer columns use: `.a.b`, `[n]`, `[?(@.k=="v")]`. */
export function evalJsonPath(obj: unknown, path: string): unknown[] {
  let cur: unknown[] = [obj];
  const re = /\.([A-Za-z0-9_-]+)|\[(\d+)\]|\[\?\(@\.([A-Za-z0-9_.-]+)\s*==\s*"([^"]*)"\)\]/g;
  let m: RegExpExecArray | null;
  let consumed = 0;
  while ((m = re.exec(path)) !== null) {
    if (m.index !== consumed) return [];
    consumed = re.lastIndex;
    const next: unknown[] = [];
    for (const c of cur) {
      if (m[1] !== undefined) {
        if (isObject(c) && c[m[1]] !== undefined) next.push(c[m[1]]);
      } else if (m[2] !== undefined) {
        if (Array.isArray(c) && c[Number(m[2])] !== undefined) next.push(c[Number(m[2])]);
      } else if (Array.isArray(c)) {
        for (const item of c) {
          let v: unknown = item;
          for (const k of m[3]!.split('.')) v = isObject(v) ? v[k] : undefined;
          if (String(v) === m[4]) next.push(item);
        }
      }
    }
    cur = next;
  }
  return consumed === path.length ? cur : [];
}

export function toTable(items: Obj[], columns: PrinterColumn[], resourceVersion: string): unknown {
  const age: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: 'CreationTimestamp is a timestamp representing the server time when this object was created.' };
  const cols = columns.length > 0 ? columns : [age];
  const defs = [
    { name: 'Name', type: 'string', format: 'name', description: 'Name must be unique within a namespace.', priority: 0 },
    ...cols.map((c) => ({ name: c.name, type: c.type, format: c.format ?? '', description: c.description ?? '', priority: c.priority ?? 0 })),
  ];
  const rows = items.map((o) => ({
    cells: [
      o.metadata.name,
      ...cols.map((c) => {
        const v = evalJsonPath(o, c.jsonPath);
        if (v.length === 0) return null;
        const first = v[0];
        return c.type === 'integer' || c.type === 'number' || c.type === 'boolean' ? first : typeof first === 'string' ? first : JSON.stringify(first);
      }),
    ],
    object: { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: o.metadata },
  }));
  return { kind: 'Table', apiVersion: 'meta.k8s.io/v1', metadata: { resourceVersion }, columnDefinitions: defs, rows };
}
