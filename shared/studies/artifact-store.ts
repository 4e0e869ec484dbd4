import fs from 'node:fs';
import path from 'node:path';
import { createHash, randomUUID } from 'node:crypto';
import type { Knex } from 'knex';

/** Where study artifacts are stored: ARTIFACT_DIR, or `$DATA_DIR/artifacts`. */
export const artifactDirOf = (config: { ARTIFACT_DIR?: string | undefined; DATA_DIR: string }) =>
  path.resolve(config.ARTIFACT_DIR ?? path.join(config.DATA_DIR, 'artifacts'));

/** Stored names are the SHA-256 of the bytes; nothing else can name a file here. */
const SHA256 = /^[a-f0-9]{64}$/;

/** A transaction-scoped lock per digest: an upload and the retention sweep never interleave on the same bytes. */
export const lockDigest = (trx: Knex, sha256: string) =>
  trx.raw('select pg_advisory_xact_lock(hashtextextended(?, 0))', [`artifact:${sha256}`]);

/** Content-addressed artifact bytes: the same bytes are stored once, under their SHA-256. */
export class ArtifactStore {
  constructor(readonly dir: string) {}

  static digest(bytes: Buffer): string {
    return createHash('sha256').update(bytes).digest('hex');
  }

  pathOf(sha256: string): string {
    if (!SHA256.test(sha256)) throw new Error('not a sha256 digest');
    return path.join(this.dir, sha256);
  }

  async put(bytes: Buffer): Promise<string> {
    const sha256 = ArtifactStore.digest(bytes);
    const target = this.pathOf(sha256);
    if (!fs.existsSync(target)) {
      await fs.promises.mkdir(this.dir, { recursive: true });
      // Write then rename, so a reader never sees half a file.
      const tmp = path.join(this.dir, `.${sha256}.${randomUUID()}.tmp`);
      await fs.promises.writeFile(tmp, bytes);
      await fs.promises.rename(tmp, target);
    }
    return sha256;
  }

  has(sha256: string): boolean {
    return fs.existsSync(this.pathOf(sha256));
  }

  async delete(sha256: string): Promise<void> {
    await fs.promises.rm(this.pathOf(sha256), { force: true });
  }
}

/**
 * Retention: once every record of some bytes is past its retainUntil, the bytes are deleted.
 * The records and their digests stay, marked with when the bytes went.
 */
export async function sweepExpiredArtifacts(db: Knex, store: ArtifactStore, now = new Date(), batch = 500): Promise<number> {
  const due = (await db('study_artifacts')
    .where('retain_until', '<=', now)
    .whereNull('bytes_deleted_at')
    .distinct('sha256')
    .limit(batch)) as Array<{ sha256: string }>;
  let deleted = 0;
  for (const { sha256 } of due) {
    await db.transaction(async (trx) => {
      await lockDigest(trx, sha256);
      const live = await trx('study_artifacts').where({ sha256 }).andWhere('retain_until', '>', now).first('id');
      if (!live) {
        await store.delete(sha256);
        deleted++;
      }
      await trx('study_artifacts')
        .where({ sha256 })
        .andWhere('retain_until', '<=', now)
        .whereNull('bytes_deleted_at')
        .update({ bytes_deleted_at: now });
    });
  }
  return deleted;
}
