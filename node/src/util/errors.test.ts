/** The shared topology package's errors are registry errors of the server's. */
import { TOPOLOGY_ERRORS, TopologyError } from 'svc-topology';
import { describe, expect, it } from 'vitest';
import { ERRORS, hasCode, SvcError, toSvcError } from './errors.ts';

describe('error registry', () => {
  it("svc-topology's codes are registry codes with the same status, and its errors pass as SvcErrors", () => {
    for (const [code, { status }] of Object.entries(TOPOLOGY_ERRORS)) {
      expect(ERRORS[code as keyof typeof ERRORS], code).toBeDefined();
      expect(ERRORS[code as keyof typeof ERRORS].status, code).toBe(status);
    }
    const err = new TopologyError('InvalidStorageClassConfig', 'EC:9 on a set of 4', { name: 'SVC_STORAGE_CLASS_STANDARD' });
    expect(err instanceof SvcError).toBe(true);
    expect(hasCode(err, 'InvalidStorageClassConfig')).toBe(true);
    expect(toSvcError(err)).toBe(err);
  });
});
