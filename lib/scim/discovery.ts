import { notFound } from '../errors.ts';
import { SCHEMA } from './resources.ts';
import { SCIM_MAX_RESULTS } from './users.ts';

// The discovery endpoints (RFC 7644 §4): what this service provider supports, its resource types
// and the schemas of their attributes, as identity providers read them before provisioning.

const DOCS = 'https://docs.valise.example/scim';

/** The schema URNs of the discovery answers (RFC 7643 §5, §6, §7). */
export const DISCOVERY_SCHEMA = {
  serviceProviderConfig: 'urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig',
  resourceType: 'urn:ietf:params:scim:schemas:core:2.0:ResourceType',
  schema: 'urn:ietf:params:scim:schemas:core:2.0:Schema',
} as const;

export function serviceProviderConfig(baseUrl: string) {
  return {
    schemas: [DISCOVERY_SCHEMA.serviceProviderConfig],
    documentationUri: DOCS,
    patch: { supported: true },
    bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
    filter: { supported: true, maxResults: SCIM_MAX_RESULTS },
    changePassword: { supported: false },
    sort: { supported: false },
    etag: { supported: true },
    authenticationSchemes: [
      {
        type: 'oauthbearertoken',
        name: 'Bearer token',
        description: 'A SCIM token (scim_…) created with POST /v1/scim/tokens, sent as Authorization: Bearer.',
        specUri: 'https://www.rfc-editor.org/rfc/rfc6750',
        documentationUri: DOCS,
        primary: true,
      },
    ],
    meta: { resourceType: 'ServiceProviderConfig', location: `${baseUrl}/v1/scim/ServiceProviderConfig` },
  };
}

const RESOURCE_TYPE_SCHEMA = DISCOVERY_SCHEMA.resourceType;

/**
 * One of the answers' resources, where its `meta.location` says: by id, without regard to case
 * (a resource type's name, a schema's URN: RFC 7644 §4 reads a schema at /Schemas/{urn}).
 */
function oneOf<T extends { id: string }>(list: { Resources: T[] }, id: string, what: string): T {
  const wanted = id.toLowerCase();
  const found = list.Resources.find((resource) => resource.id.toLowerCase() === wanted);
  if (!found) throw notFound(what);
  return found;
}

export const resourceType = (baseUrl: string, id: string) => oneOf(resourceTypes(baseUrl), id, 'resource type');

export function resourceTypes(baseUrl: string) {
  const types = [
    {
      schemas: [RESOURCE_TYPE_SCHEMA],
      id: 'User',
      name: 'User',
      endpoint: '/Users',
      description: 'A workspace member',
      schema: SCHEMA.user,
      schemaExtensions: [{ schema: SCHEMA.enterprise, required: false }],
      meta: { resourceType: 'ResourceType', location: `${baseUrl}/v1/scim/ResourceTypes/User` },
    },
    {
      schemas: [RESOURCE_TYPE_SCHEMA],
      id: 'Group',
      name: 'Group',
      endpoint: '/Groups',
      description: 'A group of workspace members',
      schema: SCHEMA.group,
      meta: { resourceType: 'ResourceType', location: `${baseUrl}/v1/scim/ResourceTypes/Group` },
    },
  ];
  return {
    schemas: [SCHEMA.list],
    totalResults: types.length,
    startIndex: 1,
    itemsPerPage: types.length,
    Resources: types,
  };
}

type Attribute = {
  name: string;
  type: 'string' | 'boolean' | 'complex' | 'dateTime' | 'reference';
  multiValued?: boolean;
  required?: boolean;
  caseExact?: boolean;
  mutability?: 'readOnly' | 'readWrite' | 'immutable';
  returned?: 'always' | 'default';
  uniqueness?: 'none' | 'server';
  subAttributes?: Attribute[];
  description: string;
};

function attribute(spec: Attribute): Record<string, unknown> {
  return {
    multiValued: false,
    required: false,
    caseExact: false,
    mutability: 'readWrite',
    returned: 'default',
    uniqueness: 'none',
    ...spec,
    ...(spec.subAttributes ? { subAttributes: spec.subAttributes.map(attribute) } : {}),
  };
}

const text = (name: string, description: string, extra: Partial<Attribute> = {}): Attribute => ({
  name,
  type: 'string',
  description,
  ...extra,
});

const USER_ATTRIBUTES: Attribute[] = [
  text('userName', 'Unique within the workspace, case-insensitive; often the sign-in e-mail address.', {
    required: true,
    uniqueness: 'server',
  }),
  text('externalId', "The identity provider's own id.", { caseExact: true }),
  {
    name: 'name',
    type: 'complex',
    description: 'The member name.',
    subAttributes: [
      text('formatted', 'The full name.'),
      text('familyName', 'The family name.'),
      text('givenName', 'The given name.'),
      text('middleName', 'The middle name.'),
    ],
  },
  text('displayName', 'The name shown.'),
  text('title', 'The job title.'),
  text('preferredLanguage', 'The preferred language.'),
  { name: 'active', type: 'boolean', description: 'false revokes every API key of the member.' },
  {
    name: 'emails',
    type: 'complex',
    multiValued: true,
    description: 'E-mail addresses; the primary one (or the first) is the member address.',
    subAttributes: [
      text('value', 'The address.'),
      text('type', 'work, home or other.'),
      { name: 'primary', type: 'boolean', description: 'The member address.' },
    ],
  },
];

const ENTERPRISE_ATTRIBUTES: Attribute[] = [
  text('employeeNumber', 'The employee number.', { caseExact: true }),
  text('costCenter', 'The cost center.'),
  text('organization', 'The organisation.'),
  text('division', 'The division.'),
  text('department', 'The department.'),
  {
    name: 'manager',
    type: 'complex',
    description: "The member's manager.",
    subAttributes: [text('value', 'The manager id.', { caseExact: true })],
  },
];

const GROUP_ATTRIBUTES: Attribute[] = [
  text('displayName', 'The group name.', { required: true }),
  text('externalId', "The identity provider's own id.", { caseExact: true }),
  {
    name: 'members',
    type: 'complex',
    multiValued: true,
    description: 'Members of the workspace.',
    subAttributes: [
      text('value', 'The member id.', { caseExact: true, mutability: 'immutable' }),
      text('display', 'The member name.', { mutability: 'readOnly' }),
    ],
  },
];

export function schemas(baseUrl: string) {
  const schema = (id: string, name: string, description: string, attributes: unknown[]) => ({
    schemas: [DISCOVERY_SCHEMA.schema],
    id,
    name,
    description,
    attributes,
    meta: { resourceType: 'Schema', location: `${baseUrl}/v1/scim/Schemas/${id}` },
  });
  const all = [
    schema(SCHEMA.user, 'User', 'A workspace member', USER_ATTRIBUTES.map(attribute)),
    schema(
      SCHEMA.enterprise,
      'EnterpriseUser',
      'Enterprise attributes of a member',
      ENTERPRISE_ATTRIBUTES.map(attribute),
    ),
    schema(SCHEMA.group, 'Group', 'A group of members', GROUP_ATTRIBUTES.map(attribute)),
  ];
  return { schemas: [SCHEMA.list], totalResults: all.length, startIndex: 1, itemsPerPage: all.length, Resources: all };
}

export const schema = (baseUrl: string, id: string) => oneOf(schemas(baseUrl), id, 'schema');
