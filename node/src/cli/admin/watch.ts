/**
 * `--watch`: fetch and draw a frame every interval until the work is done.
 * On a terminal the frame is redrawn in place (log-update: cursor movement,
 * line erasing and wrapping handled); piped, each frame is printed after the
 * last, so logs of a watch stay readable. Without `--watch`, one frame.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { createLogUpdate } from 'log-update';

export interface Frame {
  readonly text: string;
  /** Nothing left to watch (no queued or running work). */
  readonly done: boolean;
}

export interface WatchOptions {
  readonly watch: boolean;
  readonly intervalMs: number;
}

export async function watch(out: NodeJS.WritableStream & { isTTY?: boolean }, frame: () => Promise<Frame>, o: WatchOptions): Promise<void> {
  let f = await frame();
  if (!o.watch || f.done) {
    out.write(`${f.text}\n`);
    return;
  }
  if (out.isTTY === true) {
    const draw = createLogUpdate(out as NodeJS.WriteStream);
    try {
      draw(f.text);
      while (!f.done) {
        await sleep(o.intervalMs);
        f = await frame();
        draw(f.text);
      }
    } finally {
      draw.done();
    }
    return;
  }
  out.write(`${f.text}\n`);
  while (!f.done) {
    await sleep(o.intervalMs);
    f = await frame();
    out.write(`\n${f.text}\n`);
  }
}
