/**
 * Deleting one version or delete marker, from the object page and from a
 * bucket listing that shows versions: a confirmation that says exactly what
 * happens (a version is gone for good; removing the latest delete marker
 * restores the object; the `null` version is the one written while
 * versioning was off), an optional governance bypass on object-locked
 * buckets, and an outcome message that says what happened.
 */
import type { ObjectVersion } from '../../src/api/console/wire.ts';
import { api } from './api.js';
import { announce, h } from './dom.js';
import { checkRow, confirmDialog, errorBox } from './ui.js';

/** `version 3f2a…` or `the null version`. */
export function versionName(id: string): string {
  return id === 'null' ? 'the null version (written while versioning was off or suspended)' : `version ${id}`;
}

function leafOf(key: string): string {
  return key.slice(key.lastIndexOf('/', key.length - 2) + 1) || key;
}

/** Asks, deletes, and writes the outcome (or the refusal) into `out`; true when something was deleted. */
export async function deleteVersion(bucket: string, v: Pick<ObjectVersion, 'key' | 'versionId' | 'deleteMarker' | 'isLatest'>, o: { lockEnabled: boolean; out: HTMLElement }): Promise<boolean> {
  const name = leafOf(v.key);
  const bypass = o.lockEnabled && !v.deleteMarker ? h('input', { type: 'checkbox', id: 'bypass-governance', 'aria-describedby': 'bypass-governance-hint' }) : null;
  const body = v.deleteMarker
    ? v.isLatest
      ? `Removing this delete marker restores ${name}: its newest version becomes the current one again. Nothing is deleted.`
      : `This delete marker is not the latest entry of ${name}: removing it changes nothing a reader sees.`
    : `${versionName(v.versionId)[0]!.toUpperCase()}${versionName(v.versionId).slice(1)} of ${v.key} is deleted for good; it cannot be restored.${v.isLatest ? ' The next older version, if any, becomes the current one.' : ''}`;
  const ok = await confirmDialog({
    title: v.deleteMarker ? `Remove the delete marker of ${name}?` : `Delete ${versionName(v.versionId).split(' (')[0]} of ${name}?`,
    body: h(
      'div',
      null,
      h('p', null, body),
      h('p', null, 'Version: ', h('code', null, v.versionId)),
      bypass ? checkRow(bypass, 'Bypass governance retention', 'Deletes a version under GOVERNANCE retention (needs the s3:BypassGovernanceRetention permission). COMPLIANCE retention and legal holds are never bypassed.') : null,
    ),
    confirmLabel: v.deleteMarker ? 'Remove delete marker' : 'Delete version',
    danger: !v.deleteMarker,
  });
  if (!ok) return false;
  try {
    await api('DELETE', `buckets/${encodeURIComponent(bucket)}/object`, undefined, { key: v.key, versionId: v.versionId, bypassGovernance: bypass?.checked ? 'true' : undefined });
    const done = v.deleteMarker ? (v.isLatest ? `Delete marker removed: ${v.key} is restored.` : `Delete marker ${v.versionId} of ${v.key} removed.`) : `${versionName(v.versionId).split(' (')[0]} of ${v.key} deleted for good.`;
    o.out.replaceChildren(h('p', { role: 'status', class: 'success' }, done[0]!.toUpperCase() + done.slice(1)));
    announce(done);
    return true;
  } catch (err) {
    o.out.replaceChildren(errorBox(err));
    return false;
  }
}
