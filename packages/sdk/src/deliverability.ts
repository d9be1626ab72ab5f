import { contract } from './contract.js';
import { paginate } from './pagination.js';
import type { RequestOptions, Transport } from './transport.js';
import type { Suppression, SuppressionListQuery, SuppressionPage } from './types.js';

/**
 * Suppressed addresses of the key's project (secret key), as `pigeon.suppressions`: addresses
 * Pigeon no longer sends to after a hard bounce or a spam complaint. Sends to them come back in
 * the send result's `skipped` with `reason: 'suppressed'`. Every method is a bound function.
 */
export class Suppressions {
  constructor(private readonly transport: Transport) {}

  /** One page, newest first; `email` narrows it to one address. */
  readonly list = (query: SuppressionListQuery = {}, options?: RequestOptions): Promise<SuppressionPage> =>
    this.transport.call(contract.suppressions.list, { query }, options);

  /** Every suppression matching `query`, fetching pages lazily as the loop goes. */
  readonly all = (
    query: SuppressionListQuery = {},
    options?: RequestOptions,
  ): AsyncGenerator<Suppression, void, undefined> =>
    paginate((cursor) => this.list({ ...query, cursor }, options), query.cursor);

  /** Lift a suppression: later sends go to the address again (the contact stays unsubscribed). */
  readonly delete = async (id: string, options?: RequestOptions): Promise<void> => {
    await this.transport.call(contract.suppressions.delete, { params: { id } }, options);
  };
}
