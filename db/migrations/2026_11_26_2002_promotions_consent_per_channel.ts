// Frozen migration: never edit after it has landed; add a new one instead.
// Consent to advertising is recorded per channel. One `promotions_consent_at` kept the first
// channel's time when a second channel was switched on, so the second channel's consent had no
// record. Each channel now has its own time (null while the channel is off); the old column stays
// and holds the newest consent of the channels that are on.
// Channels already on get the only time known for them, the old column's.
import { sql, type Kysely } from 'kysely';

const CHANNELS = ['push', 'sms', 'email'] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const c of CHANNELS) {
    await db.schema.alterTable('customer_preferences').addColumn(`${c}_promotions_consent_at`, 'timestamptz').execute();
    await sql`UPDATE customer_preferences SET ${sql.ref(`${c}_promotions_consent_at`)} = promotions_consent_at
               WHERE ${sql.ref(`${c}_promotions`)}`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const c of CHANNELS) await db.schema.alterTable('customer_preferences').dropColumn(`${c}_promotions_consent_at`).execute();
}
