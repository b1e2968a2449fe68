import { SvcError } from '../../src/util/errors.ts';

/** The SvcError code `fn` throws, or undefined when it returns; anything else is rethrown. */
export function code(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    if (err instanceof SvcError) return err.code;
    throw err;
  }
  return undefined;
}

/** The SvcError code `p` rejects with, or undefined when it resolves; anything else is rethrown. */
export async function codeOf(p: Promise<unknown>): Promise<string | undefined> {
  try {
    await p;
  } catch (err) {
    if (err instanceof SvcError) return err.code;
    throw err;
  }
  return undefined;
}
