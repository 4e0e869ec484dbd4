import type { Knex } from 'knex';

/**
 * Replayed responses are the first response byte for byte: idempotency records and governed
 * execution receipts keep the JSON text that was sent. As jsonb, the body came back with its
 * keys in jsonb's order (shortest first), a different response to anyone comparing bytes.
 */
export async function up(db: Knex): Promise<void> {
  for (const table of ['idempotency_records', 'agent_receipts']) {
    await db.raw(`alter table ?? alter column response_body type text using response_body::text`, [table]);
  }
}

export async function down(db: Knex): Promise<void> {
  for (const table of ['idempotency_records', 'agent_receipts']) {
    await db.raw(`alter table ?? alter column response_body type jsonb using response_body::jsonb`, [table]);
  }
}
