import type { CampaignStatus, ContentType } from '@pigeon/contract';
import type pg from 'pg';
import type { Config } from '../../config/index.js';
import { preparedRows, queryRows, raw, sql } from '../../db/query.js';
import { type ComposedMessage, composeMessage, type MessageContent } from '../composition/public.js';
import type { ContactRow } from '../contacts/public.js';
import type { DeferredBatch, DeferredEmail, DeliveryComposer } from '../emails/public.js';
import { subscribedToTopicSql } from '../topics/public.js';

/** `NOTIFY`ed (payload: the campaign id) when a campaign is cancelled; delivery listens for it. */
export const CAMPAIGN_CANCELLED_CHANNEL = 'pigeon_campaign_cancelled';

interface CampaignContent extends MessageContent {
  unsubscribeMailbox: string | null;
  /** The verified tracking domain of the campaign's sender domain, if any. */
  trackingHost: string | null;
}

/** The contact of one campaign email as it is now (its columns null when it is gone) and its campaign's status. */
interface RecipientRow extends ContactRow {
  email_id: string;
  campaign_status: CampaignStatus;
  topic_id: string | null;
  /** Still subscribed to the campaign's topic (true without one). */
  in_topic: boolean;
}

type CampaignEmail = DeferredEmail;

/**
 * Renders campaign mail at delivery: the campaign's content (read once per worker: it cannot
 * change after sending starts) composed with the contact as it is now. `load` reads the contacts
 * of a claimed batch and their campaigns' status in one query, at claim time; `compose` then
 * answers undefined when the message must not go out: the campaign was cancelled (at claim time,
 * or since, as told by `heard()`), the contact is gone, or a MARKETING or HEADLESS recipient
 * (any recipient of a campaign with a topic) unsubscribed, or left the topic, since the audience was frozen.
 */
export class CampaignComposer implements DeliveryComposer {
  readonly channel = CAMPAIGN_CANCELLED_CHANNEL;

  private readonly contents = new Map<string, CampaignContent>();
  private readonly cancelledIds = new Set<string>();

  constructor(
    private readonly pool: pg.Pool,
    /** Read at each message: the public URL is only final once the server listens. */
    private readonly config: Pick<Config, 'http' | 'secrets'>,
  ) {}

  /** A campaign was cancelled (a notification): nothing of it is composed from now on. */
  heard(campaignId: string): void {
    if (this.cancelledIds.size >= 1000) this.cancelledIds.clear();
    this.cancelledIds.add(campaignId);
  }

  async load(emails: CampaignEmail[]): Promise<DeferredBatch> {
    const recipients = new Map<string, RecipientRow>();
    if (emails.length) {
      const rows = await preparedRows<RecipientRow>(
        this.pool,
        'campaigns.recipients',
        sql`SELECT v.email_id, k.status AS campaign_status, k.topic_id,
                   k.topic_id IS NULL OR ${subscribedToTopicSql(raw('c.id'), raw('k.topic_id'))} AS in_topic, c.*
            FROM unnest(${emails.map((e) => e.id)}::uuid[], ${emails.map((e) => e.campaign_id)}::uuid[],
                        ${emails.map((e) => e.contact_id)}::uuid[]) AS v(email_id, campaign_id, contact_id)
            JOIN campaigns k ON k.id = v.campaign_id LEFT JOIN contacts c ON c.id = v.contact_id`,
      );
      for (const row of rows) recipients.set(row.email_id, row);
    }
    return { compose: (email) => this.compose(email, recipients.get(email.id)) };
  }

  private async compose(email: CampaignEmail, row: RecipientRow | undefined): Promise<ComposedMessage | undefined> {
    if (!row || row.campaign_status === 'CANCELLED' || this.cancelledIds.has(email.campaign_id)) return undefined;
    if (!row.id) return undefined;
    const { email_id: _email, campaign_status: _status, topic_id: topicId, in_topic: inTopic, ...contact } = row;
    const content = await this.content(email.campaign_id);
    if ((content.type !== 'TRANSACTIONAL' || topicId) && !contact.subscribed) return undefined;
    if (!inTopic) return undefined;
    return composeMessage(content, contact, contact.data, email.id, {
      publicUrl: this.config.http.publicUrl,
      trackingHost: content.trackingHost,
      linkSecret: this.config.secrets.linkSigning,
      tracked: email.tracked,
      unsubscribeMailbox: content.unsubscribeMailbox,
      headers: email.headers,
      topicId,
    });
  }

  private async content(campaignId: string): Promise<CampaignContent> {
    const cached = this.contents.get(campaignId);
    if (cached) return cached;
    const rows = await queryRows<{
      subject: string;
      body: string;
      type: ContentType;
      mailbox: string | null;
      tracking_host: string | null;
    }>(
      this.pool,
      sql`SELECT k.subject, k.body, k.type, p.unsubscribe_mailbox AS mailbox, t.domain AS tracking_host
          FROM campaigns k JOIN projects p ON p.id = k.project_id
          LEFT JOIN domains d ON d.project_id = k.project_id AND d.verified_at IS NOT NULL
            AND d.domain = lower(split_part(k.from_email, '@', 2))
          LEFT JOIN tracking_domains t ON t.domain_id = d.id AND t.verified_at IS NOT NULL
          WHERE k.id = ${campaignId}::uuid`,
    );
    const row = rows[0];
    if (!row) throw new Error(`campaign ${campaignId} not found`);
    const content = {
      subject: row.subject,
      html: row.body,
      type: row.type,
      unsubscribeMailbox: row.mailbox,
      trackingHost: row.tracking_host,
    };
    if (this.contents.size >= 100) this.contents.clear();
    this.contents.set(campaignId, content);
    return content;
  }
}
