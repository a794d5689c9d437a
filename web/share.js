import { formatBytes, messageOf } from '/assets/format.js';
import { clickDownload, saveStream } from '/assets/save-stream.js';
import { fileKey, linkKeyFrom } from '/assets/sdk/crypto/link-key.js';
import { createDecryptStream, DEFAULT_SEGMENT_SIZE, decryptedSize } from '/assets/sdk/crypto/val1.js';
import { planZip, ZipWriter } from '/assets/sdk/zip.js';

// The recipient page's script (the HTML comes from api/plugins/shares/page.ts).
// Behind a password the page names no file: "Unlock" sends the password to
// POST /v1/shares/<code>/unlock (no download counted) and lists the files it
// returns. A download asks for links with the JSON API (one counted download
// per click), then lets the browser download server-mode files, or fetches e2e
// blobs and decrypts them here with the key from the link's fragment, which is
// read from location.hash and never sent anywhere. "Download all" saves one
// ZIP: the server's archive link in server mode; in e2e mode the files are
// decrypted here one after the other into a ZIP built here with the same
// writer (sdk/src/zip.ts), streamed to disk.

const form = document.getElementById('share-form');
const problem = document.getElementById('problem');
const progress = document.getElementById('progress');
const progressBar = document.getElementById('progress-bar');
const progressLabel = document.getElementById('progress-label');
const progressDetail = document.getElementById('progress-detail');
const memoryNote = document.getElementById('memory-note');
const password = document.getElementById('password');
const downloadAll = document.getElementById('download-all');

const code = form?.dataset.code ?? '';
const e2e = form?.dataset.mode === 'e2e';
const buttons = () => [...document.querySelectorAll('#share-form button')];
const locked = () => form?.dataset.locked === 'true';
/** The password that unlocked the page: every request for links sends it again. */
let unlockedWith = null;

function showProblem(message) {
  problem.textContent = message;
  problem.hidden = false;
}

function clearProblem() {
  problem.hidden = true;
  problem.textContent = '';
  password?.removeAttribute('aria-invalid');
}

function readLinkKey() {
  try {
    return linkKeyFrom(location.href);
  } catch {
    return null;
  }
}

const linkKey = e2e ? readLinkKey() : null;

function setBusy(busy) {
  for (const button of buttons()) button.disabled = busy || (e2e && !linkKey);
  form.setAttribute('aria-busy', String(busy));
}

