/**
 * One object: its metadata, every version (download or delete each), and a
 * share link (a presigned GET the console signs; valid up to 7 days).
 */
import type { ObjectDetails, ShareLink, VersionListing } from '../../../src/api/console/wire.ts';
import { api, apiUrl } from '../api.js';
import { announce, h, replaceContent } from '../dom.js';
import { formatBytes, formatCount } from '../format.js';
import { href, type Route } from '../router.js';
import { badge, confirmDialog, errorBox, facts, loading, pageHeader, section, table, time } from '../ui.js';

const EXPIRIES: readonly [number, string][] = [
  [3600, '1 hour'],
  [86_400, '1 day'],
  [7 * 86_400, '7 days'],
];

export function renderObject(main: HTMLElement, route: Route): void {
  if (route.page !== 'object') return;
  const { bucket, key } = route;
  const parent = key.includes('/') ? key.slice(0, key.lastIndexOf('/') + 1) : '';
  const name = key.slice(parent.length);
  const b = encodeURIComponent(bucket);
  const details = h('div', { id: 'object-details' }, loading('the object'));
  const versions = h('div', { id: 'object-versions' }, loading('the versions'));
  const result = h('div', { class: 'action-result', id: 'object-result' });

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
    } catch (err) {
      replaceContent(details, errorBox(err, () => void loadDetails()));
    }
  };

  const loadVersions = async () => {
    try {
      const v = await api<VersionListing>('GET', `buckets/${b}/versions`, undefined, { key, limit: 1000 });
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
                  x.deleteMarker ? null : h('a', { href: apiUrl(`buckets/${b}/download`, { key, versionId: x.versionId === 'null' ? undefined : x.versionId }), download: name, class: 'button button-quiet' }, 'Download'),
                  x.versionId === 'null' ? null : h('button', { type: 'button', class: 'button button-quiet', onclick: () => void remove(x.versionId) }, 'Delete version…'),
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

  const remove = async (versionId: string | undefined) => {
    const ok = await confirmDialog({
      title: versionId ? `Delete version ${versionId}?` : `Delete ${name}?`,
      body: versionId ? 'This version is deleted for good.' : 'On a versioned bucket a delete marker hides the object and its versions stay; otherwise it is deleted for good.',
      confirmLabel: 'Delete',
      danger: true,
    });
    if (!ok) return;
    try {
      await api('DELETE', `buckets/${b}/object`, undefined, { key, versionId });
      result.replaceChildren(h('p', { role: 'status', class: 'success' }, versionId ? `Version ${versionId} deleted.` : `${name} deleted.`));
      announce('Deleted.');
    } catch (err) {
      result.replaceChildren(errorBox(err));
    }
    await Promise.all([loadDetails(), loadVersions()]);
  };

  const expiry = h('select', { id: 'share-expiry' }, ...EXPIRIES.map(([s, label]) => h('option', { value: String(s), selected: s === 86_400 }, label)));
  const shareOut = h('div', { id: 'share-result' });
  const shareForm = h(
    'form',
    { class: 'form-inline', id: 'share-form' },
    h('label', { for: 'share-expiry' }, 'Valid for '),
    expiry,
    h('button', { type: 'submit', class: 'button', id: 'share-create' }, 'Create link'),
  );
  shareForm.addEventListener('submit', (ev) => {
    ev.preventDefault();
    void (async () => {
      try {
        const s = await api<ShareLink>('POST', `buckets/${b}/share`, { key, expiresSeconds: Number(expiry.value) });
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
          h('p', { class: 'hint' }, 'Anyone with this link can download the object until ', time(s.expiresAt), ` (from ${s.endpoint}). Set SVC_SERVER_URL if people reach S3 under another address.`),
        );
        field.focus();
        field.select();
      } catch (err) {
        shareOut.replaceChildren(errorBox(err));
      }
    })();
  });

  main.replaceChildren(
    pageHeader(name, h('nav', { 'aria-label': 'Location', class: 'breadcrumbs' }, h('ol', null, h('li', null, h('a', { href: href({ page: 'buckets' }) }, 'Buckets')), h('li', null, h('a', { href: href({ page: 'bucket', bucket, prefix: parent }) }, parent ? `${bucket}/${parent}` : bucket)), h('li', null, h('span', { 'aria-current': 'page' }, name))))),
    result,
    section('Details', 'details-title', details),
    section('Share', 'share-title', shareForm, shareOut),
    section('Versions', 'versions-title', versions),
  );
  void loadDetails();
  void loadVersions();
}
