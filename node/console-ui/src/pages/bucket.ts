/**
 * One bucket: browse it folder by folder (S3 common prefixes) a page at a
 * time, upload files with a progress bar each (large ones in parts),
 * download, delete, open an object's details, switch versioning; see its
 * data protection (object lock, default encryption, lifecycle rules); show,
 * set and clear its quota.
 */
import type { BucketDetails, BucketGovernance, BucketQuotaView, BucketReplicationView, ObjectListing, ObjectLockView, ObjectVersion, VersionsPage, ZipTicket } from '../../../src/api/console/wire.ts';
import { api, apiUrl } from '../api.js';
import { announce, type Child, h, replaceContent } from '../dom.js';
import { formatBytes, formatCount, formatDuration, formatPercent, plural } from '../format.js';
import { describeActions, describeEncryption, describeFilter, describeObjectLock } from '../governance.js';
import { href, type Route } from '../router.js';
import { badge, confirmDialog, errorBox, facts, loading, pageHeader, section, showDone, table, time } from '../ui.js';
import { startUpload as startUpload2 } from '../tray.js';
import { deleteVersion } from '../versions.js';
import { bucketSettings } from './bucket-settings.js';
import { confirmSelection, deleteInBatches, filesFromDrop, filesFromInput, listUnder, type PathFile, type Target } from '../bulk.js';

const PAGE_SIZES = [25, 100, 500, 1000];
/** The most objects one ZIP download takes (the server's limit too). */
const MAX_ZIP_KEYS = 1000;
let pageSize = 100;

function breadcrumbs(bucket: string, prefix: string): HTMLElement {
  const parts = prefix.split('/').filter((p) => p !== '');
  const crumbs = [h('li', null, h('a', { href: href({ page: 'buckets' }) }, 'Buckets')), h('li', null, parts.length === 0 ? h('span', { 'aria-current': 'page' }, bucket) : h('a', { href: href({ page: 'bucket', bucket, prefix: '' }) }, bucket))];
  parts.forEach((p, i) => {
    const to = `${parts.slice(0, i + 1).join('/')}/`;
    crumbs.push(h('li', null, i === parts.length - 1 ? h('span', { 'aria-current': 'page' }, p) : h('a', { href: href({ page: 'bucket', bucket, prefix: to }) }, p)));
  });
  return h('nav', { 'aria-label': 'Location', class: 'breadcrumbs' }, h('ol', null, ...crumbs));
}

/** The last path segment of a key or prefix. */
function leaf(name: string, prefix: string): string {
  return name.slice(prefix.length) || name;
}

/** Object lock, default encryption and lifecycle rules (set with S3 clients; shown here). */
function governanceView(g: BucketGovernance): HTMLElement {
  const rules = g.lifecycle?.rules ?? [];
  return h(
    'div',
    { id: 'governance' },
    facts([
      ['Object lock', h('span', { id: 'gov-lock' }, describeObjectLock(g.objectLock))],
      ['Default encryption', h('span', { id: 'gov-encryption' }, describeEncryption(g.encryption))],
      ['Lifecycle', h('span', { id: 'gov-lifecycle' }, rules.length === 0 ? 'No rules' : plural(rules.length, 'rule'))],
    ]),
    rules.length === 0
      ? null
      : table(
          `Lifecycle rules of ${g.name}`,
          ['Rule', 'Status', 'Applies to', 'Does'],
          rules.map((r) => [r.id || '(no id)', badge(r.status === 'Enabled' ? 'ok' : 'info', r.status), describeFilter(r.filter), h('ul', { class: 'plain-list' }, ...describeActions(r).map((a) => h('li', null, a)))]),
          { id: 'lifecycle-table' },
        ),
    h('p', { class: 'hint' }, 'As the admin API reports them; change them under Settings below (or with any S3 client). Lifecycle rules run on the scanner cycle.'),
  );
}

