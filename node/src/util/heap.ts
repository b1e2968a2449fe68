/**
 * Keeps V8's young generation at its starting size. A streamed PUT turns
 * every socket read into a fresh 64 KiB buffer that dies at once; V8 frees
 * such buffers when it collects the young generation, and it grows that
 * generation (up to 16–32 MiB per semi-space here) while survivors are
 * common, so dead buffers pile up between collections. Measured with the S3
 * bench's streamed 1 GiB PUT (4 drives EC:2, aws-chunked): peak RSS 218–226
 * MiB with V8's default growth, 148–155 MiB with none, at the same or lower
 * server CPU per byte on every S3 bench row (more, cheaper young
 * collections). `--max-semi-space-size` would do the same but is read only
 * at start-up; the growth factor is read whenever the space would grow, so
 * it can be set from here. An operator who sizes the young generation on
 * the command line or in NODE_OPTIONS keeps that choice.
 */
import { setFlagsFromString } from 'node:v8';

export function capYoungGeneration(execArgv: readonly string[] = process.execArgv, env: NodeJS.ProcessEnv = process.env): boolean {
  const own = [...execArgv, ...(env.NODE_OPTIONS ?? '').split(/\s+/)];
  if (own.some((a) => /semi[-_]space/.test(a))) return false;
  setFlagsFromString('--semi-space-growth-factor=1');
  return true;
}
