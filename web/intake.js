import { acceptFiles } from '/assets/drop-zone.js';
import { formatBytes, messageOf } from '/assets/format.js';
import { base64Decode, base64UrlEncode } from '/assets/sdk/encoding.js';
import { sealSubmission } from '/assets/sdk/intake-files.js';
import { sendEncrypted, sendFile } from '/assets/upload.js';

// The intake page (docs/intakes.md, "The intake page"): the publishable key
// comes from the link's fragment (#k=cip_…), the page reads the intake's form
// with it, and sends the chosen files as one submission. End-to-end intakes:
// the SDK's sealSubmission makes the content key, wraps it to the owner's key
// (HPKE: X-Wing from the npm library, DHKEM(X25519) through WebCrypto) and
// each file is encrypted here before it leaves. Server-mode intakes: the files
// go as they are over TLS, and the server seals them at rest.
//
// Resume: within the page's life a failed part is retried from the upload
// URL's offset (upload.js); after a reload, the submission's upload URLs and
// per-file keys wait in sessionStorage (this tab only, gone when it closes,
// removed once sent), and choosing the same files again continues it.

const intakeId = location.pathname.split('/').at(-1) ?? '';
const publishableKey = new URLSearchParams(location.hash.slice(1)).get('k');
const STATE_KEY = `valise-intake:${intakeId}`;

const $ = (id) => document.getElementById(id);
const form = $('intake-form');
const input = $('files');
const dropZone = $('drop-zone');
const list = $('file-list');
const problem = $('problem');

let intake = null;
let chosen = [];

function showProblem(message) {
  problem.textContent = message;
  problem.hidden = false;
}

async function api(method, path, body, idempotencyKey) {
  const response = await fetch(path, {
    method,
    headers: {
      authorization: `Bearer ${publishableKey}`,
      ...(body ? { 'content-type': 'application/json' } : {}),
      ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
    },
    body: body ? JSON.stringify(body) : undefined,
    credentials: 'omit',
  });
  const answer = await response.json().catch(() => null);
  if (!response.ok) {
    const error = new Error(answer?.error?.message ?? `The server answered ${response.status}.`);
    error.status = response.status;
    throw error;
  }
  return answer;
}

// --- the interrupted submission kept for a reload ---------------------------------------------

const sameFile = (file, saved) =>
  file.name === saved.name && file.size === saved.size && file.lastModified === saved.lastModified;

/**
 * Keeps (or with null forgets) the submission in progress. Storage may be refused (a privacy mode,
 * a full quota): the upload goes on all the same, only resuming after a reload is lost.
 */
let inMemory = null;

function remember(state) {
  inMemory = state;
  try {
    if (state) sessionStorage.setItem(STATE_KEY, JSON.stringify(state));
    else sessionStorage.removeItem(STATE_KEY);
  } catch {}
}

function savedState() {
  if (inMemory) return inMemory;
  try {
    return JSON.parse(sessionStorage.getItem(STATE_KEY) ?? 'null');
  } catch {
    return null;
  }
}

/** The saved submission when `files` are exactly its files (in any order), else null. */
function resumable(files) {
  const state = savedState();
  if (!state || state.files.length !== files.length) return null;
  const ordered = state.files.map((saved) => files.find((file) => sameFile(file, saved)));
  return ordered.every(Boolean) ? { state, ordered } : null;
}

// --- choosing files ---------------------------------------------------------------------------

