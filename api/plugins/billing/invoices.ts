import Joi from 'joi';
import { listInvoices } from '../../../lib/billing/service.ts';
import type { PageQuery } from '../../../lib/pagination.ts';
import { defineRoute } from '../../route.ts';
import { pageQuery } from '../../schemas.ts';
import { callerOf } from '../../types.ts';
import { invoiceList } from './schemas.ts';

export const invoicesRoute = defineRoute({
  method: 'GET',
  path: '/v1/billing/invoices',
  options: {
    id: 'billing.invoices',
    description: "List the workspace's invoices",
    notes: 'Newest first by the date the processor created them, as its last event described them.',
    tags: ['api', 'billing'],
    plugins: { valise: { scope: 'billing:read' } },
    validate: { query: Joi.object<PageQuery>(pageQuery()) },
    response: { schema: invoiceList },
  },
  handler: (request) => listInvoices(request.server.app.services, callerOf(request), request.query),
});