/** POSTs JSON to the share API; a refusal becomes an Error with the server's message. */
async function post(path, body) {
  const response = await fetch(`/v1/shares/${encodeURIComponent(code)}/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify(body),
    credentials: 'omit',
    referrerPolicy: 'no-referrer',
  });
  const answer = await response.json().catch(() => null);
  if (response.ok) return answer;
  const error = answer?.error ?? {};
  if (error.reason === 'password_required' || error.param === 'password') {
    password?.setAttribute('aria-invalid', 'true');
    password?.focus();
    password?.select();
  }
  throw new Error(error.message ?? `The server answered ${response.status}. Try again.`);
}

const passwordBody = () => {
  const value = unlockedWith ?? password?.value;
  return value ? { password: value } : {};
};

/** One counted download: links for one file, or for all of them when `fileId` is null. */
function unlock(fileId) {
  return post('download-links', { ...passwordBody(), ...(fileId ? { file_id: fileId } : {}) });
}

/** What the recipient will save: e2e blobs are VAL1 with the SDK's 64 KiB segments. */
function plainSizeOf(size) {
  return e2e ? (decryptedSize(size, DEFAULT_SEGMENT_SIZE) ?? size) : size;
}

function fileRow(file) {
  const row = document.createElement('li');
  row.className = 'file';
  row.dataset.fileId = file.id;
  row.dataset.size = String(file.size);
  row.dataset.plainSize = String(plainSizeOf(file.size));
  const name = document.createElement('span');
  name.className = 'file-name';
  name.textContent = file.name;
  const size = document.createElement('span');
  size.className = 'file-size';
  size.dataset.bytes = row.dataset.plainSize;
  size.textContent = formatBytes(plainSizeOf(file.size));
  const button = document.createElement('button');
  button.type = 'submit';
  button.name = 'file_id';
  button.value = file.id;
  button.className = 'secondary';
  button.setAttribute('aria-label', `Download ${file.name}`);
  button.textContent = 'Download';
  row.append(name, ' ', size, button);
  return row;
}

/** The unlocked view: title, file count and size, one row per file. */
function showFiles(view) {
  const title = view.transfer_title || 'Files shared with you';
  document.getElementById('share-title').textContent = title;
  document.title = `${title} · Valise`;
  const total = view.files.reduce((sum, file) => sum + plainSizeOf(file.size), 0);
  const count = document.getElementById('share-count');
  if (count) {
    count.textContent = `${view.files.length} ${view.files.length === 1 ? 'file' : 'files'}, ${formatBytes(total)}`;
  }
  const list = form.querySelector('ul.files');
  list.replaceChildren(...view.files.map(fileRow));
  list.hidden = false;
  document.getElementById('unlock')?.remove();
  const field = document.getElementById('password-field');
  if (field) field.hidden = true;
  form.dataset.locked = 'false';
  if (downloadAll && view.files.length > 1) {
    downloadAll.textContent = `Download all as ZIP (${formatBytes(total)})`;
    downloadAll.hidden = false;
  }
}

async function unlockPage() {
  clearProblem();
  setBusy(true);
  try {
    const view = await post('unlock', passwordBody());
    unlockedWith = password?.value ?? null;
    showFiles(view);
  } catch (error) {
    showProblem(messageOf(error));
  } finally {
    setBusy(false);
  }
}

async function decryptAndSave(file, link, fileCount) {
  const plaintextSize = Number(document.querySelector(`[data-file-id="${file.file_id}"]`)?.dataset.plainSize);
  progress.hidden = false;
  progressLabel.textContent = `Decrypting ${file.name}…`;
  progressBar.value = 0;
  const response = await fetch(link.download_url, { credentials: 'omit', referrerPolicy: 'no-referrer' });
  if (!response.ok || !response.body) {
    const answer = await response.json().catch(() => null);
    throw new Error(answer?.error?.message ?? `The download failed (${response.status}).`);
  }
  const key = await fileKey(linkKey, file.file_id, fileCount);
  let done = 0;
  const counter = new TransformStream({
    transform(chunk, controller) {
      done += chunk.byteLength;
      progressBar.value = plaintextSize > 0 ? done / plaintextSize : 1;
      progressDetail.textContent = `${formatBytes(done)} of ${formatBytes(plaintextSize)}`;
      controller.enqueue(chunk);
    },
  });
  const plain = response.body.pipeThrough(createDecryptStream({ key, blobSize: file.size })).pipeThrough(counter);
  const method = await saveStream(plain, {
    name: file.name,
    size: plaintextSize,
    onMethod: (how) => {
      memoryNote.hidden = how !== 'memory';
      document.body.dataset.saveMethod = how;
    },
  });
  progressBar.value = 1;
  progressLabel.textContent = 'Done';
  progressDetail.textContent = `${file.name}: decrypted and saved (${formatBytes(done)}).`;
  return method;
}

function showStarted(detail) {
  progress.hidden = false;
  progressBar.value = 1;
  progressLabel.textContent = 'Download started';
  progressDetail.textContent = detail;
}

/** The bytes of every e2e file, decrypted in turn, as one ZIP stream of `plan.size` bytes. */
function zipOfDecrypted(links, files, plan) {
  const zip = new ZipWriter(plan);
  let index = 0;
  let reader = null;
  let done = 0;
  return new ReadableStream({
    async pull(controller) {
      if (!reader) {
        const link = links[index];
        if (!link) {
          for (const bytes of zip.finish()) controller.enqueue(bytes);
          controller.close();
          return;
        }
        const file = files[index];
        const response = await fetch(link.download_url, { credentials: 'omit', referrerPolicy: 'no-referrer' });
        if (!response.ok || !response.body) {
          const answer = await response.json().catch(() => null);
          throw new Error(answer?.error?.message ?? `The download failed (${response.status}).`);
        }
        const key = await fileKey(linkKey, link.file_id, files.length);
        reader = response.body.pipeThrough(createDecryptStream({ key, blobSize: file.size })).getReader();
        progressLabel.textContent = `Decrypting ${link.name}…`;
        controller.enqueue(zip.start());
      }
      const { value, done: ended } = await reader.read();
      if (ended) {
        controller.enqueue(zip.end());
        reader = null;
        index++;
        return;
      }
      done += value.byteLength;
      progressBar.value = plan.size > 0 ? done / plan.size : 1;
      progressDetail.textContent = `${formatBytes(done)} of ${formatBytes(plan.size)}`;
      controller.enqueue(zip.update(value));
    },
    cancel(reason) {
      return reader?.cancel(reason);
    },
  });
}

/** "Download all": one ZIP, made by the server (server mode) or here (e2e). One counted download. */
async function downloadAllFiles() {
  const title = document.getElementById('share-title')?.textContent || 'Files shared with you';
  if (!e2e) {
    const link = await post('archive-link', passwordBody());
    clickDownload(link.archive_url, link.filename);
    showStarted(`Your browser is saving ${link.filename} (${formatBytes(link.size)}).`);
    return;
  }
  const links = await unlock(null);
  const files = links.files.map((link) => {
    const row = document.querySelector(`[data-file-id="${link.file_id}"]`);
    return { size: Number(row?.dataset.size), plainSize: Number(row?.dataset.plainSize) };
  });
  const plan = planZip(links.files.map((link, i) => ({ name: link.name, size: files[i].plainSize })));
  const name = `${title.replace(/[/\\]/g, '_')}.zip`;
  progress.hidden = false;
  progressBar.value = 0;
  await saveStream(zipOfDecrypted(links.files, files, plan), {
    name,
    size: plan.size,
    onMethod: (how) => {
      memoryNote.hidden = how !== 'memory';
      document.body.dataset.saveMethod = how;
    },
  });
  progressBar.value = 1;
  progressLabel.textContent = 'Done';
  progressDetail.textContent = `${name}: ${links.files.length} files decrypted and saved (${formatBytes(plan.size)}).`;
}

async function download(fileId, { zip = false } = {}) {
  clearProblem();
  setBusy(true);
  try {
    if (zip) return await downloadAllFiles();
    const links = await unlock(fileId);
    if (!e2e) {
      for (const link of links.files) clickDownload(link.download_url, link.name);
      showStarted('Your browser is saving the file.');
      return;
    }
    const fileCount = document.querySelectorAll('.file').length;
    for (const link of links.files) {
      const size = Number(document.querySelector(`[data-file-id="${link.file_id}"]`)?.dataset.size);
      await decryptAndSave({ file_id: link.file_id, name: link.name, size }, link, fileCount);
    }
  } catch (error) {
    const message = messageOf(error);
    showProblem(
      /integrity|damaged|key is wrong/i.test(message)
        ? 'These files could not be decrypted: the link is incomplete or the file is damaged. Ask the sender for the link again.'
        : message,
    );
    progress.hidden = true;
  } finally {
    setBusy(false);
  }
}

if (form && form.dataset.available === 'true') {
  if (e2e && !linkKey) {
    showProblem('This link is missing its decryption key (the part after #). Ask the sender for the whole link.');
  }
  for (const row of document.querySelectorAll('.file')) {
    row.dataset.plainSize = row.querySelector('.file-size')?.dataset.bytes ?? row.dataset.size;
  }
  setBusy(false);
  if (downloadAll) {
    downloadAll.hidden = locked() || document.querySelectorAll('.file').length < 2;
    downloadAll.addEventListener('click', () => download(null, { zip: true }));
  }
  form.addEventListener('submit', (event) => {
    // A page unlocked by the form itself (sent before this script ran) carries the server's proof
    // of the password instead of the password: its buttons post the form as they do without script.
    if (form.querySelector('input[name="unlock"]')) return;
    event.preventDefault();
    const fileId = event.submitter?.value;
    if (password && unlockedWith === null && !password.value) {
      password.setAttribute('aria-invalid', 'true');
      showProblem(locked() ? 'Enter the password to see the files.' : 'Enter the password to download.');
      password.focus();
      return;
    }
    if (locked()) unlockPage();
    else download(fileId || null);
  });
}
