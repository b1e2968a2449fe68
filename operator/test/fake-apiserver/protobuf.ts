/**
 * Kubernetes' protobuf request encoding, for the kinds clients send that way
 * here: Helm's release storage writes its Secrets as
 * `application/vnd.kubernetes.protobuf` (the `k8s\0` magic, a
 * `runtime.Unknown` envelope, the object in `raw`). Decoded into the JSON
 * shape the store keeps; other kinds are refused with 415 as an API server
 * without their protobuf registration would.
 */
import { ApiError } from './errors.ts';
import type { Obj } from './store.ts';

type Field = { n: number; wire: number; value: bigint | Buffer };

function fields(buf: Buffer): Field[] {
  const out: Field[] = [];
  let i = 0;
  const varint = (): bigint => {
    let v = 0n;
    let shift = 0n;
    for (;;) {
      if (i >= buf.length) throw new ApiError(400, 'BadRequest', 'protobuf: truncated varint');
      const b = buf[i++]!;
      v |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return v;
      shift += 7n;
    }
  };
  while (i < buf.length) {
    const key = Number(varint());
    const n = key >> 3;
    const wire = key & 7;
    if (wire === 0) out.push({ n, wire, value: varint() });
    else if (wire === 2) {
      const len = Number(varint());
      out.push({ n, wire, value: buf.subarray(i, i + len) });
      i += len;
    } else if (wire === 1) {
      out.push({ n, wire, value: buf.subarray(i, i + 8) });
      i += 8;
    } else if (wire === 5) {
      out.push({ n, wire, value: buf.subarray(i, i + 4) });
      i += 4;
    } else throw new ApiError(400, 'BadRequest', `protobuf: unsupported wire type ${wire}`);
  }
  return out;
}

const str = (f: Field) => (f.value as Buffer).toString('utf8');
const all = (fs: Field[], n: number) => fs.filter((f) => f.n === n);
const one = (fs: Field[], n: number) => fs.find((f) => f.n === n);

function mapEntries(fs: Field[], n: number, value: (b: Buffer) => string): Record<string, string> | undefined {
  const entries = all(fs, n).map((f) => {
    const kv = fields(f.value as Buffer);
    return [str(one(kv, 1)!), value((one(kv, 2)?.value as Buffer | undefined) ?? Buffer.alloc(0))] as const;
  });
  return entries.length ? Object.fromEntries(entries) : undefined;
}

function objectMeta(buf: Buffer): Obj['metadata'] {
  const fs = fields(buf);
  const m: Record<string, unknown> = {};
  const s = (n: number, k: string) => {
    const f = one(fs, n);
    if (f && str(f) !== '') m[k] = str(f);
  };
  s(1, 'name');
  s(2, 'generateName');
  s(3, 'namespace');
  s(5, 'uid');
  s(6, 'resourceVersion');
  const labels = mapEntries(fs, 11, (b) => b.toString('utf8'));
  if (labels) m['labels'] = labels;
  const annotations = mapEntries(fs, 12, (b) => b.toString('utf8'));
  if (annotations) m['annotations'] = annotations;
  const finalizers = all(fs, 14).map(str);
  if (finalizers.length) m['finalizers'] = finalizers;
  return m as Obj['metadata'];
}

function secret(raw: Buffer): Obj {
  const fs = fields(raw);
  const o: Obj = { apiVersion: 'v1', kind: 'Secret', metadata: objectMeta((one(fs, 1)?.value as Buffer | undefined) ?? Buffer.alloc(0)) };
  const data = mapEntries(fs, 2, (b) => b.toString('base64'));
  if (data) o['data'] = data;
  const type = one(fs, 3);
  if (type && str(type) !== '') o['type'] = str(type);
  const stringData = mapEntries(fs, 4, (b) => b.toString('utf8'));
  if (stringData) o['stringData'] = stringData;
  const immutable = one(fs, 5);
  if (immutable) o['immutable'] = immutable.value === 1n;
  return o;
}

/** DeleteOptions (Helm deletes its release Secrets with one): the fields a delete reads. */
function deleteOptions(raw: Buffer): Record<string, unknown> {
  const fs = fields(raw);
  const o: Record<string, unknown> = { kind: 'DeleteOptions', apiVersion: 'v1' };
  const grace = one(fs, 1);
  if (grace) o['gracePeriodSeconds'] = Number(grace.value as bigint);
  const pre = one(fs, 2);
  if (pre) {
    const p = fields(pre.value as Buffer);
    o['preconditions'] = { ...(one(p, 1) ? { uid: str(one(p, 1)!) } : {}), ...(one(p, 2) ? { resourceVersion: str(one(p, 2)!) } : {}) };
  }
  const policy = one(fs, 4);
  if (policy) o['propagationPolicy'] = str(policy);
  return o;
}

const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

/** Decodes a protobuf request body into the object it carries (as JSON would have). */
export function decodeProtobuf(body: Buffer): Obj {
  if (!body.subarray(0, 4).equals(MAGIC)) throw new ApiError(400, 'BadRequest', 'protobuf: missing the k8s magic prefix');
  const unknown = fields(body.subarray(4));
  const typeMeta = fields((one(unknown, 1)?.value as Buffer | undefined) ?? Buffer.alloc(0));
  const apiVersion = one(typeMeta, 1) ? str(one(typeMeta, 1)!) : '';
  const kind = one(typeMeta, 2) ? str(one(typeMeta, 2)!) : '';
  const raw = (one(unknown, 2)?.value as Buffer | undefined) ?? Buffer.alloc(0);
  if (apiVersion === 'v1' && kind === 'Secret') return secret(raw);
  if (kind === 'DeleteOptions') return deleteOptions(raw) as unknown as Obj;
  throw new ApiError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: application/json, application/yaml (protobuf here for ${apiVersion} ${kind} only as Secrets)`);
}
