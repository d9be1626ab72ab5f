import { contract } from './contract.js';
import { PigeonError } from './errors.js';
import { pollUntil } from './jobs.js';
import { paginateOffset } from './pagination.js';
import type { RequestOptions, Transport } from './transport.js';
import type {
  AudienceCount,
  AudienceCountBody,
  Campaign,
  CampaignCancelResult,
  CampaignInput,
  CampaignListQuery,
  CampaignPage,
  CampaignSendResult,
  CampaignStats,
  CampaignTestResult,
  RequeueResult,
} from './types.js';

/** Options of `campaigns.send`, besides the per-call ones. */
export interface CampaignSendOptions extends RequestOptions {
  /**
   * When to send: a future time schedules the campaign (SCHEDULED); omitted, null or past sends now
   * (SENDING). A Date is sent as its ISO string; a string or number goes as is (anything a
   * JavaScript Date parses).
   */
  scheduledFor?: Date | string | number | null;
}

/** Where a sending campaign stands: its state and the counts of its recipients so far. */
export interface CampaignProgress {
  status: Campaign['status'];
  totalRecipients: number;
  /** Handed to the transport. */
  sent: number;
  /** Still queued or being delivered. */
  pending: number;
  /** Never handed to the transport (cancel, or unsubscribed meanwhile). */
  cancelled: number;
  campaign: Campaign;
  stats: CampaignStats;
}

/** Options of `campaigns.waitForSent`, besides the per-call ones. */
export interface WaitForSentOptions {
  /** Pause between polls, default 1 000 ms. */
  intervalMs?: number;
  /** Give up after this long (rejecting with code `TIMEOUT`), default 600 000 ms; `Infinity` waits forever. */
  timeoutMs?: number;
  /** Called with the progress after every poll, including the last one. */
  onProgress?: (progress: CampaignProgress) => void;
}

const isOver = (p: CampaignProgress) => (p.status === 'SENT' || p.status === 'CANCELLED') && p.pending === 0;

/** `{ success, data, message }` as the data with the message beside it. */
const withMessage = <T extends object>({ data, message }: { data: T; message: string }): T & { message: string } => ({
  ...data,
  message,
});

/** A Date as the ISO string the server parses; other values unchanged. */
function scheduleTime(value: Date | string | number | null | undefined): string | number | null | undefined {
  if (!(value instanceof Date)) return value;
  if (Number.isNaN(value.getTime())) throw new TypeError('Invalid `scheduledFor`: the Date is invalid');
  return value.toISOString();
}

/**
 * Campaigns of the key's project (secret key), as `pigeon.campaigns`: one email to an audience (every
 * contact, a segment, or a condition tree), sent now or scheduled. Every method is a bound function,
 * so it can be passed around on its own.
 */
export class Campaigns {
  constructor(private readonly transport: Transport) {}

  /** Create a DRAFT campaign; resolves with it (the `data` of the `{ success, data }` answer). */
  readonly create = async (body: CampaignInput, options?: RequestOptions): Promise<Campaign> =>
    (await this.transport.call(contract.campaigns.create, { body }, options)).data;

  /** One page of campaigns (`page` from 1, `pageSize` up to 100); filter by `status`, `search`; `sort`, `dir`. */
  readonly list = (query: CampaignListQuery = {}, options?: RequestOptions): Promise<CampaignPage> =>
    this.transport.call(contract.campaigns.list, { query }, options);

  /**
   * Every campaign matching `query`, fetching pages lazily from `query.page` (default 1) until
   * `totalPages`: `for await (const campaign of pigeon.campaigns.all({ status: 'SENT' })) …`
   */
  readonly all = (query: CampaignListQuery = {}, options?: RequestOptions): AsyncGenerator<Campaign, void, undefined> =>
    paginateOffset((page) => this.list({ ...query, page }, options), query.page);

  /** A campaign with its counters. */
  readonly get = (id: string, options?: RequestOptions): Promise<Campaign> =>
    this.transport.call(contract.campaigns.get, { params: { id } }, options);

  /** Replace every field of a DRAFT or SCHEDULED campaign (409 `CONFLICT` once it is sending). */
  readonly replace = (id: string, body: CampaignInput, options?: RequestOptions): Promise<Campaign> =>
    this.transport.call(contract.campaigns.replace, { params: { id }, body }, options);

