import Joi from 'joi';
import { EVENT_CATALOG, EVENT_ENVELOPE_SCHEMA } from '../../../lib/events/catalog.ts';
import { defineRoute } from '../../route.ts';
import { listEnvelope } from '../../schemas.ts';

// The catalog is data fixed when the process starts, so the body is built once.
// It has the list envelope (one page holding every type) plus `envelope`, the
// schema of the delivery wrapping each event's `data`.
const data = [...EVENT_CATALOG]
  .sort((a, b) => (a.type < b.type ? -1 : a.type > b.type ? 1 : 0))
  .map(({ type, family, description, data }) => ({ type, family, description, data_schema: data }));

export const eventCatalogBody = {
  object: 'list' as const,
  data,
  has_more: false,
  next_cursor: null,
  limit: data.length,
  offset: null,
  envelope: EVENT_ENVELOPE_SCHEMA,
};

// A JSON Schema is an open-ended document: joi checks that one is there, not its contents.
const jsonSchema = Joi.object().unknown(true);

const eventType = Joi.object({
  type: Joi.string().required(),
  family: Joi.string().required(),
  description: Joi.string().required(),
  data_schema: jsonSchema.required(),
}).label('EventType');

export const eventCatalogRoute = defineRoute({
  method: 'GET',
  path: '/v1/webhooks/events',
  options: {
    id: 'webhooks.eventTypes',
    auth: false,
    description: 'Catalog of webhook event types',
    notes:
      'Public. Every event type, sorted by type, with its `data` payload as a JSON Schema (draft 2020-12), and ' +
      '`envelope`, the schema of the `{id, type, timestamp, data}` body every delivery carries.',
    tags: ['api', 'webhooks'],
    response: {
      schema: listEnvelope(eventType, 'EventCatalog').keys({ envelope: jsonSchema.required() }),
    },
  },
  handler: () => eventCatalogBody,
});
