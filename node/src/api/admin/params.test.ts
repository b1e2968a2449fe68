import { describe, expect, it } from 'vitest';
import { SvcError } from '../../util/errors.ts';
import { parseById, parseHealRequest, poolBatch, resolvePool, validateQuery } from './params.ts';
import { matchRoute, parseAdminEndpoint } from './routes.ts';

const POOLS = ['/a/d{1...4}', 'http://n{1...4}:9000/b{1...2}'];
const LAYOUT = { cmdlines: POOLS, pools: 2, setsOf: (p: number) => (p === 0 ? 1 : 2) };

function code(fn: () => unknown): string | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    if (err instanceof SvcError) return err.code;
    throw err;
  }
}

describe('the parameter validator', () => {
  it('rule 1: a pool by its exact command line, or by index with by-id=true', () => {
    expect(resolvePool(POOLS[1]!, false, POOLS)).toBe(1);
    expect(resolvePool('1', true, POOLS)).toBe(1);
    expect(code(() => resolvePool('1', false, POOLS))).toBe('InvalidArgument');
    expect(code(() => resolvePool('2', true, POOLS))).toBe('InvalidArgument');
    expect(code(() => resolvePool('-1', true, POOLS))).toBe('InvalidArgument');
    expect(code(() => resolvePool('/a/d{1...4}/', false, POOLS))).toBe('InvalidArgument');
    expect(code(() => resolvePool('', false, POOLS))).toBe('InvalidArgument');
    expect(poolBatch(new Map([['pool', '1,0'], ['by-id', 'true']]), POOLS)).toEqual([1, 0]);
  });
  it('rule 2: status routes ignore unknown parameters but not a repeated known one', () => {
    expect([...validateQuery([['pool', '0'], ['x', '1']], { kind: 'status', keys: ['pool'] })]).toEqual([['pool', '0']]);
    expect(code(() => validateQuery([['pool', '0'], ['pool', '1']], { kind: 'status', keys: ['pool'] }))).toBe('InvalidArgument');
  });
  it('rule 3: mutations refuse unknown and repeated parameters; by-id is true or false', () => {
    expect(code(() => validateQuery([['x', '1']], { kind: 'mutation', keys: ['pool'] }))).toBe('InvalidArgument');
    expect(code(() => validateQuery([['pool', '0'], ['pool', '0']], { kind: 'mutation', keys: ['pool'] }))).toBe('InvalidArgument');
    expect(parseById(undefined)).toBe(false);
    expect(parseById('false')).toBe(false);
    expect(parseById('true')).toBe(true);
    for (const v of ['maybe', 'TRUE', '1', '']) expect(code(() => parseById(v)), v).toBe('InvalidArgument');
  });
  it('rebalance start and stop refuse any query string', () => {
    expect(code(() => parseAdminEndpoint('POST', 'v3/rebalance/start', [['a', '']], Buffer.alloc(0), LAYOUT))).toBe('InvalidArgument');
    expect(parseAdminEndpoint('POST', 'v3/rebalance/stop', [], Buffer.alloc(0), LAYOUT).op).toBe('RebalanceStop');
  });
});

