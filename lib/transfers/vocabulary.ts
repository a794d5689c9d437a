// The transfers family's own closed sets of words.

/**
 * The ways a recipient downloads a shared transfer, as `transfer.geo_blocked` names them:
 * `download_links` (`POST /v1/shares/{code}/download-links`, a shared collection's links too),
 * `share_page` (the form of the page at `/t/{code}`), `archive_link` (`POST /v1/shares/{code}/archive-link`,
 * a shared collection's archive link too), `file` (a download link, `GET /v1/downloads/{token}`)
 * and `archive` (an archive link, `GET /v1/archives/{token}`).
 */
export const DOWNLOAD_PATHS = ['download_links', 'share_page', 'archive_link', 'file', 'archive'] as const;
export type DownloadPath = (typeof DOWNLOAD_PATHS)[number];
