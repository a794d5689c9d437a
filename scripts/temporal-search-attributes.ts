// Registers Valise's custom search attributes (lib/temporal-search-attributes.ts) on the Temporal
// server at TEMPORAL_ADDRESS, in TEMPORAL_NAMESPACE, if it lacks them; does nothing otherwise.
// scripts/stack.sh runs it once Temporal answers (either flavour: the dev server and the
// production-shaped server both take them through the operator service), scripts/dev-test.sh
// before each run (a dev server started before the attributes existed gets them), and an operator
// runs it once against a production cluster (docs/operations.md).
import { Client, Connection } from '@temporalio/client';
import { loadConfig } from '../lib/config.ts';
import { registerSearchAttributes } from '../lib/temporal-search-attributes.ts';

const { temporal } = loadConfig();
const connection = await Connection.connect({ address: temporal.address });
try {
  const added = await registerSearchAttributes(
    new Client({ connection, namespace: temporal.namespace }),
    temporal.namespace,
  );
  console.error(
    added.length > 0
      ? `temporal: search attributes ${added.join(', ')} registered in namespace ${temporal.namespace}`
      : `temporal: search attributes registered already in namespace ${temporal.namespace}`,
  );
} finally {
  await connection.close();
}
