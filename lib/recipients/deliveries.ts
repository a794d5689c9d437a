import { pipeline, type Readable, Transform } from 'node:stream';
import { createEventQueries } from '../db/queries/events.ts';
import { createRecipientQueries } from '../db/queries/recipients.ts';
import { transferEventView } from '../events/views.ts';
import type { Services } from '../services.ts';
import type { Download, DownloadTarget } from '../transfers/download-links.ts';

// Counting downloads made through personal links (docs/recipients.md,
// "Counting downloads"). A file is delivered when the link's responses have
// sent every byte of it without a gap and the response that sent its end
// finished: handed its last byte to the network. An aborted response counts
// the bytes it passed on, so a Range request resuming from them can finish the
// file; a grant (one download-links call) counts one download for its
// recipient, once, when all the files it named are delivered.

export type DeliveryCount = {
  /** The body to send instead of the download's content: the same bytes, counted. */
  body: Readable;
  /** Records the response once it is over; `finished`: it handed every byte to the network. */
  settle: (finished: boolean) => Promise<void>;
};

/** Counts what a personal link's response sends; null for a download that came through no personal link. */
export function countDelivery(services: Services, target: DownloadTarget, download: Download): DeliveryCount | null {
  const linkId = target.personalLinkId;
  if (!linkId) return null;
  const start = download.range?.start ?? 0;
  const length = download.range ? download.range.end - download.range.start + 1 : download.size;
  let passed = 0;
  const body = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      passed += chunk.length;
      callback(null, chunk);
    },
  });
  pipeline(download.content, body, () => undefined);
  let settled = false;
  return {
    body,
    settle: async (finished) => {
      if (settled) return;
      settled = true;
      const bytes = finished ? length : Math.min(passed, length);
      await recordResponse(services, target, linkId, { start, bytes, finished });
    },
  };
}

async function recordResponse(
  services: Services,
  target: DownloadTarget,
  linkId: string,
  response: { start: number; bytes: number; finished: boolean },
): Promise<void> {
  const { transfer, file, grantId } = target;
  await services.db.transaction(async (tx) => {
    const recipients = createRecipientQueries(tx);
    const outcome = await recipients.recordResponse(grantId, file.id, response);
    if (!outcome?.grantCompleted) return;
    const link = await recipients.findLink(linkId);
    if (!link) return;
    const downloadsCompleted = await recipients.countCompletedDownload(linkId);
    await createEventQueries(tx).record(
      { workspaceId: transfer.workspace_id, environment: transfer.environment },
      'recipient.download_completed',
      {
        transfer: transferEventView(transfer),
        recipient: { id: link.recipient_id, email: link.email },
        file_ids: [...(await recipients.grantFiles(grantId))],
        downloads_completed: downloadsCompleted,
      },
    );
  });
}

/**
 * Through a personal link, an archive (lib/zip/archives.ts) delivers every file of its grant at
 * once: called when its response has sent the whole archive, never for an archive cut short,
 * which does not resume.
 */
export function countArchiveDelivery(
  services: Services,
  transfer: DownloadTarget['transfer'],
  files: readonly DownloadTarget['file'][],
  grantId: string,
  linkId: string,
): () => Promise<void> {
  return async () => {
    for (const file of files) {
      const target = { transfer, file, grantId, expiresAt: new Date(), personalLinkId: linkId };
      await recordResponse(services, target, linkId, { start: 0, bytes: file.size, finished: true });
    }
  };
}
