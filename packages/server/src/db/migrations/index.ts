import type { MigrationObject } from '@mikro-orm/core';
import { Migration20261122000000_extensions } from './Migration20261122000000_extensions.js';
import { Migration20261122010000_accounts } from './Migration20261122010000_accounts.js';
import { Migration20261122020000_contacts } from './Migration20261122020000_contacts.js';
import { Migration20261122030000_tracking } from './Migration20261122030000_tracking.js';
import { Migration20261122040000_sending } from './Migration20261122040000_sending.js';
import { Migration20261122050000_contact_counts } from './Migration20261122050000_contact_counts.js';
import { Migration20261122060000_unlogged_rate_limits } from './Migration20261122060000_unlogged_rate_limits.js';
import { Migration20261123000000_engagement } from './Migration20261123000000_engagement.js';
import { Migration20261123100000_segments } from './Migration20261123100000_segments.js';
import { Migration20261123200000_campaigns } from './Migration20261123200000_campaigns.js';
import { Migration20261125000000_workflows } from './Migration20261125000000_workflows.js';
import { Migration20261125010000_webhook_secrets } from './Migration20261125010000_webhook_secrets.js';
import { Migration20261126000000_member_key_exposure } from './Migration20261126000000_member_key_exposure.js';
import { Migration20261126010000_revoked_sessions } from './Migration20261126010000_revoked_sessions.js';
import { Migration20261126020000_rate_limit_callers } from './Migration20261126020000_rate_limit_callers.js';
import { Migration20261126030000_contact_data_limits } from './Migration20261126030000_contact_data_limits.js';
import { Migration20261126040000_default_from } from './Migration20261126040000_default_from.js';
import { Migration20261126050000_idempotency_response } from './Migration20261126050000_idempotency_response.js';
import { Migration20261127010000_deliverability } from './Migration20261127010000_deliverability.js';
import { Migration20261127020000_event_counts } from './Migration20261127020000_event_counts.js';
import { Migration20261127021000_uploads } from './Migration20261127021000_uploads.js';
import { Migration20261127030000_billing } from './Migration20261127030000_billing.js';
import { Migration20261127040000_track_idempotency } from './Migration20261127040000_track_idempotency.js';
import { Migration20261127041000_feed_statement_trigger } from './Migration20261127041000_feed_statement_trigger.js';
import { Migration20261127050000_event_facts_lookup } from './Migration20261127050000_event_facts_lookup.js';
import { Migration20261201000000_transport_status } from './Migration20261201000000_transport_status.js';
import { Migration20261203000000_worker_heartbeats } from './Migration20261203000000_worker_heartbeats.js';
import { Migration20261204000000_sso } from './Migration20261204000000_sso.js';
import { Migration20261205000000_webhook_endpoints } from './Migration20261205000000_webhook_endpoints.js';
import { Migration20261206010000_send_options } from './Migration20261206010000_send_options.js';
import { Migration20261210000000_project_owned_columns } from './Migration20261210000000_project_owned_columns.js';
import { Migration20261211000000_webhook_delivery_batches } from './Migration20261211000000_webhook_delivery_batches.js';
import { Migration20261213000000_partitioned_history } from './Migration20261213000000_partitioned_history.js';
import { Migration20261213000100_retention } from './Migration20261213000100_retention.js';
import { Migration20261224000000_campaign_open_mail } from './Migration20261224000000_campaign_open_mail.js';
import { Migration20261226000000_workflow_retention } from './Migration20261226000000_workflow_retention.js';
import { Migration20261226010000_event_counts_fold } from './Migration20261226010000_event_counts_fold.js';
import { Migration20261227000000_event_counts_daily } from './Migration20261227000000_event_counts_daily.js';

/**
 * Every committed migration, in order. Listed explicitly (not globbed from disk) so the
 * bundled server carries them; `pigeon migrate` and every start apply the pending ones.
 */
export const migrationsList: MigrationObject[] = [
  { name: 'Migration20261122000000_extensions', class: Migration20261122000000_extensions },
  { name: 'Migration20261122010000_accounts', class: Migration20261122010000_accounts },
  { name: 'Migration20261122020000_contacts', class: Migration20261122020000_contacts },
  { name: 'Migration20261122030000_tracking', class: Migration20261122030000_tracking },
  { name: 'Migration20261122040000_sending', class: Migration20261122040000_sending },
  { name: 'Migration20261122050000_contact_counts', class: Migration20261122050000_contact_counts },
  { name: 'Migration20261122060000_unlogged_rate_limits', class: Migration20261122060000_unlogged_rate_limits },
  { name: 'Migration20261123000000_engagement', class: Migration20261123000000_engagement },
  { name: 'Migration20261123100000_segments', class: Migration20261123100000_segments },
  { name: 'Migration20261123200000_campaigns', class: Migration20261123200000_campaigns },
  { name: 'Migration20261125000000_workflows', class: Migration20261125000000_workflows },
  { name: 'Migration20261125010000_webhook_secrets', class: Migration20261125010000_webhook_secrets },
  { name: 'Migration20261126000000_member_key_exposure', class: Migration20261126000000_member_key_exposure },
  { name: 'Migration20261126010000_revoked_sessions', class: Migration20261126010000_revoked_sessions },
  { name: 'Migration20261126020000_rate_limit_callers', class: Migration20261126020000_rate_limit_callers },
  { name: 'Migration20261126030000_contact_data_limits', class: Migration20261126030000_contact_data_limits },
  { name: 'Migration20261126040000_default_from', class: Migration20261126040000_default_from },
  { name: 'Migration20261126050000_idempotency_response', class: Migration20261126050000_idempotency_response },
  { name: 'Migration20261127010000_deliverability', class: Migration20261127010000_deliverability },
  { name: 'Migration20261127020000_event_counts', class: Migration20261127020000_event_counts },
  { name: 'Migration20261127021000_uploads', class: Migration20261127021000_uploads },
  { name: 'Migration20261127030000_billing', class: Migration20261127030000_billing },
  { name: 'Migration20261127040000_track_idempotency', class: Migration20261127040000_track_idempotency },
  { name: 'Migration20261127041000_feed_statement_trigger', class: Migration20261127041000_feed_statement_trigger },
  { name: 'Migration20261127050000_event_facts_lookup', class: Migration20261127050000_event_facts_lookup },
  { name: 'Migration20261201000000_transport_status', class: Migration20261201000000_transport_status },
  { name: 'Migration20261203000000_worker_heartbeats', class: Migration20261203000000_worker_heartbeats },
  { name: 'Migration20261204000000_sso', class: Migration20261204000000_sso },
  { name: 'Migration20261205000000_webhook_endpoints', class: Migration20261205000000_webhook_endpoints },
  { name: 'Migration20261206010000_send_options', class: Migration20261206010000_send_options },
  { name: 'Migration20261210000000_project_owned_columns', class: Migration20261210000000_project_owned_columns },
  {
    name: 'Migration20261211000000_webhook_delivery_batches',
    class: Migration20261211000000_webhook_delivery_batches,
  },
  { name: 'Migration20261213000000_partitioned_history', class: Migration20261213000000_partitioned_history },
  { name: 'Migration20261213000100_retention', class: Migration20261213000100_retention },
  { name: 'Migration20261224000000_campaign_open_mail', class: Migration20261224000000_campaign_open_mail },
  { name: 'Migration20261226000000_workflow_retention', class: Migration20261226000000_workflow_retention },
  { name: 'Migration20261226010000_event_counts_fold', class: Migration20261226010000_event_counts_fold },
  { name: 'Migration20261227000000_event_counts_daily', class: Migration20261227000000_event_counts_daily },
];