function renderFiles() {
  list.replaceChildren(
    ...chosen.map((file, index) => {
      const row = document.createElement('li');
      row.className = 'file';
      row.dataset.index = String(index);
      const name = document.createElement('span');
      name.className = 'file-name';
      name.textContent = file.name;
      const size = document.createElement('span');
      size.className = 'file-size';
      size.textContent = formatBytes(file.size);
      const bar = document.createElement('progress');
      bar.max = 1;
      bar.value = 0;
      bar.hidden = true;
      bar.setAttribute('aria-label', `Progress of ${file.name}`);
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
      row.append(name, ' ', size, bar, remove);
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

// --- sending ----------------------------------------------------------------------------------

/** The intake's limits, checked here so that nothing is encrypted or sent for a refusal. */
function checkChoice(files) {
  if (files.length === 0) throw Object.assign(new Error('Choose at least one file.'), { field: 'drop-zone' });
  const { max_files: maxFiles, max_bytes: maxBytes } = intake.limits;
  if (files.length > maxFiles) throw new Error(`Send at most ${maxFiles} ${maxFiles === 1 ? 'file' : 'files'}.`);
  const total = files.reduce((sum, file) => sum + file.size, 0);
  if (total > maxBytes) throw new Error(`These files make ${formatBytes(total)}: at most ${formatBytes(maxBytes)}.`);
  const names = new Set(files.map((file) => file.name));
  if (names.size !== files.length) throw new Error('Two files have the same name: rename one of them.');
}

/** Starts the submission and keeps what a reload needs to continue it. */
async function start(files) {
  const sealed = await sealSubmission(intake, files);
  const body = { files: sealed.files, source: 'widget' };
  if (sealed.envelope) body.envelope = sealed.envelope;
  const reference = String(new FormData(form).get('client_reference') ?? '').trim();
  if (reference) body.client_reference = reference;
  const note = String(new FormData(form).get('note') ?? '').trim();
  if (note && intake.metadata_policy === 'allow') body.metadata = { note };
  const submission = await submit(body);
  const state = { documentId: submission.document.id, files: [] };
  for (const [index, entry] of submission.upload_urls.entries()) {
    const file = files[index];
    const material = sealed.seal ? await sealed.seal(entry.file_id, index) : null;
    state.files.push({
      name: file.name,
      size: file.size,
      lastModified: file.lastModified,
      entry: { file_id: entry.file_id, url: entry.url, size: entry.size, part_size: entry.part_size },
      // Each file's own key (derived from the content key), never the content key itself.
      key: material ? base64UrlEncode(material.key) : null,
      iv: material ? base64UrlEncode(material.noncePrefix) : null,
      sent: false,
    });
  }
  remember(state);
  return state;
}

/**
 * Starts the submission, retrying a lost answer with the same Idempotency-Key: the server then
 * answers with the document it already started instead of a second one (docs/intakes.md).
 */
async function submit(body) {
  const idempotencyKey = crypto.randomUUID();
  for (let attempt = 1; ; attempt++) {
    try {
      return await api('POST', `/v1/intakes/${intakeId}/submissions`, body, idempotencyKey);
    } catch (error) {
      const transient = error instanceof TypeError || error.status >= 500;
      if (!transient || attempt === 3) throw error;
      await new Promise((resolve) => setTimeout(resolve, 500 * attempt));
    }
  }
}

async function upload(state, files, resume) {
  const rows = [...list.querySelectorAll('li.file')];
  const total = state.files.reduce((sum, saved) => sum + saved.entry.size, 0);
  const loaded = state.files.map(() => 0);
  const bar = $('progress-bar');
  const detail = $('progress-detail');
  $('progress').hidden = false;
  for (const row of rows) {
    row.querySelector('button')?.remove();
    row.querySelector('progress').hidden = false;
  }
  const show = () => {
    const sent = loaded.reduce((a, b) => a + b, 0);
    bar.value = total > 0 ? sent / total : 1;
    detail.textContent = `${formatBytes(sent)} of ${formatBytes(total)}`;
  };
  for (const [index, saved] of state.files.entries()) {
    const file = files[index];
    const row = rows[chosen.indexOf(file)];
    const fileBar = row?.querySelector('progress');
    const onProgress = (bytes) => {
      loaded[index] = bytes;
      if (fileBar) fileBar.value = saved.entry.size > 0 ? bytes / saved.entry.size : 1;
      show();
    };
    if (saved.sent) {
      onProgress(saved.entry.size);
      continue;
    }
    $('progress-label').textContent = `${saved.key ? 'Encrypting and sending' : 'Sending'} ${file.name}…`;
    if (saved.key) {
      await sendEncrypted(file, base64Decode(saved.key), saved.entry, onProgress, {
        noncePrefix: base64Decode(saved.iv),
        resume,
      });
    } else await sendFile(file, saved.entry, onProgress, { resume });
    onProgress(saved.entry.size);
    row?.setAttribute('data-state', 'sent');
    saved.sent = true;
    remember(state);
  }
  remember(null);
  bar.value = 1;
}

form.addEventListener('submit', async (event) => {
  event.preventDefault();
  problem.hidden = true;
  const button = $('send');
  button.disabled = true;
  form.setAttribute('aria-busy', 'true');
  try {
    const files = [...chosen];
    const saved = resumable(files);
    if (!saved) checkChoice(files);
    const state = saved ? saved.state : await start(files);
    await upload(state, saved ? saved.ordered : files, Boolean(saved));
    // The files stay listed, each marked sent; what could change them goes.
    for (const id of ['drop-zone', 'reference-field', 'note-field', 'send']) $(id).hidden = true;
    $('progress').hidden = true;
    $('resume-note').hidden = true;
    $('done-detail').textContent =
      `${files.length} ${files.length === 1 ? 'file was' : 'files were'} received` +
      (intake.encryption_mode === 'e2e_asym' ? ', encrypted so that only the recipient can open them.' : '.');
    $('done').hidden = false;
    $('done-title').focus();
  } catch (error) {
    showProblem(
      savedState()
        ? `${messageOf(error)} Your files are not all sent: press Send again (or reload and choose them again) to continue.`
        : messageOf(error),
    );
    if (error.field) $(error.field)?.focus();
  } finally {
    button.disabled = false;
    form.removeAttribute('aria-busy');
  }
});

$('start-over').addEventListener('click', () => {
  remember(null);
  $('resume-note').hidden = true;
});

// --- the intake itself ------------------------------------------------------------------------

function describe(form) {
  document.title = `${form.title} · Valise`;
  $('intake-title').textContent = form.title;
  if (form.instructions) {
    $('instructions').textContent = form.instructions;
    $('instructions').hidden = false;
  }
  const owner = form.owner_public_key;
  $('encryption-note').textContent =
    form.encryption_mode === 'e2e_asym' && owner
      ? `End-to-end encrypted: this browser encrypts your files to the recipient\u2019s key (${owner.kem}, fingerprint ${owner.fingerprint}) before they leave. Valise cannot read them.`
      : 'Your files are sent over an encrypted connection; Valise encrypts them at rest and checks them for malware.';
  const { max_files: maxFiles, max_bytes: maxBytes } = form.limits;
  $('limits').textContent = `Up to ${maxFiles} ${maxFiles === 1 ? 'file' : 'files'}, ${formatBytes(maxBytes)} in all.`;
  $('note-field').hidden = form.metadata_policy !== 'allow';
}

async function load() {
  if (!publishableKey) {
    throw new Error(
      'This link is incomplete: it lacks its key (the part starting with #k=). Ask whoever sent it for the whole link.',
    );
  }
  intake = await api('GET', `/v1/intakes/${intakeId}/form`).catch((error) => {
    if (error.status === 404) throw new Error('This intake does not exist, or was deleted.');
    if (error.status === 401) throw new Error(`This link\u2019s key does not work: ${error.message}`);
    throw error;
  });
  describe(intake);
  if (intake.status !== 'open') {
    throw new Error(
      intake.status === 'expired'
        ? 'This intake has expired: it no longer accepts files.'
        : 'This intake is closed: it no longer accepts files.',
    );
  }
  $('intake').hidden = false;
  $('resume-note').hidden = savedState() === null;
}

load()
  .catch((error) => {
    $('load-problem').textContent = messageOf(error);
    $('load-problem').hidden = false;
  })
  .finally(() => {
    $('loading').hidden = true;
  });
