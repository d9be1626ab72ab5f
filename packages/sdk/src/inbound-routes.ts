import { contract } from './contract.js';
import type { RequestOptions, Transport } from './transport.js';
import type {
  InboundEmail,
  InboundEmailListQuery,
  InboundRoute,
  InboundRouteCreateBody,
  InboundRouteUpdateBody,
} from './types.js';

/**
 * Inbound mail routes of the key's project, as `pigeon.inboundRoutes`: which addresses of a
 * verified domain Pigeon takes mail for, and what it does with it (README "Receiving mail").
 * Every method is a bound function.
 */
export class InboundRoutes {
  constructor(private readonly transport: Transport) {}

  /** Add a route: `{ domain, pattern: 'support' | 'reply+*' | '*', action: 'WEBHOOK' | 'WORKFLOW' | 'RECORD' }`. */
  readonly create = (body: InboundRouteCreateBody, options?: RequestOptions): Promise<InboundRoute> =>
    this.transport.call(contract.inboundRoutes.create, { body }, options);

  readonly list = async (options?: RequestOptions): Promise<InboundRoute[]> =>
    (await this.transport.call(contract.inboundRoutes.list, {}, options)).data;

  readonly get = (id: string, options?: RequestOptions): Promise<InboundRoute> =>
    this.transport.call(contract.inboundRoutes.get, { params: { id } }, options);

  readonly update = (id: string, body: InboundRouteUpdateBody, options?: RequestOptions): Promise<InboundRoute> =>
    this.transport.call(contract.inboundRoutes.update, { params: { id }, body }, options);

  /** Remove a route; the messages it took stay. */
  readonly delete = async (id: string, options?: RequestOptions): Promise<void> => {
    await this.transport.call(contract.inboundRoutes.delete, { params: { id } }, options);
  };

  /** Messages the routes took, newest first (`before`: the previous page's last id). */
  readonly emails = async (query: InboundEmailListQuery = {}, options?: RequestOptions): Promise<InboundEmail[]> =>
    (await this.transport.call(contract.inboundRoutes.listEmails, { query }, options)).data;

  readonly email = (id: string, options?: RequestOptions): Promise<InboundEmail> =>
    this.transport.call(contract.inboundRoutes.getEmail, { params: { id } }, options);
}
