import { contract } from './contract.js';
import type { RequestOptions, Transport } from './transport.js';
import type { TrackingDomain } from './types.js';

/**
 * Tracking domains of the key's project, as `pigeon.trackingDomains`: a subdomain of a sender
 * domain (`links.example.com` for `example.com`) that the open pixel and click links of its mail
 * use once a CNAME to Pigeon's public host is verified (README "Tracking domains").
 */
export class TrackingDomains {
  constructor(private readonly transport: Transport) {}

  /** Add one; publish its `record` (a CNAME), then `verify`. */
  readonly create = (domain: string, options?: RequestOptions): Promise<TrackingDomain> =>
    this.transport.call(contract.trackingDomains.create, { body: { domain } }, options);

  readonly list = async (options?: RequestOptions): Promise<TrackingDomain[]> =>
    (await this.transport.call(contract.trackingDomains.list, {}, options)).data;

  readonly get = (id: string, options?: RequestOptions): Promise<TrackingDomain> =>
    this.transport.call(contract.trackingDomains.get, { params: { id } }, options);

  /** Check the CNAME now: `status` is `verified` while it names Pigeon's public host. */
  readonly verify = (id: string, options?: RequestOptions): Promise<TrackingDomain> =>
    this.transport.call(contract.trackingDomains.verify, { params: { id } }, options);

  /** Remove it: new mail uses PUBLIC_URL again; links already sent keep working while the CNAME stays. */
  readonly delete = async (id: string, options?: RequestOptions): Promise<void> => {
    await this.transport.call(contract.trackingDomains.delete, { params: { id } }, options);
  };
}
