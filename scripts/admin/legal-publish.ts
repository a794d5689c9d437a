import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { loadConfig } from '../../lib/config.ts';
import { createDatabasePool } from '../../lib/db/pool.ts';
import { DomainError } from '../../lib/errors.ts';
import { LEGAL_LANGUAGE, publishLegalVersion } from '../../lib/legal/service.ts';

export const LEGAL_PUBLISH_USAGE =
  'npm run -s admin -- legal-publish --slug SLUG --version V --effective-date YYYY-MM-DD --title T --body-file FILE';

/** Publishes a new version of a legal document (docs/legal.md, "Publishing a version"). */
export async function legalPublish(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      slug: { type: 'string' },
      version: { type: 'string' },
      'effective-date': { type: 'string' },
      title: { type: 'string' },
      'body-file': { type: 'string' },
    },
  });
  const missing = ['slug', 'version', 'effective-date', 'title', 'body-file'].filter(
    (name) => !values[name as keyof typeof values]?.trim(),
  );
  const date = values['effective-date'] ?? '';
  if (missing.length > 0 || !/^\d{4}-\d{2}-\d{2}$/.test(date) || Number.isNaN(Date.parse(date))) {
    process.stderr.write(
      `${missing.map((name) => `--${name} is required`).join('\n') || '--effective-date: YYYY-MM-DD'}\nusage: ${LEGAL_PUBLISH_USAGE}\n`,
    );
    return 1;
  }
  const body = (await readFile(values['body-file'] ?? '', 'utf8')).trim();
  if (!body) {
    process.stderr.write('the body file is empty\n');
    return 1;
  }
  const db = await createDatabasePool(loadConfig().database.url, 2);
  try {
    const published = await publishLegalVersion(db, {
      slug: values.slug?.trim() ?? '',
      language: LEGAL_LANGUAGE,
      version: values.version?.trim() ?? '',
      title: values.title?.trim() ?? '',
      effectiveDate: date,
      body,
    });
    process.stdout.write(
      `Published ${published.slug} version ${published.version}, in effect from ${published.effective_date}.\n`,
    );
    return 0;
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    process.stderr.write(`${error.message}\n`);
    return 1;
  } finally {
    await db.end();
  }
}
