import { formatBytes, messageOf } from '/assets/format.js';
import { clickDownload, saveStream } from '/assets/save-stream.js';
import { fileKey, linkKeyFrom } from '/assets/sdk/crypto/link-key.js';
import { createDecryptStream } from '/assets/sdk/crypto/val1.js';

// The recipient page's script (the HTML comes from api/plugins/shares/page.ts).
// It unlocks the transfer with the JSON API (one counted download per click),
// then lets the browser download server-mode files, or fetches e2e blobs and
// decrypts them here with the key from the link's fragment, which is read from
// location.hash and never sent anywhere.

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

/** One counted download: links for one file, or for all of them when `fileId` is null. */
async function unlock(fileId) {
  const body = {};
  if (password?.value) body.password = password.value;
  if (fileId) body.file_id = fileId;
  const response = await fetch(`/v1/shares/${encodeURIComponent(code)}/download-links`, {
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

async function download(fileId) {
  clearProblem();
  setBusy(true);
  try {
    const links = await unlock(fileId);
    if (!e2e) {
      for (const link of links.files) clickDownload(link.download_url, link.name);
      progress.hidden = false;
      progressBar.value = 1;
      progressLabel.textContent = 'Download started';
      progressDetail.textContent = 'Your browser is saving the file.';
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
    downloadAll.hidden = false;
    downloadAll.addEventListener('click', () => download(null));
  }
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const fileId = event.submitter?.value;
    if (password && !password.value) {
      password.setAttribute('aria-invalid', 'true');
      showProblem('Enter the password to download.');
      password.focus();
      return;
    }
    download(fileId || null);
  });
}
