// Seeding for the analytics scenario: 10 million events over 30 days in one project, straight in
// SQL (INSERT … SELECT over generate_series), then counted into the rollup by the same view the
// change-feed consumer reads (`event_count_facts`), as the rollup's migration backfills it
// (bench/lib/bulk-load.mjs).

export const EVENTS = Number(process.env.BENCH_ANALYTICS_EVENTS ?? 10_000_000);
export const CONTACTS = 100_000;
export const CAMPAIGNS = 30;
export const EMAILS_PER_CAMPAIGN = 2_000;
export const DAYS = 30;

// Deterministic ids, so events can name their contact and email without a join.
const contactId = (k) => `md5('bench-contact-' || (${k}))::uuid`;
const emailId = (k) => `md5('bench-email-' || (${k}))::uuid`;
const campaignId = (k) => `md5('bench-campaign-' || (${k}))::uuid`;

/**
 * Event i of n (0-based) happens at now − 30 days × (n − i) / n, so the series is even over the
 * range and ids grow with time. Out of every 100: 35 email.sent, 25 email.delivery, 15 email.open,
 * 5 email.click, 1 email.bounce, 1 email.complaint, 1 contact.unsubscribed (these name an email of
 * the campaign of their day), 17 custom (page.viewed, signed-up, purchase).
 */
const NAME = `CASE
  WHEN i % 100 < 35 THEN 'email.sent' WHEN i % 100 < 60 THEN 'email.delivery'
  WHEN i % 100 < 75 THEN 'email.open' WHEN i % 100 < 80 THEN 'email.click'
  WHEN i % 100 = 80 THEN 'email.bounce' WHEN i % 100 = 81 THEN 'email.complaint'
  WHEN i % 100 = 82 THEN 'contact.unsubscribed'
  WHEN i % 100 < 93 THEN 'page.viewed' WHEN i % 100 < 97 THEN 'signed-up' ELSE 'purchase' END`;

export const SEED = {
  contacts: `
    INSERT INTO contacts (id, project_id, email, subscribed, data)
    SELECT ${contactId('k')}, $1::uuid, 'bench-' || k || '@analytics.example', true, '{}'
    FROM generate_series(0, ${CONTACTS - 1}) AS k`,
  campaigns: `
    INSERT INTO campaigns (id, project_id, name, subject, body, from_email, type, status, audience_type,
                           total_recipients, started_at, sent_at)
    SELECT ${campaignId('k')}, $1::uuid, 'Bench campaign ' || k, 'Hello', '<p>Hello</p>', 'bench@analytics.example',
           'MARKETING', 'SENT', 'ALL', ${EMAILS_PER_CAMPAIGN}, now(), now()
    FROM generate_series(0, ${CAMPAIGNS - 1}) AS k`,
  emails: `
    INSERT INTO emails (id, project_id, contact_id, campaign_id, source, content_type, status, priority, from_email,
                        to_email, subject, html, text, message_id, sent_at)
    SELECT ${emailId('k')}, $1::uuid, ${contactId(`k % ${CONTACTS}`)}, ${campaignId(`k / ${EMAILS_PER_CAMPAIGN}`)},
           'CAMPAIGN', 'MARKETING', 'SENT', 2, 'bench@analytics.example', 'bench-' || k || '@analytics.example',
           'Hello', '', '', '<bench-' || k || '@analytics.example>', now()
    FROM generate_series(0, ${CAMPAIGNS * EMAILS_PER_CAMPAIGN - 1}) AS k`,
  events: (uuid) => `
    INSERT INTO events (id, project_id, contact_id, name, data, created_at)
    SELECT ${uuid}, $1::uuid, ${contactId(`i % ${CONTACTS}`)}, name,
           CASE WHEN name LIKE 'email.%' OR name = 'contact.unsubscribed'
                THEN jsonb_build_object('emailId',
                       ${emailId(`((day % ${CAMPAIGNS}) * ${EMAILS_PER_CAMPAIGN} + i % ${EMAILS_PER_CAMPAIGN})`)})
                ELSE '{}'::jsonb END,
           at
    FROM (SELECT i, ${NAME} AS name,
                 now() - make_interval(secs => ${DAYS} * 86400.0 * ($2::bigint - i) / $2::bigint) AS at,
                 (${DAYS} * ($2::bigint - i) / $2::bigint)::int AS day
          FROM generate_series(0, $2::bigint - 1) AS i) g`,
};

/** The same daily series straight from `events` (what the rollup saves), for a one-off comparison. */
export const RAW_DAILY_SQL = `
  SELECT date_trunc('day', created_at, 'UTC') AS day, name, count(*)
  FROM events WHERE project_id = $1::uuid AND created_at >= $2 AND created_at < $3
    AND name IN ('email.sent', 'email.delivery', 'email.open', 'email.click', 'email.bounce', 'email.complaint',
                 'contact.unsubscribed')
  GROUP BY 1, 2`;
