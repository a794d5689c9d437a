// Saving a stream of bytes as a downloaded file. Preferred: hand the stream to
// the download service worker (web/download-worker.js), which serves it as a
// normal download, so memory stays at about one VAL1 segment. Fallback, where
// service workers or transferable streams are missing: collect a Blob and save
// that, which holds the whole file in memory (the page says so).

const WORKER_URL = '/assets/download-worker.js';
const WORKER_SCOPE = '/assets/downloads/';

let workerPromise;

function activeWorker() {
  workerPromise ??= (async () => {
    if (!('serviceWorker' in navigator) || !window.isSecureContext) return null;
    const registration = await navigator.serviceWorker.register(WORKER_URL, { scope: WORKER_SCOPE });
    const worker = registration.installing ?? registration.waiting ?? registration.active;
    if (!worker) return null;
    if (worker.state !== 'activated') {
      await new Promise((resolve, reject) => {
        worker.addEventListener('statechange', () => {
          if (worker.state === 'activated') resolve();
          if (worker.state === 'redundant') reject(new Error('the download worker failed to install'));
        });
      });
    }
    return worker;
  })().catch(() => null);
  return workerPromise;
}

/** Starts the browser's own download of `href`, saved as `name`. */
export function clickDownload(href, name) {
  const link = document.createElement('a');
  link.href = href;
  link.download = name;
  link.hidden = true;
  document.body.append(link);
  link.click();
  link.remove();
}

/**
 * Saves `stream` as a file named `name`. Resolves when every byte has been handed
 * over, rejects with the stream's error. Returns how: 'stream' or 'memory'.
 */
export async function saveStream(stream, { name, size, onMethod }) {
  const worker = await activeWorker();
  if (worker) {
    const { readable, writable } = new TransformStream();
    const id = crypto.randomUUID();
    const channel = new MessageChannel();
    const ready = new Promise((resolve) => {
      channel.port1.onmessage = resolve;
    });
    try {
      worker.postMessage({ id, name, size, stream: readable }, [channel.port2, readable]);
    } catch {
      // Transferable streams are missing (DataCloneError): use memory instead.
      return saveInMemory(stream, name, onMethod);
    }
    await ready;
    onMethod?.('stream');
    const done = stream.pipeTo(writable);
    // A navigation, not <a download>: Chromium does not route download-attribute requests
    // through service workers. A hidden frame keeps this page where it is.
    const frame = document.createElement('iframe');
    frame.hidden = true;
    frame.title = 'download';
    frame.src = `${WORKER_SCOPE}${id}/${encodeURIComponent(name)}`;
    document.body.append(frame);
    try {
      await done;
    } finally {
      setTimeout(() => frame.remove(), 10_000);
    }
    return 'stream';
  }
  return saveInMemory(stream, name, onMethod);
}

async function saveInMemory(stream, name, onMethod) {
  onMethod?.('memory');
  const blob = await new Response(stream).blob();
  const url = URL.createObjectURL(blob);
  clickDownload(url, name);
  // The click has started reading the Blob; release it once that is surely done.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
  return 'memory';
}
