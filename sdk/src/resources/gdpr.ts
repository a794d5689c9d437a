import type { RequestOptions } from '../client.ts';
import { ValiseError } from '../errors.ts';
import type { CreateGdprExportParams, GdprExport, LegalAcceptanceList } from '../types.ts';
import { Resource } from './resource.ts';

/** GDPR: the key's user's legal acceptances, and exports of what Valise holds (scope `gdpr:export`). */
export class Gdpr extends Resource {
  /** One entry per published legal document, with a `summary` of counts. */
  acceptances(options?: RequestOptions): Promise<LegalAcceptanceList> {
    return this.call('gdpr.acceptances', { options });
  }

  /** Starts an export of the workspace (the key's environment) or, with `user_id`, of one user. */
  createExport(params: CreateGdprExportParams = {}, options?: RequestOptions): Promise<GdprExport> {
    return this.call('gdpr.createExport', { body: params, options });
  }

  /** An export; while `completed` it carries a fresh `download_url`, valid 300 seconds. */
  getExport(id: string, options?: RequestOptions): Promise<GdprExport> {
    return this.call('gdpr.getExport', { params: { id }, options });
  }

  /** The environment's latest export. */
  latestExport(options?: RequestOptions): Promise<GdprExport> {
    return this.call('gdpr.latestExport', { options });
  }

  /** Polls an export until it is `completed` (or `failed`, `expired`), every `intervalMs`, up to `timeoutMs`. */
  async waitForExport(
    id: string,
    { intervalMs = 1000, timeoutMs = 300_000, ...options }: RequestOptions & { intervalMs?: number } = {},
  ): Promise<GdprExport> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = await this.getExport(id, options);
      if (found.status !== 'queued' && found.status !== 'running') return found;
      if (Date.now() >= deadline) {
        throw new ValiseError({ code: 'timeout', message: `Export ${id} is still ${found.status}.` });
      }
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  }

  /** The export's JSON, from its `download_url` (valid 300 seconds: fetch the export again for a new one). */
  async download(exportOrUrl: GdprExport | string, options: RequestOptions = {}): Promise<unknown> {
    const url = typeof exportOrUrl === 'string' ? exportOrUrl : exportOrUrl.download_url;
    if (!url) throw new ValiseError({ code: 'not_ready', message: 'This export has no download link (yet).' });
    const response = await this.fetchLink(url, options);
    if (!response.ok) {
      const answer = (await response.json().catch(() => null)) as {
        error?: { code?: string; message?: string };
      } | null;
      throw new ValiseError({
        code: answer?.error?.code ?? 'unexpected_response',
        message: answer?.error?.message ?? `The export download answered ${response.status}.`,
        status: response.status,
      });
    }
    return response.json();
  }
}