describe('heal requests (rule 5)', () => {
  const q = (pairs: [string, string][] = []) => validateQuery(pairs, { kind: 'mutation', keys: ['clientToken', 'forceStart', 'forceStop'] });
  const body = (o: unknown) => Buffer.from(JSON.stringify(o));
  it('a root heal needs recursive=true or both pool and set', () => {
    expect(code(() => parseHealRequest('', q(), body({}), LAYOUT))).toBe('InvalidArgument');
    expect(code(() => parseHealRequest('', q(), body({ pool: 1 }), LAYOUT))).toBe('InvalidArgument');
    expect(parseHealRequest('', q(), body({ recursive: true }), LAYOUT)).toMatchObject({ kind: 'start', bucket: '', opts: { recursive: true } });
    expect(parseHealRequest('', q(), body({ pool: 1, set: 1 }), LAYOUT)).toMatchObject({ kind: 'start', opts: { pool: 1, set: 1, recursive: false } });
    expect(code(() => parseHealRequest('', q(), body({ pool: 1, set: 2 }), LAYOUT))).toBe('InvalidArgument');
    expect(code(() => parseHealRequest('', q(), body({ pool: 2, set: 0 }), LAYOUT))).toBe('InvalidArgument');
  });
  it('a bucket heal is recursive; a prefix heal honours recursive', () => {
    expect(parseHealRequest('photos', q(), body({}), LAYOUT)).toMatchObject({ bucket: 'photos', prefix: '', opts: { recursive: true } });
    expect(parseHealRequest('photos/2024/', q(), body({}), LAYOUT)).toMatchObject({ bucket: 'photos', prefix: '2024/', opts: { recursive: false } });
    expect(code(() => parseHealRequest('Bad_Bucket', q(), body({}), LAYOUT))).toBe('InvalidBucketName');
  });
  it('readRepair=true is refused, nolock is forced false, scanMode takes ints and names', () => {
    expect(code(() => parseHealRequest('bkt', q(), body({ readRepair: true }), LAYOUT))).toBe('InvalidArgument');
    const r = parseHealRequest('bkt', q(), body({ nolock: true, scanMode: 'deep', dryRun: true }), LAYOUT);
    expect(r).toMatchObject({ opts: { nolock: false, scanMode: 2, dryRun: true } });
    expect(parseHealRequest('bkt', q(), body({ scanMode: 1 }), LAYOUT)).toMatchObject({ opts: { scanMode: 1 } });
    expect(code(() => parseHealRequest('bkt', q(), body({ scanMode: 7 }), LAYOUT))).toBe('InvalidArgument');
    expect(code(() => parseHealRequest('bkt', q(), Buffer.from('{'), LAYOUT))).toBe('InvalidArgument');
  });
  it('clientToken, forceStart and forceStop correlate start, status and stop', () => {
    expect(parseHealRequest('bkt', q([['clientToken', 't']]), Buffer.alloc(0), LAYOUT)).toEqual({ kind: 'status', clientToken: 't', bucket: 'bkt', prefix: '' });
    expect(parseHealRequest('bkt', q([['clientToken', 't'], ['forceStop', 'true']]), Buffer.alloc(0), LAYOUT)).toEqual({ kind: 'stop', clientToken: 't', bucket: 'bkt', prefix: '' });
    expect(parseHealRequest('bkt', q([['forceStart', '']]), body({}), LAYOUT)).toMatchObject({ kind: 'start', forceStart: true });
    expect(code(() => parseHealRequest('bkt', q([['forceStart', 'true'], ['forceStop', 'true']]), Buffer.alloc(0), LAYOUT))).toBe('InvalidRequest');
    expect(code(() => parseHealRequest('bkt', q([['clientToken', 't'], ['forceStart', 'true']]), Buffer.alloc(0), LAYOUT))).toBe('InvalidRequest');
    expect(code(() => parseHealRequest('bkt', q([['forceStop', 'true']]), Buffer.alloc(0), LAYOUT))).toBe('InvalidRequest');
    expect(code(() => parseHealRequest('bkt', q([['forceStop', 'yes']]), Buffer.alloc(0), LAYOUT))).toBe('InvalidArgument');
    expect(code(() => q([['sinceSeq', '1']]))).toBe('InvalidArgument');
  });
});

describe('routes', () => {
  it('match method and versioned path; the heal route takes bucket and prefix', () => {
    expect(matchRoute('GET', 'v3/pools/list').route.op).toBe('PoolsList');
    expect(matchRoute('POST', 'v3/heal/photos/a%20b').rest).toBe('photos/a%20b');
    expect(matchRoute('POST', 'v3/heal').route.op).toBe('Heal');
    expect(code(() => matchRoute('GET', 'v3/heal/'))).toBe('MethodNotAllowed');
    expect(code(() => matchRoute('GET', 'v5/pools/list'))).toBe('XSvcAdminNoSuchRoute');
    const ep = parseAdminEndpoint('POST', 'v3/heal/photos/a%20b', [], Buffer.alloc(0), LAYOUT);
    expect(ep).toMatchObject({ op: 'Heal', heal: { bucket: 'photos', prefix: 'a b' } });
  });
});
