/**
 * The upload tray: every upload and bulk job of this tab in one list that
 * lives beside the pages, not in them, so moving to another page of the
 * console neither stops nor hides it. While anything runs, leaving or
 * reloading the page asks first (`beforeunload`). A job the user cancels
 * reads *canceled*; only a real failure reads *failed*, with its error.
 */
import type { UploadResult } from '../../src/api/console/wire.ts';
import { ApiError } from './api.js';
import { announce, h } from './dom.js';
import { formatBytes, formatPercent } from './format.js';
import { badge, errorBox } from './ui.js';
import { uploadFile } from './upload.js';

let seq = 0;
let running = 0;
let list: HTMLUListElement | undefined;
let box: HTMLElement | undefined;

function onBeforeUnload(ev: BeforeUnloadEvent): void {
  ev.preventDefault();
  // older browsers show the prompt only when returnValue is set
  ev.returnValue = '';
}

function started(): void {
  if (running++ === 0) window.addEventListener('beforeunload', onBeforeUnload);
}

function ended(): void {
  if (--running === 0) window.removeEventListener('beforeunload', onBeforeUnload);
}

/** Jobs running now (uploads and bulk actions). */
export function activeJobs(): number {
  return running;
}

/** The tray's element, created once per signed-in shell. */
export function trayElement(): HTMLElement {
  list = h('ul', { class: 'uploads', id: 'upload-tray-list', 'aria-label': 'Uploads and bulk actions' });
  const clearDone = h('button', { type: 'button', class: 'button button-quiet', id: 'tray-clear' }, 'Clear finished');
  clearDone.addEventListener('click', () => {
    for (const li of [...(list?.querySelectorAll('li[data-finished="true"]') ?? [])]) li.remove();
    if (list && list.children.length === 0 && box) box.hidden = true;
  });
  box = h('aside', { class: 'tray card', id: 'upload-tray', 'aria-labelledby': 'tray-title', hidden: true }, h('div', { class: 'card-head' }, h('h2', { id: 'tray-title' }, 'Uploads and bulk actions'), clearDone), list);
  return box;
}

export interface TrayRow {
  readonly row: HTMLLIElement;
  progress(done: number, total: number, text: string): void;
  finish(state: 'done' | 'failed' | 'canceled', message?: string, err?: unknown): void;
  onCancel(fn: () => void): void;
}

/** A row in the tray for a job; `ended()` runs once when it finishes. */
export function trayRow(title: string, total: number): TrayRow {
  const n = seq++;
  const bar = h('progress', { id: `upload-progress-${n}`, max: total || 1, value: 0, 'aria-label': `Progress of ${title}` });
  const text = h('span', { class: 'upload-text', id: `upload-text-${n}` }, '');
  const status = h('span', { class: 'upload-status', id: `upload-status-${n}` }, badge('info', 'running'));
  const cancel = h('button', { type: 'button', class: 'button button-quiet', id: `upload-cancel-${n}` }, 'Cancel', h('span', { class: 'visually-hidden' }, ` ${title}`));
  const row = h('li', { class: 'upload', id: `upload-${n}` }, h('span', { class: 'upload-name' }, title), bar, text, status, cancel);
  if (list && box) {
    list.appendChild(row);
    box.hidden = false;
  }
  started();
  let finished = false;
  return {
    row,
    progress(done, t, words) {
      bar.max = t || 1;
      bar.value = Math.min(done, t || 1);
      text.textContent = words;
    },
    finish(state, message, err) {
      if (finished) return;
      finished = true;
      ended();
      row.dataset.finished = 'true';
      cancel.remove();
      if (state === 'done') bar.value = bar.max;
      const words = { done: 'done', failed: 'failed', canceled: 'canceled' }[state];
      status.replaceChildren(badge(state === 'done' ? 'ok' : state === 'failed' ? 'bad' : 'idle', words, { 'data-state': state }));
      if (message !== undefined) text.textContent = message;
      if (state === 'failed' && err !== undefined) row.appendChild(errorBox(err));
      announce(`${title}: ${message ?? words}`);
    },
    onCancel(fn) {
      cancel.addEventListener('click', fn);
    },
  };
}

/**
 * Uploads `file` to `bucket/key` with a row in the tray; `onDone` runs after
 * a successful upload (the page refreshes its listing if it still shows it).
 */
export function startUpload(bucket: string, key: string, file: File, onDone: (r: UploadResult) => void): void {
  const t = trayRow(`${bucket}/${key}`, file.size);
  t.progress(0, file.size, `0 of ${formatBytes(file.size)}`);
  const handle = uploadFile(bucket, key, file, (loaded, total) => t.progress(loaded, total, `${formatBytes(loaded)} of ${formatBytes(total)} (${formatPercent(total > 0 ? loaded / total : 1)})`));
  let canceled = false;
  t.onCancel(() => {
    canceled = true;
    handle.cancel();
  });
  handle.done.then(
    (r) => {
      t.finish('done');
      announce(`${file.name} uploaded${r.versionId ? ` (version ${r.versionId})` : ''}.`);
      onDone(r);
    },
    (err: unknown) => {
      if (canceled || (err instanceof ApiError && err.code === 'Canceled')) t.finish('canceled', 'Canceled: nothing was stored.');
      else t.finish('failed', 'The upload failed; nothing was stored.', err);
    },
  );
}
