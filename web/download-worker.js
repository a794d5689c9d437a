// A service worker that turns a stream handed over by a page into an ordinary
// download, so decrypted e2e files go to disk as they are produced instead of
// piling up in memory (the approach of StreamSaver.js). Its scope is
// /assets/downloads/: it sees only the URLs it serves, nothing else of the site.

const pending = new Map();

self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));

self.addEventListener('message', (event) => {
  const { id, name, size, stream } = event.data ?? {};
  if (typeof id !== 'string' || !(stream instanceof ReadableStream)) return;
  pending.set(id, { name, size, stream });
  // The page waits for this before it starts the download, so the URL exists.
  event.ports[0]?.postMessage({ ready: id });
});

self.addEventListener('fetch', (event) => {
  const url = new URL(event.request.url);
  const match = url.pathname.match(/^\/assets\/downloads\/([\w-]+)\//);
  if (!match) return;
  const entry = pending.get(match[1]);
  pending.delete(match[1]); // one use: a reload must not replay someone's file
  if (!entry) {
    event.respondWith(new Response('This download has ended. Go back to the page.', { status: 404 }));
    return;
  }
  const headers = {
    'Content-Type': 'application/octet-stream',
    'Content-Disposition': `attachment; filename*=UTF-8''${encodeURIComponent(entry.name)}`,
    'X-Content-Type-Options': 'nosniff',
  };
  if (Number.isSafeInteger(entry.size)) headers['Content-Length'] = String(entry.size);
  event.respondWith(new Response(entry.stream, { headers }));
});
