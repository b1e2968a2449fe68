import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SvcError } from '../util/errors.ts';
import { decodeMsg, encodeFrame, encodeMsg, errorFromWire, errorToWire, FRAME_END, FRAME_RECORD, FrameParser } from './rpc-wire.ts';

describe('record frames', () => {
  it('parse back whatever way the byte stream is cut', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.string(), fc.integer(), fc.uint8Array({ maxLength: 3000 })), { maxLength: 20 }),
        fc.array(fc.integer({ min: 1, max: 700 }), { minLength: 1, maxLength: 50 }),
        (records, cuts) => {
          const wire = Buffer.concat([...records.map((r) => encodeFrame(FRAME_RECORD, encodeMsg(r))), encodeFrame(FRAME_END, Buffer.alloc(0))]);
          const parser = new FrameParser();
          const got: unknown[] = [];
          let ended = false;
          let off = 0;
          let i = 0;
          while (off < wire.length) {
            const n = cuts[i++ % cuts.length]!;
            for (const f of parser.push(wire.subarray(off, off + n))) {
              if (f.type === FRAME_END) ended = true;
              else got.push(decodeMsg(f.payload));
            }
            off += n;
          }
          expect(ended).toBe(true);
          expect(parser.pending).toBe(0);
          expect(got).toEqual(records);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('maps errors across the wire by code, unknown codes to InternalError', () => {
    const e = errorFromWire(errorToWire(new SvcError('VolumeNotEmpty', 'busy')), 'peer');
    expect(e.code).toBe('VolumeNotEmpty');
    expect(e.message).toBe('busy');
    expect(errorFromWire({ code: 'NoSuchThing', message: 'x' }, 'peer').code).toBe('InternalError');
    expect(errorToWire(new TypeError('boom')).code).toBe('InternalError');
  });
});
