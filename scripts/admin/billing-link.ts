import { parseArgs } from 'node:util';
import { linkCustomer } from '../../lib/billing/service.ts';
import { loadConfig } from '../../lib/config.ts';
import { createDatabasePool } from '../../lib/db/pool.ts';
import { DomainError } from '../../lib/errors.ts';

export const BILLING_LINK_USAGE = 'npm run -s admin -- billing-link --workspace WORKSPACE_ID --customer cus_…';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const CUSTOMER = /^cus_[A-Za-z0-9]{1,250}$/;

/** Links a workspace to its payment-processor customer (docs/billing.md, "Linking a workspace"). */
export async function billingLinkCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { workspace: { type: 'string' }, customer: { type: 'string' } } });
  if (!UUID.test(values.workspace ?? '') || !CUSTOMER.test(values.customer ?? '')) {
    process.stderr.write(`--workspace (a uuid) and --customer (cus_…) are required\nusage: ${BILLING_LINK_USAGE}\n`);
    return 1;
  }
  const db = await createDatabasePool(loadConfig().database.url, 2);
  try {
    const linked = await linkCustomer({ db }, values.workspace ?? '', values.customer ?? '');
    process.stdout.write(`${JSON.stringify({ workspace_id: linked.workspace_id, customer_id: linked.customer_id })}\n`);
    return 0;
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    process.stderr.write(`${error.message}\n`);
    return 1;
  } finally {
    await db.end();
  }
}
