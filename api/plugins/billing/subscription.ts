import { getSubscription } from '../../../lib/billing/service.ts';
import { defineRoute } from '../../route.ts';
import { callerOf } from '../../types.ts';
import { subscription } from './schemas.ts';

export const subscriptionRoute = defineRoute({
  method: 'GET',
  path: '/v1/billing/subscription',
  options: {
    id: 'billing.subscription',
    description: "Get the workspace's plan, subscription and usage",
    notes:
      "The workspace's plan and subscription as the payment processor last reported them, and its usage this period (the subscription's current period, else the calendar month, UTC), counted from the live environment only: sandbox and test keys are not billed.",
    tags: ['api', 'billing'],
    plugins: { valise: { scope: 'billing:read' } },
    response: { schema: subscription },
  },
  handler: (request) => getSubscription(request.server.app.services, callerOf(request)),
});
