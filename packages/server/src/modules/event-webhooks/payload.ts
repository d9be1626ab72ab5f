import { raw, type Sql, sql } from '../../db/query.js';

/**
 * Whether an endpoint's filters (`w.event_types`) take the event named `name`: `*`, the exact
 * name, or a prefix pattern (`order.*`, `email.*`, `segment.trial.*`).
 */
export const endpointWants = (name: Sql): Sql => sql`EXISTS (
  SELECT 1 FROM unnest(w.event_types) AS p
  WHERE p = '*' OR p = ${name} OR (right(p, 2) = '.*' AND starts_with(${name}, left(p, -1))))`;

const ISO = raw(`'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`);
const contactRef = raw(`jsonb_build_object('id', c.id, 'email', c.email)`);

/**
 * The JSON body of one event (`{ type, timestamp, data }`), built in the database from the event
 * `e`, its contact `c` and, for `email.*` events, the email row `em`. The shapes are the
 * contract's `WebhookEvent` schemas (one per type).
 */
export const eventPayload: Sql = sql`jsonb_build_object(
  'type', e.name,
  'timestamp', to_char(e.created_at AT TIME ZONE 'UTC', ${ISO}),
  'data', CASE
    WHEN e.name = 'email.received' THEN (e.data - 'action') || jsonb_build_object('contact', ${contactRef}) || coalesce(
        (SELECT jsonb_build_object('text', ie.text, 'html', ie.html, 'headers', ie.headers) FROM inbound_emails ie
         WHERE ie.id = (e.data->>'inboundEmailId')::uuid AND ie.project_id = e.project_id),
        '{"text": null, "html": null, "headers": []}'::jsonb)
    WHEN e.name LIKE 'email.%' THEN jsonb_build_object(
        'emailId', em.id, 'contact', ${contactRef}, 'to', em.to_email, 'from', em.from_email, 'subject', em.subject,
        'templateId', em.template_id, 'campaignId', em.campaign_id, 'workflowExecutionId', em.workflow_execution_id)
      || CASE e.name
           WHEN 'email.click' THEN jsonb_build_object('link', coalesce(e.data->'link', '""'))
           WHEN 'email.bounce' THEN jsonb_build_object('bounceType', coalesce(e.data->'bounceType', '"hard"'), 'reason', e.data->'reason')
           WHEN 'email.complaint' THEN jsonb_build_object('feedbackType', e.data->'feedbackType')
           ELSE '{}'::jsonb END
    WHEN e.name IN ('contact.topic.subscribed', 'contact.topic.unsubscribed') THEN jsonb_build_object(
        'contact', ${contactRef}, 'topic', jsonb_build_object('id', e.data->'topicId', 'name', e.data->'topicName'),
        'subscribed', e.name = 'contact.topic.subscribed', 'source', e.data->'source')
    WHEN e.name IN ('contact.subscribed', 'contact.unsubscribed') THEN jsonb_build_object(
        'contact', ${contactRef} || jsonb_build_object('subscribed', e.name = 'contact.subscribed'), 'reason', e.data->'reason')
    WHEN e.name ~ '^segment\\.[^.]+\\.(entry|exit)$' THEN jsonb_build_object(
        'contact', ${contactRef},
        'segment', jsonb_build_object('id', e.data->'segmentId', 'name', e.data->'segmentName', 'slug', e.data->'slug'))
    ELSE jsonb_build_object('contact', ${contactRef}, 'data', e.data)
  END)`;

/** The email row of an `email.*` event (never a cast of a custom event's data). */
export const emailOfEvent: Sql = raw(
  `em.project_id = e.project_id AND em.id = CASE WHEN e.name LIKE 'email.%' AND e.data->>'emailId' ~ '^[0-9a-f-]{36}$' THEN (e.data->>'emailId')::uuid END`,
);
