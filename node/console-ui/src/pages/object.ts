/**
 * One object: its metadata, every version (download or delete each), and a
 * share link (a presigned GET the console signs; valid up to 7 days).
 */
import type { ObjectDetails, ObjectLockView, ShareLink, VersionListing } from '../../../src/api/console/wire.ts';
import { api, ApiError, apiUrl } from '../api.js';
import { announce, h, replaceContent } from '../dom.js';
import { formatBytes, formatCount } from '../format.js';
import { href, type Route } from '../router.js';
import { badge, confirmDialog, errorBox, facts, loading, pageHeader, section, showDone, table, time } from '../ui.js';
import { deleteVersion } from '../versions.js';
import { lockEditor, preview, tagsEditor } from './object-settings.js';

const UNITS: readonly [number, string][] = [
  [60, 'minutes'],
  [3600, 'hours'],
  [86_400, 'days'],
];
/** S3's longest presigned validity. */
const MAX_SHARE_SECONDS = 7 * 86_400;

export function renderObject(main: HTMLElement, route: Route): void {
  if (route.page !== 'object') return;
  const { bucket, key } = route;
  const parent = key.includes('/') ? key.slice(0, key.lastIndexOf('/') + 1) : '';
  const name = key.slice(parent.length);
  const b = encodeURIComponent(bucket);
  const details = h('div', { id: 'object-details' }, loading('the object'));
  const versions = h('div', { id: 'object-versions' }, loading('the versions'));
  const result = h('div', { class: 'action-result', id: 'object-result' });
  const shareSlot = h('div', { id: 'share-slot' });
  const settingsSlot = h('div', { id: 'object-settings' });
  let settingsFor: string | undefined;

  const loadDetails = async () => {
    try {
      const d = await api<ObjectDetails>('GET', `buckets/${b}/object`, undefined, { key });
      const meta = Object.entries(d.metadata);
      const sums = Object.entries(d.checksums);
      replaceContent(
        details,
        facts([
          ['Size', `${formatBytes(d.size)} (${formatCount(d.size)} bytes)`],
          ['Type', d.contentType || '–'],
          ['Last modified', time(d.lastModified)],
          ['ETag', h('code', null, d.etag)],
          ['Version', d.versionId ? h('code', null, d.versionId) : 'unversioned'],
          ['Storage class', d.storageClass],
          [
            'Retention',
            h(
              'span',
              { id: 'object-retention' },
              d.retention === null ? 'None' : h('span', null, `${d.retention.mode} until `, time(d.retention.until), Date.parse(d.retention.until) <= Date.now() ? ' (ended)' : ''),
            ),
          ],
          ['Legal hold', h('span', { id: 'object-legal-hold' }, d.legalHold ? badge('warn', 'On: cannot be deleted until it is removed') : 'Off')],
          ...(d.cacheControl ? ([['Cache-Control', d.cacheControl]] as const) : []),
          ...(d.contentDisposition ? ([['Content-Disposition', d.contentDisposition]] as const) : []),
          ...(d.contentEncoding ? ([['Content-Encoding', d.contentEncoding]] as const) : []),
          ...sums.map(([alg, v]) => [`Checksum ${alg.toUpperCase()}`, h('code', null, v)] as const),
        ]),
        h('h3', null, 'User metadata'),
        meta.length === 0 ? h('p', { class: 'muted' }, 'None.') : table('User metadata', ['Name', 'Value'], meta.map(([k, v]) => [h('code', null, `x-amz-meta-${k}`), v])),
        h(
          'p',
          { class: 'button-row' },
          h('a', { href: apiUrl(`buckets/${b}/download`, { key }), download: name, class: 'button button-primary', id: 'download-object' }, 'Download'),
          h('button', { type: 'button', class: 'button', id: 'delete-object', onclick: () => void remove(undefined) }, 'Delete…'),
        ),
      );
      if (!shareSlot.contains(shareBox)) shareSlot.replaceChildren(shareBox);
      // built once per version shown: a refresh after an edit keeps the editors and their messages
      if (settingsFor === d.versionId && settingsSlot.childElementCount > 0) return;
      settingsFor = d.versionId;
      const shown = preview(bucket, key, d);
      const lockOn = (await lock).enabled;
      settingsSlot.replaceChildren(
        ...[
          shown ? section('Preview', 'preview-title', shown) : null,
          section('Tags', 'tags-title', tagsEditor(bucket, key)),
          lockOn ? section('Object lock', 'lock-title', lockEditor(bucket, key, d, () => void loadDetails())) : null,
        ].filter((x): x is HTMLElement => x !== null),
      );
    } catch (err) {
      shareSlot.replaceChildren();
      settingsSlot.replaceChildren();
      settingsFor = undefined;
      if (err instanceof ApiError && err.code === 'NoSuchKey') {
        replaceContent(
          details,
          h(
            'div',
            { id: 'object-deleted', class: 'notice', role: 'status' },
            h('p', null, h('strong', null, `${name} is deleted. `), err.message.endsWith('.') ? err.message : `${err.message}.`),
            h('p', null, 'Any versions it kept are listed below: remove the latest delete marker to restore it, or download, restore or delete a version.'),
          ),
        );
        return;
      }
      replaceContent(details, errorBox(err, () => void loadDetails()));
    }
  };

  const loadVersions = async () => {
    try {
      const v = await api<VersionListing>('GET', `buckets/${b}/versions`, undefined, { key, limit: 1000 });
      const chosen = shareVersion.value;
      shareVersion.replaceChildren(h('option', { value: '' }, 'the current version'), ...v.versions.filter((x) => !x.deleteMarker).map((x) => h('option', { value: x.versionId, selected: x.versionId === chosen }, `version ${x.versionId}${x.isLatest ? ' (current)' : ''}`)));
      replaceContent(
        versions,
        v.versions.length === 0
          ? h('p', { class: 'muted' }, 'No versions.')
          : table(
              'Versions, newest first',
              ['Version', 'Modified', 'Size', 'Kind', ''],
              v.versions.map((x) => [
                h('code', null, x.versionId),
                time(x.lastModified),
                x.deleteMarker ? '–' : formatBytes(x.size),
                h('span', null, x.deleteMarker ? badge('warn', 'delete marker') : badge('ok', 'object'), x.isLatest ? h('span', { class: 'muted' }, ' (latest)') : null),
                h(
                  'span',
                  { class: 'row-actions' },
                  x.deleteMarker ? null : h('a', { href: apiUrl(`buckets/${b}/download`, { key, versionId: x.versionId }), download: name, class: 'button button-quiet' }, 'Download', h('span', { class: 'visually-hidden' }, ` version ${x.versionId}`)),
                  x.deleteMarker || x.isLatest
                    ? null
                    : h('button', { type: 'button', class: 'button button-quiet restore-version', onclick: () => void restore(x.versionId) }, 'Restore…', h('span', { class: 'visually-hidden' }, ` version ${x.versionId}`)),
                  h(
                    'button',
                    { type: 'button', class: 'button button-quiet', onclick: () => void removeVersion(x) },
                    x.deleteMarker ? 'Remove delete marker…' : 'Delete version…',
                    h('span', { class: 'visually-hidden' }, ` ${x.versionId}`),
                  ),
                ),
              ]),
              { id: 'versions-table' },
            ),
        v.truncated ? h('p', { class: 'muted' }, 'More than 1000 versions: the oldest are not shown.') : null,
      );
    } catch (err) {
      replaceContent(versions, errorBox(err, () => void loadVersions()));
    }
  };

  const lock = api<ObjectLockView>('GET', `buckets/${b}/object-lock`).catch((): ObjectLockView => ({ enabled: false, rule: null }));
  const removeVersion = async (v: VersionListing['versions'][number]) => {
    if (await deleteVersion(bucket, v, { lockEnabled: (await lock).enabled, out: result })) await Promise.all([loadDetails(), loadVersions()]);
  };

  /** Copies an older version over the current one: it becomes the newest version; nothing is deleted. */
  const restore = async (versionId: string) => {
    const ok = await confirmDialog({
      title: `Restore version ${versionId} of ${name}?`,
      body: `A copy of this version becomes the current ${name}. The version that is current now stays in the list below; nothing is deleted.`,
      confirmLabel: 'Restore this version',
    });
    if (!ok) return;
    try {
      const r = await api<{ versionId: string }>('POST', `buckets/${b}/restore`, { key, versionId });
      const done = `Version ${versionId} restored: it is the current ${name} again${r.versionId ? ` (as version ${r.versionId})` : ''}.`;
      showDone(result, done);
    } catch (err) {
      result.replaceChildren(errorBox(err));
    }
    await Promise.all([loadDetails(), loadVersions()]);
  };

  const remove = async (versionId: string | undefined) => {
    const ok = await confirmDialog({
      title: `Delete ${name}?`,
      body: 'On a versioned bucket a delete marker hides the object and every version stays (listed below; remove the marker to restore it). On an unversioned bucket the object is deleted for good.',
      confirmLabel: 'Delete',
      danger: true,
    });
    if (!ok) return;
    try {
      const r = await api<{ deleteMarker: boolean; versionId: string }>('DELETE', `buckets/${b}/object`, undefined, { key, versionId });
      const done = r.deleteMarker ? `${name} deleted: a delete marker (${r.versionId}) hides it; its versions are kept.` : `${name} deleted for good.`;
      showDone(result, done);
    } catch (err) {
      result.replaceChildren(errorBox(err));
    }
    await Promise.all([loadDetails(), loadVersions()]);
  };

  // any validity up to the signing limit (7 days), for the current version or one chosen below
  const amount = h('input', { type: 'number', id: 'share-amount', min: 1, value: '1', inputmode: 'numeric', class: 'narrow' });
  const unit = h('select', { id: 'share-unit' }, ...UNITS.map(([sec, label]) => h('option', { value: String(sec), selected: sec === 86_400 }, label)));
  const shareVersion = h('select', { id: 'share-version' }, h('option', { value: '' }, 'the current version'));
  const shareOut = h('div', { id: 'share-result' });
  const shareForm = h(
    'form',
    { class: 'form-inline', id: 'share-form' },
    h('label', { for: 'share-amount' }, 'Valid for '),
    amount,
    h('label', { for: 'share-unit', class: 'visually-hidden' }, 'Unit'),
    unit,
    h('label', { for: 'share-version' }, 'of'),
    shareVersion,
    h('button', { type: 'submit', class: 'button', id: 'share-create' }, 'Create link'),
  );
  shareForm.addEventListener('submit', (ev) => {
    ev.preventDefault();
    void (async () => {
      try {
        const seconds = Math.round(Number(amount.value) * Number(unit.value));
        if (!Number.isFinite(seconds) || seconds < 1 || seconds > MAX_SHARE_SECONDS) {
          shareOut.replaceChildren(errorBox(new ApiError(400, 'InvalidArgument', 'A link can be valid from 1 second to 7 days (the longest a signature may last).', 'Choose a shorter time.')));
          amount.focus();
          return;
        }
        const s = await api<ShareLink>('POST', `buckets/${b}/share`, { key, expiresSeconds: seconds, ...(shareVersion.value !== '' ? { versionId: shareVersion.value } : {}) });
        const field = h('input', { id: 'share-url', type: 'text', readonly: true, value: s.url, class: 'share-url', 'aria-label': 'Share link' });
        const copy = h('button', { type: 'button', class: 'button', id: 'share-copy' }, 'Copy');
        copy.addEventListener('click', () => {
          field.select();
          void navigator.clipboard?.writeText(s.url).then(
            () => announce('Link copied.'),
            () => announce('Select the link and copy it.'),
          );
        });
        shareOut.replaceChildren(
          h('p', { class: 'share' }, field, ' ', copy),
          h('p', { class: 'hint' }, `Anyone with this link can download ${shareVersion.value === '' ? 'the object' : `version ${shareVersion.value}`} until `, time(s.expiresAt), ` (from ${s.endpoint}). Set SVC_SERVER_URL if people reach S3 under another address.`),
          h(
            'p',
            { class: 'hint', id: 'share-signer' },
            `The link is signed with your access key ${s.accessKey} and works only while that key does: to revoke it before it expires, disable or remove that key (Identity page${s.root ? '; for the root, change the root credentials' : ''}). Sign in with an access key kept for sharing to be able to revoke links without touching anything else.`,
          ),
        );
        field.focus();
        field.select();
      } catch (err) {
        shareOut.replaceChildren(errorBox(err));
      }
    })();
  });

  // offered only while there is a current version to share
  const shareBox = section('Share', 'share-title', shareForm, shareOut);
  main.replaceChildren(
    pageHeader(name, h('nav', { 'aria-label': 'Location', class: 'breadcrumbs' }, h('ol', null, h('li', null, h('a', { href: href({ page: 'buckets' }) }, 'Buckets')), h('li', null, h('a', { href: href({ page: 'bucket', bucket, prefix: parent }) }, parent ? `${bucket}/${parent}` : bucket)), h('li', null, h('span', { 'aria-current': 'page' }, name))))),
    result,
    section('Details', 'details-title', details),
    shareSlot,
    section('Versions', 'versions-title', versions),
    settingsSlot,
  );
  void loadDetails();
  void loadVersions();
}
