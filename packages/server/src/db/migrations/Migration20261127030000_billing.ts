import { Migration } from '@mikro-orm/migrations';

/**
 * Billing: monthly caps per category and what each project used in each month (counter rows per
 * project, category and UTC month, split in shards so uncapped senders do not queue on one row;
 * charged in the transaction that queues the mail), the
 * project's Stripe customer and subscription, the inbound webhook messages already processed
 * (Stripe events, SNS messages: a replay is not processed twice), and the id a provider (SES) gives a message, to match its feedback.
 */
export class Migration20261127030000_billing extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      CREATE TABLE billing_limits (
        project_id uuid PRIMARY KEY REFERENCES projects (id) ON DELETE CASCADE,
        transactional bigint CHECK (transactional >= 0),
        campaigns bigint CHECK (campaigns >= 0),
        workflows bigint CHECK (workflows >= 0),
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE TABLE billing_usage (
        project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        category text NOT NULL CHECK (category IN ('transactional', 'campaigns', 'workflows')),
        period date NOT NULL,
        shard smallint NOT NULL,
        used bigint NOT NULL DEFAULT 0,
        PRIMARY KEY (project_id, category, period, shard)
      );
      CREATE TABLE billing_accounts (
        project_id uuid PRIMARY KEY REFERENCES projects (id) ON DELETE CASCADE,
        stripe_customer_id text UNIQUE,
        subscription_id text,
        subscription_status text,
        current_period_end timestamptz,
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE TABLE webhook_receipts (
        provider text NOT NULL,
        id text NOT NULL,
        type text NOT NULL,
        received_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (provider, id)
      );
      ALTER TABLE emails ADD COLUMN provider_message_id text;
      CREATE INDEX emails_provider_message_id ON emails (provider_message_id) WHERE provider_message_id IS NOT NULL;
    `);
  }

  override async down(): Promise<void> {
    this.addSql(`
      DROP INDEX emails_provider_message_id;
      ALTER TABLE emails DROP COLUMN provider_message_id;
      DROP TABLE webhook_receipts;
      DROP TABLE billing_accounts;
      DROP TABLE billing_usage;
      DROP TABLE billing_limits;
    `);
  }
}
