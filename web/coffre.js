import { formatBytes, messageOf } from '/assets/format.js';
import { clickDownload } from '/assets/save-stream.js';
import { sendFile } from '/assets/upload.js';

// The vault page's script (the HTML is web/coffre.html, served at /v/<token>).
// The invitation token in the address is the member's credential: it is sent
// only to this origin's /v1/coffre-access/<token> routes (no referrer, no
// cookies). The server decides what the member's access allows; the page
// offers a download button only with `download` access or more, and the
// upload form only with `upload` access (docs/coffres.md, "The page").

const token = location.pathname.split('/').filter(Boolean).at(-1) ?? '';
const base = `/v1/coffre-access/${encodeURIComponent(token)}`;
const $ = (id) => document.getElementById(id);

function showProblem(message) {
  $('problem').textContent = message;
  $('problem').hidden = false;
}

async function api(method, path, body, idempotencyKey) {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: {
      accept: 'application/json',
      ...(body ? { 'content-type': 'application/json' } : {}),
      ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
    },
    body: body ? JSON.stringify(body) : undefined,
    credentials: 'omit',
    referrerPolicy: 'no-referrer',
  });
  const answer = await response.json().catch(() => null);
  if (response.ok) return answer;
  throw new Error(answer?.error?.message ?? `The server answered ${response.status}. Try again.`);
}

function itemRow(item, canDownload) {
  const row = document.createElement('li');
  row.className = 'file';
  row.dataset.itemId = item.id;
  const name = document.createElement('span');
  name.className = 'file-name';
  name.textContent = item.name;
  const size = document.createElement('span');
  size.className = 'file-size';
  size.textContent = formatBytes(item.size);
  if (canDownload) {
    // Ticked rows make the selection "Download as ZIP" takes; none ticked, it takes them all.
    const pick = document.createElement('input');
    pick.type = 'checkbox';
    pick.className = 'pick';
    pick.value = item.id;
    pick.setAttribute('aria-label', `Select ${item.name}`);
    pick.addEventListener('change', labelArchiveButton);
    row.append(pick, ' ');
  }
  row.append(name, ' ', size);
  if (canDownload) {
    const button = document.createElement('button');
    button.type = 'button';
    button.className = 'secondary';
    button.textContent = 'Download';
    button.setAttribute('aria-label', `Download ${item.name}`);
    button.addEventListener('click', () => download(item, button));
    row.append(' ', button);
  }
  return row;
}

async function download(item, button) {
  button.disabled = true;
  try {
    const link = await api('POST', `/items/${encodeURIComponent(item.id)}/download-link`);
    // A server-mode file: the browser downloads it itself, decrypted by the server, streamed.
    clickDownload(link.download_url, item.name);
  } catch (error) {
    showProblem(messageOf(error));
  } finally {
    button.disabled = false;
  }
}

const picked = () => [...document.querySelectorAll('#items input.pick:checked')].map((box) => box.value);

function labelArchiveButton() {
  const count = picked().length;
  $('archive-button').textContent = count === 0 ? 'Download all as ZIP' : `Download ${count} selected as ZIP`;
}

/** One ZIP of the ticked items (all of them when none is), built and streamed by the server. */
async function downloadArchive() {
  const button = $('archive-button');
  button.disabled = true;
  try {
    const chosen = picked();
    const link = await api('POST', '/archive-link', chosen.length > 0 ? { item_ids: chosen } : undefined);
    clickDownload(link.archive_url, link.filename);
  } catch (error) {
    showProblem(messageOf(error));
  } finally {
    button.disabled = false;
  }
}

function render(view) {
  $('coffre-name').textContent = view.coffre.name;
  document.title = `${view.coffre.name} · Valise`;
  if (view.coffre.description) {
    $('coffre-description').textContent = view.coffre.description;
    $('coffre-description').hidden = false;
  }
  const what = { view: 'see the files', download: 'see and download the files', upload: 'see, download and add files' };
  $('coffre-member').textContent = `Invited as ${view.member.email}: you can ${what[view.member.access]}.`;
  const list = $('items');
  list.replaceChildren(...view.items.map((item) => itemRow(item, view.member.can_download)));
  $('empty').hidden = view.items.length > 0;
  $('archive-bar').hidden = !view.member.can_download || view.items.length < 2;
  labelArchiveButton();
  $('upload-form').hidden = !view.member.can_upload;
}

async function load() {
  const main = $('coffre');
  main.setAttribute('aria-busy', 'true');
  try {
    render(await api('GET', ''));
  } catch (error) {
    showProblem(messageOf(error));
  } finally {
    main.setAttribute('aria-busy', 'false');
  }
}

/**
 * Declares the item, retrying a lost answer with the same Idempotency-Key: the server then answers
 * with the item it already made instead of a second one (docs/coffres.md).
 */
async function declare(item) {
  const idempotencyKey = crypto.randomUUID();
  for (let attempt = 1; ; attempt++) {
    try {
      return await api('POST', '/items', item, idempotencyKey);
    } catch (error) {
      if (!(error instanceof TypeError) || attempt === 3) throw error;
      await new Promise((resolve) => setTimeout(resolve, 500 * attempt));
    }
  }
}

$('archive-button').addEventListener('click', downloadArchive);

$('upload-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const file = $('upload-file').files?.[0];
  if (!file) return;
  const status = $('upload-status');
  $('upload-button').disabled = true;
  try {
    const created = await declare({
      name: file.name,
      size: file.size,
      ...(file.type ? { mime_type: file.type } : {}),
    });
    await sendFile(file, created.upload_url, (sent) => {
      status.textContent = `Uploading ${file.name}: ${formatBytes(sent)} of ${formatBytes(file.size)}`;
    });
    status.textContent = `${file.name} is uploaded. It appears here once it has been scanned.`;
    $('upload-form').reset();
  } catch (error) {
    showProblem(messageOf(error));
  } finally {
    $('upload-button').disabled = false;
  }
});

load();
