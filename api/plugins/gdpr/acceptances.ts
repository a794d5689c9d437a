import Joi from 'joi';
import { listLegalAcceptances } from '../../../lib/legal/service.ts';
import { defineRoute, type NoInput } from '../../route.ts';
import { callerOf } from '../../types.ts';
import { legalAcceptanceList } from './schemas.ts';

export const acceptancesRoute = defineRoute({
  method: 'GET',
  path: '/v1/gdpr/acceptances',
  options: {
    id: 'gdpr.acceptances',
    description: 'Legal acceptances of the calling user',
    notes:
      "Scope `gdpr:export`. One entry per published legal document (French): the current version and the key's " +
      'user\u2019s latest acceptance of it, read from the newest 500 `legal.*` audit entries of the key\u2019s ' +
      'environment. No query parameters.',
    tags: ['api', 'gdpr'],
    plugins: { valise: { scope: 'gdpr:export', rateClass: 'read' } },
    validate: { query: Joi.object<NoInput>({}) },
    response: { schema: legalAcceptanceList },
  },
  handler: (request) => listLegalAcceptances(request.server.app.services, callerOf(request)),
});
