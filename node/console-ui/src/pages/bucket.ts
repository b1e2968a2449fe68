/**
 * One bucket: browse it folder by folder (S3 common prefixes) a page at a
 * time, upload files with a progress bar each (large ones in parts),
 * download, delete, open an object's details, switch versioning; see its
 * data protection (object lock, default encryption, lifecycle rules); show,
 * set and clear its quota.
 */
import type { BucketDetails, BucketGovernance, BucketQuotaView, ObjectListing, UploadResult } from '../../../src/api/console/wire.ts';
import { api, apiUrl } from '../api.js';
import { announce, h, replaceContent } from '../dom.js';
import { formatBytes, formatPercent, plural } from '../format.js';
import { describeActions, describeEncryption, describeFilter, describeObjectLock } from '../governance.js';
import { href, type Route } from '../router.js';
import { badge, confirmDialog, errorBox, facts, loading, pageHeader, section, table, time } from '../ui.js';
import { uploadFile } from '../upload.js';

const PAGE_SIZES = [25, 100, 500, 1000];
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
    h('p', { class: 'hint' }, 'Set with S3 clients (PutObjectLockConfiguration, PutBucketEncryption, PutBucketLifecycleConfiguration); lifecycle rules run on the scanner cycle.'),
  );
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
  const uploads = h('ul', { class: 'uploads', id: 'uploads', 'aria-label': 'Uploads' });
  const versioningState = h('span', { id: 'versioning-state' }, '…');
  const versioningBox = h('input', { type: 'checkbox', id: 'versioning-toggle', disabled: true });
  const governance = h('div', { id: 'governance-box' }, loading('the data protection settings'));
  // continuation tokens of the pages before this one (page 1 has '')
  const tokens: string[] = [''];
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

  const load = async () => {
    await permissions;
    try {
      const r = await api<ObjectListing>('GET', `buckets/${encodeURIComponent(bucket)}/objects`, undefined, { prefix, token: tokens[page], limit: pageSize });
      if (r.truncated) tokens[page + 1] = r.nextToken;
      const rows = [
        ...r.prefixes.map((p) => [
          h('a', { href: href({ page: 'bucket', bucket, prefix: p }), class: 'folder-link' }, h('span', { 'aria-hidden': 'true' }, '📁 '), leaf(p, prefix)),
          'folder',
          '–',
          '',
        ]),
        ...r.objects.map((o) => {
          const name = leaf(o.key, prefix);
          return [
            h('a', { href: href({ page: 'object', bucket, key: o.key }), class: 'object-link' }, name),
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
      const pager = h(
        'div',
        { class: 'pager' },
        h('button', { type: 'button', class: 'button', id: 'page-prev', disabled: page === 0, onclick: () => void turn(-1) }, 'Previous page'),
        h('span', { id: 'page-number' }, `Page ${page + 1}`),
        h('button', { type: 'button', class: 'button', id: 'page-next', disabled: !r.truncated, onclick: () => void turn(1) }, 'Next page'),
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
          ? h('p', { class: 'muted', id: 'empty-folder' }, prefix ? 'This folder is empty. It exists once something is uploaded into it.' : 'This bucket is empty. Upload files above.')
          : table(`Objects in ${bucket}/${prefix}`, ['Name', 'Size', 'Last modified', ''], rows, { id: 'objects-table' }),
        rows.length > 0 || page > 0 ? pager : null,
        h('p', { class: 'muted' }, `${plural(r.prefixes.length, 'folder')}, ${plural(r.objects.length, 'object')} on this page.`),
      );
    } catch (err) {
      replaceContent(listing, errorBox(err, () => void load()));
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
    page = 0;
    await load();
    document.getElementById('page-size')?.focus();
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
      result.replaceChildren(h('p', { role: 'status', class: 'success' }, `${key} deleted.`));
      announce(`${key} deleted.`);
    } catch (err) {
      result.replaceChildren(errorBox(err));
    }
    await load();
  };

  // ---- uploads
  let uploadSeq = 0;
  const startUpload = (file: File) => {
    const n = uploadSeq++;
    const key = `${prefix}${file.name}`;
    const bar = h('progress', { id: `upload-progress-${n}`, max: file.size || 1, value: 0, 'aria-label': `Upload of ${file.name}` });
    const text = h('span', { class: 'upload-text', id: `upload-text-${n}` }, `0 of ${formatBytes(file.size)}`);
    const status = h('span', { class: 'upload-status', id: `upload-status-${n}` }, badge('info', 'uploading'));
    const cancel = h('button', { type: 'button', class: 'button button-quiet', id: `upload-cancel-${n}` }, 'Cancel', h('span', { class: 'visually-hidden' }, ` upload of ${file.name}`));
    const row = h('li', { class: 'upload', id: `upload-${n}` }, h('span', { class: 'upload-name' }, key), bar, text, status, cancel);
    uploads.appendChild(row);
    const handle = uploadFile(bucket, key, file, (loaded, total) => {
      bar.value = loaded;
      bar.max = total || 1;
      text.textContent = `${formatBytes(loaded)} of ${formatBytes(total)} (${formatPercent(total > 0 ? loaded / total : 1)})`;
    });
    cancel.addEventListener('click', () => handle.cancel());
    handle.done.then(
      (r: UploadResult) => {
        bar.value = bar.max;
        status.replaceChildren(badge('ok', 'uploaded', { 'data-state': 'done' }));
        cancel.remove();
        announce(`${file.name} uploaded${r.versionId ? ` (version ${r.versionId})` : ''}.`);
        void load();
      },
      (err: unknown) => {
        status.replaceChildren(badge('bad', 'failed', { 'data-state': 'failed' }));
        cancel.remove();
        row.appendChild(errorBox(err));
      },
    );
  };
  const fileInput = h('input', { type: 'file', id: 'upload-input', multiple: true, class: 'visually-hidden-input' });
  fileInput.addEventListener('change', () => {
    for (const f of fileInput.files ?? []) startUpload(f);
    fileInput.value = '';
  });
  const uploadLabel = h('label', { for: 'upload-input', class: 'button button-primary file-button' }, 'Upload files…');

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
      h('div', { class: 'toolbar' }, fileInput, uploadLabel, folderForm, h('p', { class: 'check' }, versioningBox, ' ', h('label', { for: 'versioning-toggle' }, 'Versioning: '), versioningState)),
      h('p', { class: 'hint' }, `Files go into ${prefix ? `the folder ${prefix}` : 'the top of the bucket'}; files above 16 MiB are uploaded in parts.`),
      uploads,
      result,
    ),
    section('Contents', 'contents-title', listing),
    section('Data protection', 'governance-title', governance),
    section('Quota', 'quota-title', quotaSection(bucket)),
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