/** The bucket's remote replication targets, each with its queue on this node (set with svc replicate or mc replicate). */
function replicationSection(bucket: string): HTMLElement {
  const box = h('div', { id: 'replication' }, loading('the replication status'));
  const show = (r: BucketReplicationView) =>
    replaceContent(
      box,
      r.targets.length === 0
        ? h('p', { class: 'muted', id: 'replication-none' }, 'This bucket does not replicate (svc replicate add, or any client that sets a replication configuration).')
        : table(
            `Replication targets of ${bucket}`,
            ['Target', 'State', 'Queued', 'Failed, retried', 'Replicated', 'Lag', 'Last error'],
            r.targets.map((t) => [
              h('span', null, `${t.secure ? 'https' : 'http'}://${t.endpoint}/${t.targetBucket}`, h('br'), h('code', { class: 'muted' }, t.arn)),
              badge(t.online ? 'ok' : 'bad', t.online ? 'online' : 'offline'),
              `${formatCount(t.queued.count)} (${formatBytes(t.queued.bytes)})`,
              `${formatCount(t.failed.count)} (${formatBytes(t.failed.bytes)})`,
              `${formatCount(t.completed.count)} (${formatBytes(t.completed.bytes)})`,
              t.lagMs === 0 ? 'none' : formatDuration(t.lagMs / 1000),
              t.lastError ?? '–',
            ]),
            { id: 'replication-table' },
          ),
      ...r.resync.map((x) => h('p', { class: 'hint' }, `Resync to ${x.arn}: ${x.state}, ${formatCount(x.scanned)} versions looked at, ${formatCount(x.queued)} queued.`)),
      h('p', { class: 'hint' }, "Queues are this node's: a write is queued on the node that took it. Replicated counts since the node started."),
    );
  void api<BucketReplicationView>('GET', `buckets/${encodeURIComponent(bucket)}/replication`).then(show, (err: unknown) => replaceContent(box, errorBox(err)));
  return box;
}

/** The bucket's hard quota and what counts against it, with a form to set or clear it. */
function quotaSection(bucket: string): HTMLElement {
  const state = h('div', { id: 'quota-state' }, loading('the quota'));
  const result = h('div', { class: 'action-result', id: 'quota-result' });
  const input = h('input', { type: 'text', id: 'quota-size', autocomplete: 'off', spellcheck: 'false', placeholder: '10GiB' });
  const clear = h('button', { type: 'button', class: 'button button-quiet', id: 'quota-clear', disabled: true }, 'Remove quota');
  const show = (q: BucketQuotaView) => {
    clear.disabled = q.size === null;
    replaceContent(
      state,
      facts([
        ['Quota', h('span', { id: 'quota-size-now' }, q.size === null ? 'None' : formatBytes(q.size))],
        ...(q.size !== null && q.usage !== null
          ? ([['Counted now', h('span', { id: 'quota-usage' }, `${formatBytes(q.usage)} (${formatPercent(q.size > 0 ? q.usage / q.size : 0)})`)]] as const)
          : []),
      ]),
    );
  };
  const apply = async (size: string | null) => {
    result.replaceChildren();
    try {
      const q = await api<BucketQuotaView>('PUT', `buckets/${encodeURIComponent(bucket)}/quota`, { size });
      show(q);
      input.value = '';
      announce(q.size === null ? 'Quota removed.' : `Quota set to ${formatBytes(q.size)}.`);
    } catch (err) {
      result.replaceChildren(errorBox(err));
    }
  };
  const form = h('form', { class: 'form-inline', id: 'quota-form' }, h('label', { for: 'quota-size' }, 'Hard quota'), input, h('button', { type: 'submit', class: 'button', id: 'quota-set' }, 'Set quota'), clear);
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    if (input.value.trim() === '') {
      input.focus();
      return;
    }
    void apply(input.value.trim());
  });
  clear.addEventListener('click', () => {
    void (async () => {
      if (await confirmDialog({ title: 'Remove the quota?', body: `Writes to ${bucket} are no longer limited in size.`, confirmLabel: 'Remove quota' })) await apply(null);
    })();
  });
  void api<BucketQuotaView>('GET', `buckets/${encodeURIComponent(bucket)}/quota`).then(show, (err: unknown) => replaceContent(state, errorBox(err)));
  return h(
    'div',
    { id: 'quota-box' },
    state,
    form,
    h('p', { class: 'hint' }, 'Writes that would take the bucket over its quota are refused (uploads, copies, completing multipart uploads). What counts: the scanner\'s last count of the bucket plus writes made since.'),
    result,
  );
}

