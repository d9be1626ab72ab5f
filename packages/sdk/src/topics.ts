import { contract } from './contract.js';
import type { RequestOptions, Transport } from './transport.js';
import type { ContactTopic, ContactTopicChoice, Topic, TopicCreateBody, TopicUpdateBody } from './types.js';

/**
 * Topics of the key's project, as `pigeon.topics`: what its mail is about (a newsletter, product
 * news), which contacts choose on the preference page (`manageUrl`), and each contact's choices.
 * Campaigns and workflow SEND_EMAIL steps name one with `topicId`. Every method is a bound function.
 */
export class Topics {
  constructor(private readonly transport: Transport) {}

  /**
   * Add a topic. `defaultSubscription`: `OPT_IN` (contacts get its mail until they opt out) or
   * `OPT_OUT` (only contacts who opt in); fixed once created. `visibility`: `PUBLIC` (on the
   * preference page, the default) or `HIDDEN`.
   */
  readonly create = (body: TopicCreateBody, options?: RequestOptions): Promise<Topic> =>
    this.transport.call(contract.topics.create, { body }, options);

  /** The project's topics, by name. */
  readonly list = async (options?: RequestOptions): Promise<Topic[]> =>
    (await this.transport.call(contract.topics.list, {}, options)).data;

  readonly get = (id: string, options?: RequestOptions): Promise<Topic> =>
    this.transport.call(contract.topics.get, { params: { id } }, options);

  /** Rename a topic, change its description or visibility. */
  readonly update = (id: string, body: TopicUpdateBody, options?: RequestOptions): Promise<Topic> =>
    this.transport.call(contract.topics.update, { params: { id }, body }, options);

  /** Delete a topic (409 while a campaign not yet sent or a workflow step names it). */
  readonly delete = async (id: string, options?: RequestOptions): Promise<void> => {
    await this.transport.call(contract.topics.delete, { params: { id } }, options);
  };

  /** Every topic with the contact's state for it (their choice, else the topic's default). */
  readonly ofContact = async (contactId: string, options?: RequestOptions): Promise<ContactTopic[]> =>
    (await this.transport.call(contract.topics.contactTopics, { params: { id: contactId } }, options)).data;

  /**
   * Subscribe the contact to topics or take them off (`contact.topic.*` events for each change);
   * topics not listed keep their state. Resolves with every topic's state.
   */
  readonly setForContact = async (
    contactId: string,
    topics: ContactTopicChoice[],
    options?: RequestOptions,
  ): Promise<ContactTopic[]> =>
    (
      await this.transport.call(
        contract.topics.setContactTopics,
        { params: { id: contactId }, body: { topics } },
        options,
      )
    ).data;
}
