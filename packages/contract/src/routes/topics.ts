import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { commonErrors, ErrorEnvelope, Timestamp } from '../common.js';
import { meta } from '../meta.js';

const c = initContract();
const dashboard = meta({ auth: 'dashboard', permission: 'project.use' });
const Id = z.object({ id: z.string().uuid() });

/** Topics per project at most (README "Topics"). */
export const MAX_TOPICS = 100;

/**
 * A contact's state for a topic until the contact (or the API) chooses: `OPT_IN` subscribed (the
 * topic's mail reaches every subscribed contact who did not opt out of it), `OPT_OUT` not subscribed
 * (it reaches only contacts who opted in). Fixed when the topic is created: changing it would
 * silently subscribe, or drop, everyone who never chose.
 */
export const TopicDefaultSubscription = z.enum(['OPT_IN', 'OPT_OUT']);
export type TopicDefaultSubscription = z.infer<typeof TopicDefaultSubscription>;

/**
 * `PUBLIC` topics are listed on the preference page (`manageUrl`), where a person subscribes to
 * them or leaves them; `HIDDEN` ones are not (only the API changes a contact's choice; a hidden
 * topic's own unsubscribe link still works).
 */
export const TopicVisibility = z.enum(['PUBLIC', 'HIDDEN']);
export type TopicVisibility = z.infer<typeof TopicVisibility>;

const topicObject = z.object({
  id: z.string().uuid(),
  name: z.string().describe('What the preference page shows; unique in the project (case-insensitive)'),
  description: z.string().nullable(),
  defaultSubscription: TopicDefaultSubscription,
  visibility: TopicVisibility,
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
type TopicObject = typeof topicObject;
/** `Topic` under a name of its own, so declaration files refer to it rather than spell it out per route. */
export interface TopicSchema extends TopicObject {}
export const Topic: TopicSchema = topicObject;

/** Where mail names a topic (a campaign, a SEND_EMAIL step): one of the project's topics, or none. */
export const TopicReference = z.string().uuid().nullable().optional();

export const TopicCreateInput = z.object({
  name: z.string().trim().min(1).max(100),
  description: z.string().trim().max(500).nullable().optional(),
  defaultSubscription: TopicDefaultSubscription.describe(
    'OPT_IN: contacts are subscribed until they opt out; OPT_OUT: only contacts who opt in. Cannot change later',
  ),
  visibility: TopicVisibility.default('PUBLIC'),
});

export const TopicUpdateInput = TopicCreateInput.omit({ defaultSubscription: true, visibility: true })
  .partial()
  .extend({
    visibility: TopicVisibility.optional(),
  });

/** One topic as one contact has it. */
export const ContactTopic = z.object({
  topicId: z.string().uuid(),
  name: z.string(),
  visibility: TopicVisibility,
  subscribed: z.boolean().describe("Whether the topic's mail reaches the contact (their choice, else the default)"),
  chosen: z.boolean().describe('Whether that is an explicit choice (false: the topic’s default)'),
});

export const ContactTopicsChange = z.object({
  topics: z
    .array(z.object({ topicId: z.string().uuid(), subscribed: z.boolean() }))
    .min(1)
    .max(MAX_TOPICS)
    .describe('The topics to change; topics not listed keep their state'),
});

const notFoundErrors = { 404: ErrorEnvelope, ...commonErrors };

export const topicsContract = c.router(
  {
    create: {
      method: 'POST',
      path: '/topics',
      summary: `Add a topic (at most ${MAX_TOPICS} per project)`,
      metadata: meta({
        auth: 'dashboard',
        permission: 'project.use',
        example: {
          name: 'Product news',
          description: 'New features, once a month',
          defaultSubscription: 'OPT_IN',
          visibility: 'PUBLIC',
        },
      }),
      body: TopicCreateInput,
      responses: { 201: Topic, 409: ErrorEnvelope, ...commonErrors },
    },
    list: {
      method: 'GET',
      path: '/topics',
      summary: "The project's topics, by name",
      metadata: dashboard,
      responses: { 200: z.object({ data: z.array(Topic) }), ...commonErrors },
    },
    get: {
      method: 'GET',
      path: '/topics/:id',
      summary: 'Get a topic',
      metadata: dashboard,
      pathParams: Id,
      responses: { 200: Topic, ...notFoundErrors },
    },
    update: {
      method: 'PATCH',
      path: '/topics/:id',
      summary: 'Rename a topic, change its description or visibility (its default subscription is fixed)',
      metadata: meta({
        auth: 'dashboard',
        permission: 'project.use',
        example: { description: 'New features, twice a month' },
      }),
      pathParams: Id,
      body: TopicUpdateInput,
      responses: { 200: Topic, 409: ErrorEnvelope, ...notFoundErrors },
    },
    delete: {
      method: 'DELETE',
      path: '/topics/:id',
      summary: 'Delete a topic (409 while a campaign not yet sent or a workflow step names it)',
      description: "Contacts' choices for it go with it; campaigns already sent keep no topic.",
      metadata: dashboard,
      pathParams: Id,
      body: c.noBody(),
      responses: { 204: c.noBody(), 409: ErrorEnvelope, ...notFoundErrors },
    },
    contactTopics: {
      method: 'GET',
      path: '/contacts/:id/topics',
      summary: "Every topic of the project with the contact's state for it",
      metadata: dashboard,
      pathParams: Id,
      responses: { 200: z.object({ data: z.array(ContactTopic) }), ...notFoundErrors },
    },
    setContactTopics: {
      method: 'PUT',
      path: '/contacts/:id/topics',
      summary:
        "Subscribe the contact to topics or take them off (records contact.topic.* events); answers every topic's state",
      description:
        'A choice is recorded even when it equals the default; an event is recorded only when the state changes. The contact’s own `subscribed` is not changed: mail of a topic reaches a contact only while both hold.',
      metadata: meta({
        auth: 'dashboard',
        permission: 'project.use',
        example: { topics: [{ topicId: '0190c2a4-7b7e-7cc0-9a3f-1c2d3e4f5a6b', subscribed: false }] },
      }),
      pathParams: Id,
      body: ContactTopicsChange,
      responses: { 200: z.object({ data: z.array(ContactTopic) }), ...notFoundErrors },
    },
  },
  { strictStatusCodes: true },
);

export const topicSchemas = { Topic, ContactTopic };
