import {
  createPool,
  createTypeParserPreset,
  type DatabasePool,
  type Interceptor,
  type QueryResultRow,
  SchemaValidationError,
} from 'slonik';

// Every `sql.type(schema)` query is checked against its zod schema, so a
// drifted column fails loudly at the query instead of deep in a handler.
const resultParser: Interceptor = {
  name: 'valise-result-parser',
  transformRowAsync: async (context, query, row) => {
    const parser = context.resultParser;
    if (!parser) return row;
    const result = await parser['~standard'].validate(row);
    if (result.issues) throw new SchemaValidationError(query, row, result.issues);
    return result.value as QueryResultRow;
  },
};

// Timestamps come back as Date objects rather than slonik's epoch numbers:
// they serialise straight to the ISO 8601 strings the API promises.
const timestampAsDate = {
  name: 'timestamptz',
  parse: (value: string) => new Date(value),
};

export async function createDatabasePool(url: string, maxPoolSize = 10): Promise<DatabasePool> {
  const typeParsers = createTypeParserPreset().filter((p) => p.name !== 'timestamptz' && p.name !== 'timestamp');
  return createPool(url, {
    interceptors: [resultParser],
    typeParsers: [...typeParsers, timestampAsDate],
    maxPoolSize,
    captureStackTrace: false,
    statementTimeout: 30_000,
    // Slonik runs DISCARD ALL whenever a connection returns to the pool: one
    // more round trip per query. Valise never leaves session state behind (no
    // session-level SET, temporary tables or LISTEN), so there is nothing to reset.
    resetConnection: async () => {},
  });
}
