import { ApplicationFailure } from '@temporalio/activity';
import {
  keyWrappedPlaces,
  MasterKeyMismatchError,
  type RotationDeps,
  rewrapBatch,
} from '../lib/master-keys/rotation.ts';

// The rewrapDataKeys workflow's steps (lib/master-keys/rotation.ts). A batch commits in one
// transaction and reads only values not yet under the target key, so running it again after a
// worker died re-wraps what is left and nothing twice.

export function createMasterKeyActivities(deps: RotationDeps) {
  return {
    /** The declared columns of keyring-wrapped values (`table.column`), in the order a rotation walks them. */
    listKeyWrappedPlaces: async () => keyWrappedPlaces(),
    async rewrapKeyBatch(place: string, targetKeyId: string, after: string | null, limit: number) {
      try {
        return await rewrapBatch(deps, place, targetKeyId, after, limit);
      } catch (error) {
        // A worker whose keyring has another current key would wrap under that one: no retry of
        // this worker mends it, the operator's deployment does.
        if (error instanceof MasterKeyMismatchError) throw ApplicationFailure.nonRetryable(error.message, error.name);
        throw error;
      }
    },
  };
}
