// The step of the audit checkpoint workflow: sign every business's audit chain head that moved
// since its last checkpoint with the current key of the checkpoint ring (which the worker holds and
// the database does not), and store it in the file store and the database.
import type { FileStore } from '../files/file-store.ts';
import { signingKeyAt, type SigningKey } from '../domain/webhook-signature.ts';
import { writeCheckpoints } from '../store/audit-checkpoints.ts';
import type { Db } from '../store/db.ts';

export function createAuditCheckpointActivities(deps: { db: Db; files: FileStore; checkpointKeys: readonly SigningKey[] }) {
  return {
    /** Returns how many checkpoints were written. */
    async writeAuditCheckpoints(): Promise<number> {
      const now = new Date();
      return (await writeCheckpoints(deps.db, deps.files, signingKeyAt(deps.checkpointKeys, now), now)).length;
    },
  };
}
