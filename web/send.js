import { acceptFiles } from '/assets/drop-zone.js';
import { formatBytes, messageOf } from '/assets/format.js';
import { fileKey, shareLinkWithKey } from '/assets/sdk/crypto/link-key.js';
import { encryptedSize } from '/assets/sdk/crypto/val1.js';
import { sendEncrypted, sendFile } from '/assets/upload.js';

// The sender page: choose files, create the transfer with the API key typed in,
// upload each file to its upload URL, show the share link. In e2e mode each file
// is encrypted here with the SDK's VAL1 code before it leaves, and the link key
// is put in the link's fragment.

const form = document.getElementById('send-form');
const input = document.getElementById('files');
const dropZone = document.getElementById('drop-zone');
const list = document.getElementById('file-list');
const problem = document.getElementById('problem');
const progress = document.getElementById('progress');
const progressBar = document.getElementById('progress-bar');
const progressLabel = document.getElementById('progress-label');
const progressDetail = document.getElementById('progress-detail');
const done = document.getElementById('done');

let chosen = [];

function showProblem(message) {
  problem.textContent = message;
  problem.hidden = false;
}

function renderFiles() {
  list.replaceChildren(
    ...chosen.map((file, index) => {
      const row = document.createElement('li');
      row.className = 'file';
      const name = document.createElement('span');
      name.className = 'file-name';
      name.textContent = file.name;
      const size = document.createElement('span');
      size.className = 'file-size';
      size.textContent = formatBytes(file.size);
      const remove = document.createElement('button');
      remove.type = 'button';
      remove.className = 'link';
      remove.textContent = 'Remove';
      remove.setAttribute('aria-label', `Remove ${file.name}`);
      remove.addEventListener('click', () => {
        chosen.splice(index, 1);
        renderFiles();
        input.focus();
      });
      row.append(name, ' ', size, remove);
      return row;
    }),
  );
}

function addFiles(files) {
  chosen = [...chosen, ...files];
  problem.hidden = true;
  renderFiles();
}

acceptFiles(dropZone, input, addFiles);

async function createTransfer(apiKey, body) {
  const response = await fetch('/v1/transfers', {
    method: 'POST',
    headers: {
      authorization: `Bearer ${apiKey}`,
      'content-type': 'application/json',
      'idempotency-key': `web_${crypto.randomUUID()}`,
    },
    body: JSON.stringify(body),
    credentials: 'omit',
  });
  const answer = await response.json().catch(() => null);
  if (!response.ok) throw new Error(answer?.error?.message ?? `The server answered ${response.status}.`);
  return answer;
}

function options(data) {
  const body = { encryption_mode: data.get('mode') === 'e2e' ? 'e2e' : 'server' };
  const title = String(data.get('transfer_title') ?? '').trim();
  if (title) body.transfer_title = title;
  body.expires_in_hours = Number(data.get('expires_in_hours') ?? 168);
  const limit = String(data.get('max_downloads') ?? '');
  if (limit) body.max_downloads = Number(limit);
  const password = String(data.get('password') ?? '');
  if (password) body.password = password;
  return body;
}

async function send() {
  const data = new FormData(form);
  const apiKey = String(data.get('api_key') ?? '').trim();
  if (!apiKey) throw Object.assign(new Error('Enter your API key.'), { field: 'api-key' });
  if (chosen.length === 0) throw Object.assign(new Error('Choose at least one file.'), { field: 'drop-zone' });
  const body = options(data);
  const e2e = body.encryption_mode === 'e2e';
  const files = [...chosen];
  const created = await createTransfer(apiKey, {
    ...body,
    files: files.map((file) => ({
      name: file.name,
      // In e2e mode the server stores, and so is told the size of, the encrypted blob.
      size: e2e ? encryptedSize(file.size) : file.size,
      ...(/^[\w.+-]+\/[\w.+-]+$/.test(file.type) ? { mime_type: file.type } : {}),
    })),
  });
  const linkKey = e2e ? crypto.getRandomValues(new Uint8Array(32)) : null;
  const total = created.upload_urls.reduce((sum, entry) => sum + entry.size, 0);
  let before = 0;
  progress.hidden = false;
  for (const [index, entry] of created.upload_urls.entries()) {
    const file = files[index];
    progressLabel.textContent = `${e2e ? 'Encrypting and uploading' : 'Uploading'} ${file.name}…`;
    const onProgress = (loaded) => {
      progressBar.value = total > 0 ? (before + loaded) / total : 1;
      progressDetail.textContent = `${formatBytes(before + loaded)} of ${formatBytes(total)}`;
    };
    if (linkKey) await sendEncrypted(file, await fileKey(linkKey, entry.file_id, files.length), entry, onProgress);
    else await sendFile(file, entry, onProgress);
    before += entry.size;
  }
  progressBar.value = 1;
  return {
    shareUrl: linkKey ? shareLinkWithKey(created.share_url, linkKey) : created.share_url,
    e2e,
  };
}

form.addEventListener('submit', async (event) => {
  event.preventDefault();
  problem.hidden = true;
  const button = document.getElementById('send');
  button.disabled = true;
  form.setAttribute('aria-busy', 'true');
  try {
    const result = await send();
    form.hidden = true;
    progress.hidden = true;
    document.getElementById('share-link').value = result.shareUrl;
    document.getElementById('share-help').textContent = result.e2e
      ? 'The key is the part after #: whoever has the whole link can decrypt the files. Valise never sees it.'
      : 'The files are checked for malware for a moment before they can be downloaded.';
    done.hidden = false;
    document.getElementById('done-title').focus();
  } catch (error) {
    progress.hidden = true;
    showProblem(messageOf(error));
    if (error.field) document.getElementById(error.field)?.focus();
  } finally {
    button.disabled = false;
    form.removeAttribute('aria-busy');
  }
});

document.getElementById('copy').addEventListener('click', async (event) => {
  const field = document.getElementById('share-link');
  field.select();
  try {
    await navigator.clipboard.writeText(field.value);
    event.target.textContent = 'Copied';
  } catch {
    event.target.textContent = 'Press Ctrl+C to copy';
  }
});
