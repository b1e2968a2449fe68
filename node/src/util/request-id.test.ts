import { describe, expect, it } from 'vitest';
import { newRequestId } from './request-id.ts';

describe('newRequestId', () => {
  it('16 upper-case hex digits, all distinct across several refills of the pool', () => {
    const ids = Array.from({ length: 2000 }, () => newRequestId());
    for (const id of ids) expect(id).toMatch(/^[0-9A-F]{16}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
