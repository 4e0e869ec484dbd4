import type { Knex } from 'knex';

/**
 * The secret this service issues a seller that authenticates its webhooks the legacy AdCP way
 * (HMAC-SHA256 over the body, or a bearer token): one per seller, sealed under SECRETS_KEY, sent
 * to the seller in every booking's push_notification_config so a resend's body is unchanged.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('adcp_webhook_secrets', (t) => {
    t.text('adapter_key').primary();
    t.text('scheme').notNullable();
    t.text('secret').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw(`alter table adcp_webhook_secrets add constraint adcp_webhook_secrets_scheme check (scheme in ('hmac-sha256', 'bearer'))`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('adcp_webhook_secrets');
}
