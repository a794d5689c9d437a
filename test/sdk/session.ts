import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { Valise } from '../../sdk/src/index.ts';
import { startApi, type TestApi, type TestWorkspace } from '../helpers/api.ts';

export type SdkSession = {
  api: TestApi;
  ws: TestWorkspace;
  /** A client with the workspace's live key. */
  valise: Valise;
  /** A scratch folder of the file's own, removed after its tests. */
  dir: string;
};

/**
 * A test file's server (with `env` over the test environment), workspace, SDK client and scratch
 * folder: made before its tests, removed after them.
 */
export function sdkSession(workspaceName: string, env: Record<string, string> = {}): SdkSession {
  const session = {} as SdkSession;
  test.before(async () => {
    session.api = await startApi(env);
    session.ws = await session.api.workspace(workspaceName);
    session.valise = new Valise({ apiKey: session.ws.keys.live, baseUrl: session.api.url });
    session.dir = await mkdtemp(join(tmpdir(), 'valise-sdk-'));
  });
  test.after.always(async () => {
    await session.api?.close();
    if (session.dir) await rm(session.dir, { recursive: true, force: true });
  });
  return session;
}
