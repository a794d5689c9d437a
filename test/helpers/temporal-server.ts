import { Connection } from '@temporalio/client';

// Which Temporal answers at an address: the dev server keeps everything in
// SQLite, the production-shaped server (VALISE_TEMPORAL=server) in PostgreSQL.
// Benches record it beside their figures; the server flavour's tests check it
// first, so that they cannot pass against the dev server.

export type TemporalServerInfo = { server_version: string; persistence: string; visibility: string };

export async function temporalServerInfo(address: string): Promise<TemporalServerInfo> {
  const connection = await Connection.connect({ address });
  try {
    const info = await connection.workflowService.getClusterInfo({});
    return {
      server_version: info.serverVersion ?? '',
      persistence: info.persistenceStore ?? '',
      visibility: info.visibilityStore ?? '',
    };
  } finally {
    await connection.close();
  }
}