export function renderBucket(main: HTMLElement, route: Route): void {
  if (route.page !== 'bucket') return;
  const { bucket, prefix } = route;
  const listing = h('div', { id: 'object-list' }, loading('the objects'));
  const result = h('div', { class: 'action-result', id: 'object-result' });
  const versioningState = h('span', { id: 'versioning-state' }, '…');
  const versioningBox = h('input', { type: 'checkbox', id: 'versioning-toggle', disabled: true });
  const governance = h('div', { id: 'governance-box' }, loading('the data protection settings'));
  // continuation tokens of the pages before this one (page 1 has '')
  const tokens: string[] = [''];
  // with versions shown: the key and version markers of each page
  const vtokens: { key: string; version: string }[] = [{ key: '', version: '' }];
  // names starting with what is typed, in this folder: the server filters (S3 prefix), a page at a time
  let search = '';
  const searchInput = h('input', { type: 'search', id: 'object-search', autocomplete: 'off', spellcheck: 'false', placeholder: 'name starts with…' });
  const searchForm = h('form', { class: 'form-inline', id: 'object-search-form', role: 'search' }, h('label', { for: 'object-search' }, 'Find in this folder'), searchInput, h('button', { type: 'submit', class: 'button', id: 'object-search-go' }, 'Find'));
  searchForm.addEventListener('submit', (ev) => {
    ev.preventDefault();
    search = searchInput.value;
    page = 0;
    tokens.length = 1;
    vtokens.length = 1;
    void load();
  });
  const showVersions = h('input', { type: 'checkbox', id: 'show-versions' });
  const lock = api<ObjectLockView>('GET', `buckets/${encodeURIComponent(bucket)}/object-lock`);
  lock.catch(() => undefined);
  showVersions.addEventListener('change', () => {
    page = 0;
    void load();
  });
  let page = 0;
  let versioning: BucketDetails['versioning'] = 'Unversioned';
  // what this identity may do here (its policies and ownership of the bucket; bucket policies may allow more, the server decides)
  let canDelete = true;
  const permissions = api<{ permissions: Record<string, boolean> }>('GET', 'permissions', undefined, { bucket }).then(
    (p) => {
      canDelete = p.permissions['s3:DeleteObject'] !== false;
      if (p.permissions['s3:PutObject'] === false) {
        fileInput.disabled = true;
        uploadLabel.replaceWith(h('span', { class: 'muted', id: 'upload-not-allowed' }, 'Your policies do not allow uploading here.'));
      }
    },
    () => undefined,
  );

  const objectRows = (r: ObjectListing) => [
    ...r.prefixes.map((p) => folderRow(p)),
    ...r.objects.map((o) => {
      const name = leaf(o.key, prefix);
      return [
        h(
          'span',
          { class: 'name-cell' },
          h('input', { type: 'checkbox', class: 'select-object', 'data-key': o.key, 'aria-label': `Select ${name}`, onchange: () => updateSelection() }),
          ' ',
          h('a', { href: href({ page: 'object', bucket, key: o.key }), class: 'object-link' }, name),
        ),
        formatBytes(o.size),
        time(o.lastModified),
        h(
          'span',
          { class: 'row-actions' },
          h('a', { href: apiUrl(`buckets/${encodeURIComponent(bucket)}/download`, { key: o.key }), download: name, class: 'button button-quiet download-link' }, 'Download', h('span', { class: 'visually-hidden' }, ` ${name}`)),
          h(
            'button',
            { type: 'button', class: 'button button-quiet delete-object', disabled: !canDelete, ...(canDelete ? {} : { title: 'Your policies do not allow deleting here' }), onclick: () => void remove(o.key) },
            'Delete…',
            h('span', { class: 'visually-hidden' }, ` ${name}`),
          ),
        ),
      ];
    }),
  ];
  const folderRow = (p: string) => [
    h('a', { href: href({ page: 'bucket', bucket, prefix: p }), class: 'folder-link' }, h('span', { 'aria-hidden': 'true' }, '📁 '), leaf(p, prefix)),
    'folder',
    '–',
    h(
      'span',
      { class: 'row-actions' },
      h(
        'button',
        { type: 'button', class: 'button button-quiet zip-folder', 'data-prefix': p, onclick: () => void downloadZip({ prefix: p }) },
        'Download as ZIP',
        h('span', { class: 'visually-hidden' }, ` ${leaf(p, prefix)}`),
      ),
      h(
        'button',
        { type: 'button', class: 'button button-quiet delete-folder', disabled: !canDelete, 'data-prefix': p, onclick: () => void removeFolder(p) },
        'Delete folder…',
        h('span', { class: 'visually-hidden' }, ` ${leaf(p, prefix)}`),
      ),
    ),
  ];
  /** Every version and delete marker at this level, newest first within a name. */
  const versionRows = (r: VersionsPage) => [
    ...r.prefixes.map((p) => folderRow(p)),
    ...r.versions.map((v) => {
      const name = leaf(v.key, prefix);
      const kind = v.deleteMarker ? badge('warn', 'delete marker') : v.isLatest ? badge('ok', 'latest') : badge('idle', 'older version');
      return [
        h('span', { class: 'version-name' }, h('a', { href: href({ page: 'object', bucket, key: v.key }), class: 'object-link' }, name), ' ', kind, h('br'), h('code', { class: 'muted version-id' }, v.versionId)),
        v.deleteMarker ? '–' : formatBytes(v.size),
        time(v.lastModified),
        h(
          'span',
          { class: 'row-actions' },
          v.deleteMarker
            ? null
            : h('a', { href: apiUrl(`buckets/${encodeURIComponent(bucket)}/download`, { key: v.key, versionId: v.versionId }), download: name, class: 'button button-quiet download-link' }, 'Download', h('span', { class: 'visually-hidden' }, ` ${name} version ${v.versionId}`)),
          h(
            'button',
            { type: 'button', class: 'button button-quiet delete-version', disabled: !canDelete, onclick: () => void removeVersion(v) },
            v.deleteMarker ? 'Remove delete marker…' : 'Delete version…',
            h('span', { class: 'visually-hidden' }, ` ${name} ${v.versionId}`),
          ),
        ),
      ];
    }),
  ];

  // A listing answers in its own time: only the latest load may draw (turning versions on while
  // the page's first listing is still on its way must not end with that older listing shown).
  let loads = 0;
  const load = async () => {
    const mine = ++loads;
    await permissions;
    if (mine !== loads) return;
    selectAll.checked = false;
    try {
      let rows: Child[][];
      let truncated: boolean;
      let count: string;
      if (showVersions.checked) {
        const marker = vtokens[page] ?? { key: '', version: '' };
        const r = await api<VersionsPage>('GET', `buckets/${encodeURIComponent(bucket)}/all-versions`, undefined, { prefix: `${prefix}${search}`, keyMarker: marker.key, versionIdMarker: marker.version, limit: pageSize });
        if (mine !== loads) return;
        if (r.truncated) vtokens[page + 1] = { key: r.nextKeyMarker, version: r.nextVersionIdMarker };
        rows = versionRows(r);
        truncated = r.truncated;
        count = `${plural(r.prefixes.length, 'folder')}, ${plural(r.versions.length, 'version')} (delete markers included) on this page.`;
      } else {
        const r = await api<ObjectListing>('GET', `buckets/${encodeURIComponent(bucket)}/objects`, undefined, { prefix: `${prefix}${search}`, token: tokens[page], limit: pageSize });
        if (mine !== loads) return;
        if (r.truncated) tokens[page + 1] = r.nextToken;
        rows = objectRows(r);
        truncated = r.truncated;
        count = `${plural(r.prefixes.length, 'folder')}, ${plural(r.objects.length, 'object')} on this page.`;
      }
      const pager = h(
        'div',
        { class: 'pager' },
        h('button', { type: 'button', class: 'button', id: 'page-prev', disabled: page === 0, onclick: () => void turn(-1) }, 'Previous page'),
        h('span', { id: 'page-number' }, `Page ${page + 1}`),
        h('button', { type: 'button', class: 'button', id: 'page-next', disabled: !truncated, onclick: () => void turn(1) }, 'Next page'),
        h(
          'label',
          { for: 'page-size' },
          'Per page ',
          h('select', { id: 'page-size', onchange: (ev: Event) => void resize(Number((ev.target as HTMLSelectElement).value)) }, ...PAGE_SIZES.map((n) => h('option', { value: String(n), selected: n === pageSize }, String(n)))),
        ),
      );
      replaceContent(
        listing,
        rows.length === 0
          ? h('p', { class: 'muted', id: 'empty-folder' }, search !== '' ? `Nothing here starts with “${search}”.` : prefix ? 'This folder is empty. It exists once something is uploaded into it.' : 'This bucket is empty. Upload files above.')
          : table(`Objects in ${bucket}/${prefix}`, ['Name', 'Size', 'Last modified', ''], rows, { id: 'objects-table' }),
        rows.length > 0 || page > 0 ? pager : null,
        h('p', { class: 'muted' }, count),
      );
    } catch (err) {
      if (mine === loads) replaceContent(listing, errorBox(err, () => void load()));
    }
  };
  const turn = async (d: number) => {
    page = Math.max(0, page + d);
    await load();
    document.getElementById(d > 0 ? 'page-next' : 'page-prev')?.focus();
  };
  const resize = async (n: number) => {
    pageSize = n;
    tokens.length = 1;
    vtokens.length = 1;
    page = 0;
    await load();
    document.getElementById('page-size')?.focus();
  };

  const removeVersion = async (v: ObjectVersion) => {
    const lockEnabled = await lock.then((l) => l.enabled, () => false);
    if (await deleteVersion(bucket, v, { lockEnabled, out: result })) await load();
  };

  // ---- bulk: the selection, and a folder with everything under it
  const selectAll = h('input', { type: 'checkbox', id: 'select-all', 'aria-label': 'Select every object on this page' });
  const selected = () => [...listing.querySelectorAll<HTMLInputElement>('input.select-object:checked')].map((c) => c.dataset.key!);
  const deleteSelected = h('button', { type: 'button', class: 'button', id: 'delete-selected', disabled: true }, 'Delete selected…');
  const zipSelected = h('button', { type: 'button', class: 'button', id: 'zip-selected', disabled: true }, 'Download selected as ZIP');
  const selectionCount = h('span', { class: 'muted', id: 'selection-count', 'aria-live': 'polite' }, '');
  const updateSelection = () => {
    const n = selected().length;
    deleteSelected.disabled = n === 0 || !canDelete;
    zipSelected.disabled = n === 0 || n > MAX_ZIP_KEYS;
    selectionCount.textContent = n === 0 ? '' : `${plural(n, 'object')} selected`;
  };
  selectAll.addEventListener('change', () => {
    for (const c of listing.querySelectorAll<HTMLInputElement>('input.select-object')) c.checked = selectAll.checked;
    updateSelection();
  });
  deleteSelected.addEventListener('click', () => {
    void (async () => {
      const targets = selected().map((key) => ({ key }));
      if (targets.length === 0 || !(await confirmSelection(bucket, targets, versioning === 'Enabled'))) return;
      try {
        const r = await deleteInBatches(bucket, `Delete ${plural(targets.length, 'object')} from ${bucket}`, targets);
        result.replaceChildren(
          h('p', { role: 'status', class: r.errors.length > 0 ? 'error-inline' : 'success' }, `${plural(r.deleted, 'object')} deleted${r.errors.length > 0 ? `; ${r.errors.length} refused: ${r.errors.map((e) => `${e.key} (${e.code}: ${e.message})`).join('; ')}` : ''}.`),
        );
      } catch (err) {
        result.replaceChildren(errorBox(err));
      }
      await load();
    })();
  });
  /** A selection (names relative to this folder) or a folder with everything under it, as one ZIP. */
  const downloadZip = async (what: { keys: string[] } | { prefix: string }) => {
    if ('prefix' in what) result.replaceChildren(h('p', { role: 'status' }, `Listing what is under ${bucket}/${what.prefix}…`));
    try {
      // what to zip is posted once; the archive itself is an ordinary download that streams to disk
      const z = await api<ZipTicket>('POST', `buckets/${encodeURIComponent(bucket)}/zip`, 'prefix' in what ? what : { ...what, base: prefix });
      const link = h('a', { href: apiUrl(`buckets/${encodeURIComponent(bucket)}/zip/${encodeURIComponent(z.ticket)}`), download: z.name, hidden: true });
      document.body.append(link);
      link.click();
      link.remove();
      const words =
        'prefix' in what
          ? `Downloading the folder ${what.prefix}: ${plural(z.objects, 'object')}, ${formatBytes(z.bytes ?? 0)}, as ${z.name}.`
          : `Downloading ${plural(z.objects, 'object')} as ${z.name} (names relative to ${prefix === '' ? 'the bucket' : prefix}).`;
      result.replaceChildren(h('p', { role: 'status', class: 'success' }, words));
    } catch (err) {
      result.replaceChildren(errorBox(err));
    }
  };
  zipSelected.addEventListener('click', () => void downloadZip({ keys: selected() }));
  const removeFolder = async (p: string) => {
    result.replaceChildren(h('p', { role: 'status' }, `Counting what is under ${bucket}/${p}…`));
    const everyVersion = h('input', { type: 'checkbox', id: 'delete-every-version' });
    let targets: Target[];
    try {
      targets = await listUnder(bucket, p, false);
    } catch (err) {
      result.replaceChildren(errorBox(err));
      return;
    }
    result.replaceChildren();
    const versioned = versioning !== 'Unversioned';
    const ok = await confirmDialog({
      title: `Delete the folder ${p}?`,
      body: h(
        'div',
        null,
        h('p', null, `Every object under ${bucket}/${p} is deleted: ${formatCount(targets.length)} ${targets.length === 1 ? 'object' : 'objects'}, in this folder and every folder inside it.`),
        versioned
          ? h(
              'p',
              { class: 'check' },
              everyVersion,
              ' ',
              h('label', { for: 'delete-every-version' }, 'Also delete every version and delete marker, for good'),
              h('span', { class: 'hint' }, ' Otherwise each object gets a delete marker and its versions are kept.'),
            )
          : h('p', null, 'They are deleted for good.'),
      ),
      confirmLabel: 'Delete folder',
      danger: true,
      typeToConfirm: p,
    });
    if (!ok) return;
    try {
      if (everyVersion.checked) targets = await listUnder(bucket, p, true);
      const r = await deleteInBatches(bucket, `Delete ${bucket}/${p}`, targets);
      const words = `${plural(r.deleted, everyVersion.checked ? 'version' : 'object')} under ${p} deleted${r.canceled ? ' before the cancel' : ''}${r.errors.length > 0 ? `; ${r.errors.length} refused (${r.errors[0]!.code}: ${r.errors[0]!.key})` : ''}.`;
      result.replaceChildren(h('p', { role: 'status', class: r.errors.length > 0 ? 'error-inline' : 'success', id: 'folder-delete-result' }, words));
    } catch (err) {
      result.replaceChildren(errorBox(err));
    }
    if (listing.isConnected) await load();
  };

  const remove = async (key: string) => {
    const ok = await confirmDialog({
      title: `Delete ${leaf(key, prefix)}?`,
      body:
        versioning === 'Enabled'
          ? 'Versioning is on: a delete marker hides the object and its versions stay (open its details to delete a version for good).'
          : 'The object is deleted for good.',
      confirmLabel: 'Delete',
      danger: true,
    });
    if (!ok) return;
    try {
      await api('DELETE', `buckets/${encodeURIComponent(bucket)}/object`, undefined, { key });
      showDone(result, `${key} deleted.`);
    } catch (err) {
      result.replaceChildren(errorBox(err));
    }
    await load();
  };

  // ---- uploads: in the tray beside the pages, so they go on while you move around
  const startUpload = (file: File) => {
    startUpload2(bucket, `${prefix}${file.name}`, file, () => {
      // refresh the listing if this page is still the one shown
      if (listing.isConnected) void load();
    });
  };
  const fileInput = h('input', { type: 'file', id: 'upload-input', multiple: true, class: 'visually-hidden-input' });
  fileInput.addEventListener('change', () => {
    for (const f of fileInput.files ?? []) startUpload(f);
    fileInput.value = '';
  });
  const uploadLabel = h('label', { for: 'upload-input', class: 'button button-primary file-button' }, 'Upload files…');
  const uploadPaths = (files: readonly PathFile[]) => {
    for (const f of files) startUpload2(bucket, `${prefix}${f.path}`, f.file, () => {
      if (listing.isConnected) void load();
    });
  };
  const folderInput = h('input', { type: 'file', id: 'upload-folder-input', webkitdirectory: true, multiple: true, class: 'visually-hidden-input' });
  folderInput.addEventListener('change', () => {
    if (folderInput.files) uploadPaths(filesFromInput(folderInput.files));
    folderInput.value = '';
  });
  const folderLabel = h('label', { for: 'upload-folder-input', class: 'button file-button' }, 'Upload a folder…');
  const dropZone = h('div', { class: 'drop-zone', id: 'drop-zone' }, 'Or drop files and folders here: folders keep their paths.');
  dropZone.addEventListener('dragover', (ev) => {
    ev.preventDefault();
    dropZone.classList.add('drop-over');
  });
  dropZone.addEventListener('dragleave', () => dropZone.classList.remove('drop-over'));
  dropZone.addEventListener('drop', (ev) => {
    ev.preventDefault();
    dropZone.classList.remove('drop-over');
    if (ev.dataTransfer === null || fileInput.disabled) return;
    void filesFromDrop(ev.dataTransfer).then(uploadPaths, (err: unknown) => result.replaceChildren(errorBox(err)));
  });

  const folderName = h('input', { type: 'text', id: 'folder-name', autocomplete: 'off', spellcheck: 'false', placeholder: 'name' });
  const folderForm = h('form', { class: 'form-inline', id: 'new-folder' }, h('label', { for: 'folder-name' }, 'New folder'), folderName, h('button', { type: 'submit', class: 'button', id: 'new-folder-open' }, 'Open'));
  folderForm.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const n = folderName.value.trim().replace(/^\/+|\/+$/g, '');
    if (n === '') {
      folderName.focus();
      return;
    }
    location.hash = href({ page: 'bucket', bucket, prefix: `${prefix}${n}/` });
  });

  versioningBox.addEventListener('change', () => {
    void (async () => {
      const enable = versioningBox.checked;
      if (!enable && !(await confirmDialog({ title: 'Suspend versioning?', body: 'New writes replace objects again; versions kept so far stay until you delete them.', confirmLabel: 'Suspend versioning' }))) {
        versioningBox.checked = true;
        return;
      }
      try {
        const d = await api<BucketDetails>('PUT', `buckets/${encodeURIComponent(bucket)}/versioning`, { enabled: enable });
        versioning = d.versioning;
        versioningState.textContent = d.versioning;
        announce(`Versioning ${d.versioning === 'Enabled' ? 'enabled' : 'suspended'}.`);
      } catch (err) {
        versioningBox.checked = !enable;
        result.replaceChildren(errorBox(err));
      }
    })();
  });

  main.replaceChildren(
    pageHeader(prefix ? `${bucket}/${prefix}` : bucket, breadcrumbs(bucket, prefix)),
    section(
      'Upload and organise',
      'tools-title',
      h('div', { class: 'toolbar' }, fileInput, uploadLabel, folderInput, folderLabel, folderForm, h('p', { class: 'check' }, versioningBox, ' ', h('label', { for: 'versioning-toggle' }, 'Versioning: '), versioningState)),
      dropZone,
      h('p', { class: 'hint' }, `Files go into ${prefix ? `the folder ${prefix}` : 'the top of the bucket'}; files above 16 MiB are uploaded in parts. Uploads show in the tray above and go on while you use other pages.`),
      result,
    ),
    section(
      'Contents',
      'contents-title',
      searchForm,
      h('p', { class: 'check' }, showVersions, ' ', h('label', { for: 'show-versions' }, 'Show versions and deleted objects'), h('span', { class: 'hint' }, ' (every version and delete marker, newest first)')),
      h(
        'div',
        { class: 'button-row bulk-bar' },
        h('span', { class: 'check' }, selectAll, ' ', h('label', { for: 'select-all' }, 'Select all on this page')),
        deleteSelected,
        zipSelected,
        // inside a folder: all of it, every page and every folder below
        prefix === '' ? null : h('button', { type: 'button', class: 'button', id: 'zip-this-folder', onclick: () => void downloadZip({ prefix }) }, 'Download this folder as ZIP'),
        selectionCount,
      ),
      listing,
    ),
    section('Data protection', 'governance-title', governance),
    section('Quota', 'quota-title', quotaSection(bucket)),
    section('Replication', 'replication-title', replicationSection(bucket)),
    section('Settings', 'settings-title', bucketSettings(bucket, lock)),
  );
  const details = api<BucketDetails>('GET', `buckets/${encodeURIComponent(bucket)}`);
  const gov = api<BucketGovernance>('GET', `buckets/${encodeURIComponent(bucket)}/governance`);
  void gov.then(
    (g) => replaceContent(governance, governanceView(g)),
    (err: unknown) => replaceContent(governance, errorBox(err)),
  );
  void details.then(
    async (d) => {
      versioning = d.versioning;
      versioningState.textContent = d.versioning;
      versioningBox.checked = d.versioning === 'Enabled';
      // Object lock keeps versioning on for good: nothing to switch.
      const locked = await gov.then(
        (g) => g.objectLock.enabled,
        () => false,
      );
      versioningBox.disabled = locked;
      if (locked) versioningState.textContent = `${d.versioning} (object lock keeps it on)`;
    },
    (err: unknown) => {
      versioningState.textContent = 'unknown';
      result.replaceChildren(errorBox(err));
    },
  );
  void load();
}
