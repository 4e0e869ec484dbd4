import type { Knex } from 'knex';
import { errors, type Adapter, type AdapterPayload } from 'oidc-provider';

/**
 * oidc-provider's storage in PostgreSQL: codes, grants, sessions and interactions live in one
 * table, so a code consumed by one process is refused by every other.
 */
export function artifactStore(db: Knex) {
  const table = () => db('oauth_artifacts');
  const live = (q: Knex.QueryBuilder) => q.andWhere((w) => w.whereNull('expires_at').orWhere('expires_at', '>', db.fn.now()));
  const toPayload = (row: { payload: AdapterPayload; consumed_at: Date | null } | undefined): AdapterPayload | undefined => {
    if (!row) return undefined;
    return row.consumed_at ? { ...row.payload, consumed: Math.floor(row.consumed_at.getTime() / 1000) } : row.payload;
  };

  /** Everything issued under a grant, and the grant itself. */
  const revokeGrant = (grantId: string) =>
    table()
      .where({ grant_id: grantId })
      .orWhere((w) => w.where({ model: 'Grant', id: grantId }))
      .delete();

  return class ArtifactStore implements Adapter {
    constructor(private readonly model: string) {}

    async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
      await table()
        .insert({
          model: this.model,
          id,
          payload: JSON.stringify(payload),
          grant_id: payload.grantId ?? null,
          uid: payload.uid ?? null,
          expires_at: expiresIn ? new Date(Date.now() + expiresIn * 1000) : null,
        })
        .onConflict(['model', 'id'])
        .merge(['payload', 'grant_id', 'uid', 'expires_at']);
    }

    async find(id: string): Promise<AdapterPayload | undefined> {
      return toPayload(await live(table().where({ model: this.model, id })).first('payload', 'consumed_at'));
    }

    async findByUid(uid: string): Promise<AdapterPayload | undefined> {
      return toPayload(await live(table().where({ model: this.model, uid })).first('payload', 'consumed_at'));
    }

    async findByUserCode(): Promise<AdapterPayload | undefined> {
      return undefined; // no device flow
    }

    /**
     * Codes and refresh tokens are used once. oidc-provider reads one, checks it is unused, then
     * consumes it: two requests can both pass the check, so only the one whose update finds it
     * unused goes on. The other is a reuse, handled as oidc-provider handles one it sees: the
     * grant behind it is revoked, since the artifact may be in a thief's hands.
     */
    async consume(id: string): Promise<void> {
      const won = await table().where({ model: this.model, id }).whereNull('consumed_at').update({ consumed_at: db.fn.now() });
      if (won === 1) return;
      const row = await table().where({ model: this.model, id }).first('grant_id');
      if (row?.grant_id) await revokeGrant(row.grant_id);
      throw new errors.InvalidGrant(`${this.model === 'RefreshToken' ? 'refresh token' : 'authorization code'} already used`);
    }

    async destroy(id: string): Promise<void> {
      await table().where({ model: this.model, id }).delete();
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      await table().where({ grant_id: grantId }).delete();
    }
  };
}
