import { contract } from './contract.js';
import { paginate } from './pagination.js';
import type { RequestOptions, Transport } from './transport.js';
import type { EmailDetail, EmailListQuery, EmailPage, EmailSummary } from './types.js';

/** What became of sent emails (`pigeon.emails.get/list/all/cancel`). */
export class SentEmails {
  constructor(private readonly transport: Transport) {}

  /** One email with its status and timeline (queued, sent, opened, clicked, bounced…). */
  readonly get = (id: string, options?: RequestOptions): Promise<EmailDetail> =>
    this.transport.call(contract.sentEmails.get, { params: { id } }, options);

  /** One page, newest first, filtered by contact, status, campaign, template or time. */
  readonly list = (query: EmailListQuery = {}, options?: RequestOptions): Promise<EmailPage> =>
    this.transport.call(contract.sentEmails.list, { query }, options);

  /** Every email matching `query`, fetching pages lazily. */
  readonly all = (
    query: EmailListQuery = {},
    options?: RequestOptions,
  ): AsyncGenerator<EmailSummary, void, undefined> =>
    paginate((cursor) => this.list({ ...query, cursor }, options), query.cursor);

  /** Cancel a scheduled (or queued) email before it is handed to the transport; 409 once it is. */
  readonly cancel = (id: string, options?: RequestOptions): Promise<EmailSummary> =>
    this.transport.call(contract.sentEmails.cancel, { params: { id }, body: {} }, options);

  /** Queue a FAILED email again (409 when sending would refuse it, or it is not FAILED). */
  readonly requeue = (id: string, options?: RequestOptions): Promise<EmailSummary> =>
    this.transport.call(contract.sentEmails.requeue, { params: { id }, body: {} }, options);
}
