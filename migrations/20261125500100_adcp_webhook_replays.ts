import type { Knex } from 'knex';

/**
 * AdCP sellers' signed webhooks (RFC 9421): the nonces of verified signatures, kept until their
 * signature window has passed, so a webhook replayed to any API process is refused.
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.createTable('adcp_webhook_nonces', (t) => {
    t.string('keyid', 300).notNullable();
    t.string('scope', 2000).notNullable();
    t.string('nonce', 300).notNullable();
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.primary(['keyid', 'scope', 'nonce']);
  });
  await db.raw('create index adcp_webhook_nonces_expiry on adcp_webhook_nonces (expires_at)');
}

export async function down(db: Knex): Promise<void> {
  await db.schema.dropTableIfExists('adcp_webhook_nonces');
}