  /** Delete a campaign (409 `CONFLICT` while it is sending; cancel it first). */
  readonly delete = async (id: string, options?: RequestOptions): Promise<void> => {
    await this.transport.call(contract.campaigns.delete, { params: { id } }, options);
  };

  /** Copy a campaign into a new DRAFT; resolves with the copy (its `id` is the new id). */
  readonly duplicate = async (id: string, options?: RequestOptions): Promise<Campaign> =>
    (await this.transport.call(contract.campaigns.duplicate, { params: { id } }, options)).data;

  /** Send the campaign once to `email` (with that contact's data when it exists); no counters move. */
  /** How many contacts an audience would reach if sent now (subscribed only unless TRANSACTIONAL, suppressed left out). */
  readonly audienceCount = (body: AudienceCountBody, options?: RequestOptions): Promise<AudienceCount> =>
    this.transport.call(contract.campaigns.audienceCount, { body }, options);

  readonly test = async (id: string, email: string, options?: RequestOptions): Promise<CampaignTestResult> =>
    (await this.transport.call(contract.campaigns.test, { params: { id }, body: { email } }, options)).data;

  /**
   * Send a DRAFT or SCHEDULED campaign now, or schedule it with a future `scheduledFor`; sending
   * freezes the audience. Resolves with the new `status` and the server's `message`. 409 `CONFLICT`
   * when the campaign is already sending, sent or cancelled.
   */
  readonly send = async (id: string, options: CampaignSendOptions = {}): Promise<CampaignSendResult> => {
    const { scheduledFor, ...requestOptions } = options;
    const body = { scheduledFor: scheduleTime(scheduledFor) };
    return withMessage(await this.transport.call(contract.campaigns.send, { params: { id }, body }, requestOptions));
  };

  /**
   * Cancel a SCHEDULED or SENDING campaign: what was not handed to the transport yet is never sent.
   * Resolves with the `sent` and `cancelled` counts and the server's `message`.
   */
  readonly cancel = async (id: string, options?: RequestOptions): Promise<CampaignCancelResult> =>
    withMessage(await this.transport.call(contract.campaigns.cancel, { params: { id } }, options));

  /**
   * Poll a SCHEDULED or SENDING campaign until it is SENT or CANCELLED with nothing pending, calling
   * `onProgress` with `{ status, sent, pending, cancelled, … }` as it goes; resolves with the last
   * progress. A DRAFT rejects at once (`CONFLICT`: send it first); `timeoutMs` passing first rejects
   * with `TIMEOUT` (`details.progress` is the last one seen).
   */
  readonly waitForSent = (
    id: string,
    wait: WaitForSentOptions = {},
    options: RequestOptions = {},
  ): Promise<CampaignProgress> =>
    pollUntil(
      async (pollOptions) => {
        const [campaign, stats] = await Promise.all([this.get(id, pollOptions), this.stats(id, pollOptions)]);
        if (campaign.status === 'DRAFT') {
          throw new PigeonError({
            status: 0,
            code: 'CONFLICT',
            message: `Campaign ${id} is a DRAFT: send it (campaigns.send) before waiting for it`,
          });
        }
        const { sent, pending, cancelled, totalRecipients } = stats;
        return { status: campaign.status, totalRecipients, sent, pending, cancelled, campaign, stats };
      },
      isOver,
      wait,
      options,
      (last) => ({
        message: `Campaign ${id} was not sent within ${wait.timeoutMs ?? 600_000} ms${last ? ` (last status: ${last.status}, ${last.sent}/${last.totalRecipients} sent)` : ''}`,
        details: { campaignId: id, progress: last },
      }),
    );

  /**
   * Queue the campaign's FAILED messages again (after a relay outage that outlasted their lifetime,
   * say): each gets a new lifetime. Suppressed addresses and unsubscribed contacts are refused as
   * sending refuses them; a SENT campaign goes back to SENDING. 409 unless SENDING or SENT.
   */
  readonly requeueFailed = async (id: string, options?: RequestOptions): Promise<RequeueResult> =>
    withMessage(await this.transport.call(contract.campaigns.requeueFailed, { params: { id } }, options));

  /** Delivery and engagement counts, with rates as fractions of `sent`. */
  readonly stats = (id: string, options?: RequestOptions): Promise<CampaignStats> =>
    this.transport.call(contract.campaigns.stats, { params: { id } }, options);
}
