/**
 * Bulk work on a bucket: deleting a selection (one DeleteObjects call per
 * 1000), deleting everything under a prefix ("a folder") after counting it
 * and a typed confirmation, with progress in the tray (batches of 250, so
 * progress moves and a cancel stops between batches), and collecting the
 * files of a dropped or chosen folder with their paths.
 */
import type { BulkDeleteResult, ObjectListing, VersionsPage } from '../../src/api/console/wire.ts';
import { api } from './api.js';
import { h } from './dom.js';
import { formatCount, plural } from './format.js';
import { trayRow } from './tray.js';
import { confirmDialog } from './ui.js';

const BATCH = 250;

export interface Target {
  readonly key: string;
  readonly versionId?: string;
}

/** Every key under `prefix` (or every version and delete marker, with `versions`). */
export async function listUnder(bucket: string, prefix: string, versions: boolean): Promise<Target[]> {
  const b = encodeURIComponent(bucket);
  const out: Target[] = [];
  if (!versions) {
    let token = '';
    do {
      const r = await api<ObjectListing>('GET', `buckets/${b}/objects`, undefined, { prefix, token, limit: 1000, recursive: 'true' });
      for (const o of r.objects) out.push({ key: o.key });
      token = r.truncated ? r.nextToken : '';
    } while (token !== '');
    return out;
  }
  let keyMarker = '';
  let versionIdMarker = '';
  for (;;) {
    const r = await api<VersionsPage>('GET', `buckets/${b}/all-versions`, undefined, { prefix, keyMarker, versionIdMarker, limit: 1000, recursive: 'true' });
    for (const v of r.versions) out.push({ key: v.key, versionId: v.versionId });
    if (!r.truncated) return out;
    keyMarker = r.nextKeyMarker;
    versionIdMarker = r.nextVersionIdMarker;
  }
}

/**
 * Deletes `targets` in batches with a tray row; resolves with what was
 * deleted and what was refused (each with the API's code).
 */
export async function deleteInBatches(bucket: string, title: string, targets: readonly Target[]): Promise<{ deleted: number; errors: BulkDeleteResult['errors']; canceled: boolean }> {
  const row = trayRow(title, targets.length);
  let canceled = false;
  row.onCancel(() => {
    canceled = true;
  });
  let deleted = 0;
  const errors: BulkDeleteResult['errors'][number][] = [];
  row.progress(0, targets.length, `0 of ${formatCount(targets.length)} deleted`);
  try {
    for (let i = 0; i < targets.length && !canceled; i += BATCH) {
      const batch = targets.slice(i, i + BATCH).map((t) => ({ key: t.key, ...(t.versionId ? { versionId: t.versionId } : {}) }));
      const r = await api<BulkDeleteResult>('POST', `buckets/${encodeURIComponent(bucket)}/delete-objects`, { objects: batch });
      deleted += r.deleted.length;
      errors.push(...r.errors);
      row.progress(i + batch.length, targets.length, `${formatCount(deleted)} of ${formatCount(targets.length)} deleted${errors.length > 0 ? `, ${formatCount(errors.length)} refused` : ''}`);
    }
  } catch (err) {
    row.finish('failed', `${formatCount(deleted)} of ${formatCount(targets.length)} deleted before the error.`, err);
    throw err;
  }
  const summary = `${formatCount(deleted)} of ${formatCount(targets.length)} deleted${errors.length > 0 ? `, ${formatCount(errors.length)} refused (${errors[0]!.code}: ${errors[0]!.key})` : ''}.`;
  if (canceled) row.finish('canceled', `Canceled: ${summary}`);
  else if (errors.length > 0) row.finish('failed', summary);
  else row.finish('done', summary);
  return { deleted, errors, canceled };
}

/** The confirmation for deleting a selection: names them (the first ten, then how many more). */
export function confirmSelection(bucket: string, targets: readonly Target[], versioned: boolean): Promise<boolean> {
  const shown = targets.slice(0, 10);
  return confirmDialog({
    title: `Delete ${plural(targets.length, 'object')} from ${bucket}?`,
    body: h(
      'div',
      null,
      h('ul', { class: 'plain-list' }, ...shown.map((t) => h('li', null, h('code', null, t.key), t.versionId ? ` (version ${t.versionId})` : ''))),
      targets.length > shown.length ? h('p', null, `and ${formatCount(targets.length - shown.length)} more.`) : null,
      h(
        'p',
        null,
        targets.some((t) => t.versionId)
          ? 'The versions named are deleted for good.'
          : versioned
            ? 'Versioning is on: each gets a delete marker and its versions are kept.'
            : 'They are deleted for good.',
      ),
    ),
    confirmLabel: `Delete ${plural(targets.length, 'object')}`,
    danger: true,
  });
}

// ---- folders from the file picker or a drop

export interface PathFile {
  readonly path: string;
  readonly file: File;
}

/** Files of a `webkitdirectory` input, with their paths inside the chosen folder (`album/2024/a.jpg`). */
export function filesFromInput(files: FileList): PathFile[] {
  return [...files].map((f) => ({ path: f.webkitRelativePath || f.name, file: f }));
}

async function walk(entry: FileSystemEntry, base: string, out: PathFile[]): Promise<void> {
  if (entry.isFile) {
    const file = await new Promise<File>((resolve, reject) => (entry as FileSystemFileEntry).file(resolve, reject));
    out.push({ path: `${base}${entry.name}`, file });
    return;
  }
  if (!entry.isDirectory) return;
  const reader = (entry as FileSystemDirectoryEntry).createReader();
  // readEntries answers in chunks until it answers none
  for (;;) {
    const batch = await new Promise<FileSystemEntry[]>((resolve, reject) => reader.readEntries(resolve, reject));
    if (batch.length === 0) return;
    for (const e of batch) await walk(e, `${base}${entry.name}/`, out);
  }
}

/** Files of a drop, folders walked to every file inside them, each with its path. */
export async function filesFromDrop(dt: DataTransfer): Promise<PathFile[]> {
  const entries = [...dt.items].map((i) => (i.kind === 'file' ? i.webkitGetAsEntry() : null));
  if (entries.every((e) => e === null)) return [...dt.files].map((f) => ({ path: f.name, file: f }));
  const out: PathFile[] = [];
  for (const e of entries) if (e !== null) await walk(e, '', out);
  return out;
}
