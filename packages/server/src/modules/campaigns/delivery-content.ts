import type { ContentType } from '@pigeon/contract';
import type pg from 'pg';
import type { Config } from '../../config/index.js';
import { type ComposedMessage, composeMessage, type MessageContent } from '../composition/compose.js';
import type { ContactRow } from '../contacts/repository.js';

interface CampaignContent extends MessageContent {
  unsubscribeMailbox: string | null;
}

interface RecipientRow extends ContactRow {
  campaign_status: string;
}

/**
 * Renders campaign mail at delivery: the campaign's content (read once per worker: it cannot
 * change after sending starts) composed with the contact as it is now. Undefined means the
 * message must not go out: the campaign was cancelled, the contact is gone, or a MARKETING or
 * HEADLESS recipient unsubscribed since the audience was frozen.
 */
export class CampaignComposer {
  private readonly contents = new Map<string, CampaignContent>();

  constructor(
    private readonly pool: pg.Pool,
    /** Read at each message: the public URL is only final once the server listens. */
    private readonly config: Pick<Config, 'http' | 'secrets'>,
  ) {}

  async compose(email: {
    id: string;
    campaign_id: string;
    contact_id: string | null;
    tracked: boolean;
    headers: Record<string, string>;
  }): Promise<ComposedMessage | undefined> {
    const { rows } = await this.pool.query<RecipientRow>({
      name: 'campaigns.recipient',
      text: `SELECT c.*, k.status AS campaign_status FROM campaigns k
             LEFT JOIN contacts c ON c.id = $2 WHERE k.id = $1`,
      values: [email.campaign_id, email.contact_id],
    });
    const row = rows[0];
    if (!row || row.campaign_status === 'CANCELLED' || !row.id) return undefined;
    const content = await this.content(email.campaign_id);
    if (content.type !== 'TRANSACTIONAL' && !row.subscribed) return undefined;
    const { campaign_status: _status, ...contact } = row;
    return composeMessage(content, contact, contact.data, email.id, {
      publicUrl: this.config.http.publicUrl,
      linkSecret: this.config.secrets.linkSigning,
      tracked: email.tracked,
      unsubscribeMailbox: content.unsubscribeMailbox,
      headers: email.headers,
    });
  }

  private async content(campaignId: string): Promise<CampaignContent> {
    const cached = this.contents.get(campaignId);
    if (cached) return cached;
    const { rows } = await this.pool.query<{
      subject: string;
      body: string;
      type: ContentType;
      mailbox: string | null;
    }>(
      `SELECT k.subject, k.body, k.type, p.unsubscribe_mailbox AS mailbox
       FROM campaigns k JOIN projects p ON p.id = k.project_id WHERE k.id = $1`,
      [campaignId],
    );
    const row = rows[0];
    if (!row) throw new Error(`campaign ${campaignId} not found`);
    const content = { subject: row.subject, html: row.body, type: row.type, unsubscribeMailbox: row.mailbox };
    if (this.contents.size >= 100) this.contents.clear();
    this.contents.set(campaignId, content);
    return content;
  }
}
