/** Kubernetes resource quantities (`10Gi`, `1.5T`, `500M`, `1e9`) as byte counts, for comparing PVC sizes. Pure. */
const BINARY: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 };
const DECIMAL: Record<string, number> = { n: 1e-9, u: 1e-6, m: 1e-3, '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18 };

export function parseQuantity(q: string | number): number {
  if (typeof q === 'number') return q;
  const m = /^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]+)?$/.exec(q.trim());
  if (!m) throw new Error(`invalid quantity "${q}"`);
  const n = Number(m[1]);
  const suffix = m[2] ?? '';
  if (suffix in BINARY) return n * BINARY[suffix]!;
  if (suffix in DECIMAL) return n * DECIMAL[suffix]!;
  return n * 10 ** Number(suffix.slice(1));
}
