import { describe, expect, it } from 'vitest';
import { contract, namedSchemas } from './index.js';
import { buildOpenApiDocument } from './openapi.js';
import {
  eventTypeFilterProblem,
  WEBHOOK_EVENT_EXAMPLES,
  WebhookEvent,
  webhookEventSchemas,
} from './routes/webhook-events.js';

const document = buildOpenApiDocument(contract, namedSchemas, { title: 'Pigeon', version: 'test' });
const payloadNames = Object.keys(webhookEventSchemas).filter((n) => n !== 'WebhookEvent');

describe('webhook payloads', () => {
  it.each(payloadNames)('%s is documented in OpenAPI with an example its schema accepts', (name) => {
    const component = document.components?.schemas?.[name] as { examples?: unknown[]; properties?: object } | undefined;
    expect(component?.properties).toBeDefined();
    const example = component?.examples?.[0];
    expect(example).toEqual(WEBHOOK_EVENT_EXAMPLES[name]);
    const schema = webhookEventSchemas[name as keyof typeof webhookEventSchemas];
    expect(schema.safeParse(example).success).toBe(true);
    // The union reads it as the same type.
    expect(WebhookEvent.parse(example)).toMatchObject({ type: (example as { type: string }).type });
  });

  it('the union is documented and referenced by the delivery', () => {
    const delivery = document.components?.schemas?.WebhookDelivery as { properties: Record<string, unknown> };
    expect(delivery.properties.payload).toEqual({ $ref: '#/components/schemas/WebhookEvent' });
    expect(document.components?.schemas?.WebhookEvent).toBeDefined();
  });
});

describe('event-type filters', () => {
  it.each([
    '*',
    'email.*',
    'email.click',
    'contact.*',
    'contact.unsubscribed',
    'segment.*',
    'segment.trial-users.entry',
    'segment.trial-users.*',
    'order.*',
    'order.created',
    'signed up',
  ])('accepts %s', (filter) => {
    expect(eventTypeFilterProblem(filter)).toBeNull();
  });

  it.each([
    ['email.opened', /email\.open/],
    ['Email.Sent', /lower-case/],
    ['contact.created', /contact\.subscribed/],
    ['webhook.test', /unknown/],
    ['segment.trial', /segment/],
    ['segment.a.b.entry', /segment/],
    ['or*der', /trailing/],
    ['*.created', /trailing/],
    [' order', /event name/],
    ['', /event name/],
  ])('refuses %s', (filter, message) => {
    expect(eventTypeFilterProblem(filter)).toMatch(message);
  });
});
