/**
 * Every committed migration, in order: its name (the class its file exports) and how to load it.
 * Listed explicitly (not globbed from disk) so the bundled server carries them. Only the migrator
 * (`db/migrator.ts`, in a child process at start) loads them: a process whose schema is current
 * never loads MikroORM (DESIGN §2 keeps MikroORM migrations; docs/MEMORY.md says why).
 */
export const MIGRATIONS: ReadonlyArray<{ name: string; load: () => Promise<Record<string, unknown>> }> = [
  { name: 'Migration20261122000000_extensions', load: () => import('./Migration20261122000000_extensions.js') },
  { name: 'Migration20261122010000_accounts', load: () => import('./Migration20261122010000_accounts.js') },
  { name: 'Migration20261122020000_contacts', load: () => import('./Migration20261122020000_contacts.js') },
  { name: 'Migration20261122030000_tracking', load: () => import('./Migration20261122030000_tracking.js') },
  { name: 'Migration20261122040000_sending', load: () => import('./Migration20261122040000_sending.js') },
  { name: 'Migration20261122050000_contact_counts', load: () => import('./Migration20261122050000_contact_counts.js') },
  {
    name: 'Migration20261122060000_unlogged_rate_limits',
    load: () => import('./Migration20261122060000_unlogged_rate_limits.js'),
  },
  { name: 'Migration20261123000000_engagement', load: () => import('./Migration20261123000000_engagement.js') },
  { name: 'Migration20261123100000_segments', load: () => import('./Migration20261123100000_segments.js') },
  { name: 'Migration20261123200000_campaigns', load: () => import('./Migration20261123200000_campaigns.js') },
  { name: 'Migration20261125000000_workflows', load: () => import('./Migration20261125000000_workflows.js') },
  {
    name: 'Migration20261125010000_webhook_secrets',
    load: () => import('./Migration20261125010000_webhook_secrets.js'),
  },
  {
    name: 'Migration20261126000000_member_key_exposure',
    load: () => import('./Migration20261126000000_member_key_exposure.js'),
  },
  {
    name: 'Migration20261126010000_revoked_sessions',
    load: () => import('./Migration20261126010000_revoked_sessions.js'),
  },
  {
    name: 'Migration20261126020000_rate_limit_callers',
    load: () => import('./Migration20261126020000_rate_limit_callers.js'),
  },
  {
    name: 'Migration20261126030000_contact_data_limits',
    load: () => import('./Migration20261126030000_contact_data_limits.js'),
  },
  { name: 'Migration20261126040000_default_from', load: () => import('./Migration20261126040000_default_from.js') },
  {
    name: 'Migration20261126050000_idempotency_response',
    load: () => import('./Migration20261126050000_idempotency_response.js'),
  },
  { name: 'Migration20261127010000_deliverability', load: () => import('./Migration20261127010000_deliverability.js') },
  { name: 'Migration20261127020000_event_counts', load: () => import('./Migration20261127020000_event_counts.js') },
  { name: 'Migration20261127021000_uploads', load: () => import('./Migration20261127021000_uploads.js') },
  { name: 'Migration20261127030000_billing', load: () => import('./Migration20261127030000_billing.js') },
  {
    name: 'Migration20261127040000_track_idempotency',
    load: () => import('./Migration20261127040000_track_idempotency.js'),
  },
  {
    name: 'Migration20261127041000_feed_statement_trigger',
    load: () => import('./Migration20261127041000_feed_statement_trigger.js'),
  },
  {
    name: 'Migration20261127050000_event_facts_lookup',
    load: () => import('./Migration20261127050000_event_facts_lookup.js'),
  },
  {
    name: 'Migration20261201000000_transport_status',
    load: () => import('./Migration20261201000000_transport_status.js'),
  },
  {
    name: 'Migration20261203000000_worker_heartbeats',
    load: () => import('./Migration20261203000000_worker_heartbeats.js'),
  },
  { name: 'Migration20261204000000_sso', load: () => import('./Migration20261204000000_sso.js') },
  {
    name: 'Migration20261205000000_webhook_endpoints',
    load: () => import('./Migration20261205000000_webhook_endpoints.js'),
  },
  { name: 'Migration20261206010000_send_options', load: () => import('./Migration20261206010000_send_options.js') },
  {
    name: 'Migration20261210000000_project_owned_columns',
    load: () => import('./Migration20261210000000_project_owned_columns.js'),
  },
  {
    name: 'Migration20261211000000_webhook_delivery_batches',
    load: () => import('./Migration20261211000000_webhook_delivery_batches.js'),
  },
  {
    name: 'Migration20261213000000_partitioned_history',
    load: () => import('./Migration20261213000000_partitioned_history.js'),
  },
  { name: 'Migration20261213000100_retention', load: () => import('./Migration20261213000100_retention.js') },
  {
    name: 'Migration20261224000000_campaign_open_mail',
    load: () => import('./Migration20261224000000_campaign_open_mail.js'),
  },
  {
    name: 'Migration20261226000000_workflow_retention',
    load: () => import('./Migration20261226000000_workflow_retention.js'),
  },
  {
    name: 'Migration20261226010000_event_counts_fold',
    load: () => import('./Migration20261226010000_event_counts_fold.js'),
  },
  {
    name: 'Migration20261227000000_event_counts_daily',
    load: () => import('./Migration20261227000000_event_counts_daily.js'),
  },
  {
    name: 'Migration20261228000000_idempotency_keys_unreferenced',
    load: () => import('./Migration20261228000000_idempotency_keys_unreferenced.js'),
  },
  {
    name: 'Migration20261229000000_event_email_id',
    load: () => import('./Migration20261229000000_event_email_id.js'),
  },
  {
    name: 'Migration20261230000000_secret_fingerprints',
    load: () => import('./Migration20261230000000_secret_fingerprints.js'),
  },
  {
    name: 'Migration20261230010000_idempotency_request_hash',
    load: () => import('./Migration20261230010000_idempotency_request_hash.js'),
  },
  {
    name: 'Migration20261231000000_email_mime',
    load: () => import('./Migration20261231000000_email_mime.js'),
  },
  {
    name: 'Migration20270101000000_inbound_routes',
    load: () => import('./Migration20270101000000_inbound_routes.js'),
  },
  {
    name: 'Migration20270101000100_inbound_email_retries',
    load: () => import('./Migration20270101000100_inbound_email_retries.js'),
  },
  {
    name: 'Migration20270102000000_topics',
    load: () => import('./Migration20270102000000_topics.js'),
  },
  {
    name: 'Migration20270103000000_tracking_domains',
    load: () => import('./Migration20270103000000_tracking_domains.js'),
  },
  {
    name: 'Migration20270104000000_relays',
    load: () => import('./Migration20270104000000_relays.js'),
  },
  {
    name: 'Migration20270105000000_sender_warmups',
    load: () => import('./Migration20270105000000_sender_warmups.js'),
  },
  {
    name: 'Migration20270106000000_dmarc_reports',
    load: () => import('./Migration20270106000000_dmarc_reports.js'),
  },
];
