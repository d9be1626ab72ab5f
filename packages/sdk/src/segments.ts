import { contract } from './contract.js';
import { paginateTotal } from './pagination.js';
import type { RequestOptions, Transport } from './transport.js';
import type {
  ConditionCount,
  ConditionTreeInput,
  Contact,
  MembersChange,
  Segment,
  SegmentComputeResult,
  SegmentContactPage,
  SegmentContactsQuery,
  SegmentCreateBody,
  SegmentUpdateBody,
  SegmentUsage,
} from './types.js';

/** Options of `segments.addMembers`, besides the per-call ones. */
export interface AddMembersOptions extends RequestOptions {
  /** Create contacts for emails Pigeon does not know yet (default false: they come back `not_found`). */
  createMissing?: boolean;
  /** Subscription state of the contacts created here (default true). */
  subscribed?: boolean;
}

/**
 * Segments of the key's project (secret key), as `pigeon.segments`. DYNAMIC segments hold the
 * contacts matching their condition tree; STATIC segments hold the contacts added to them by email.
 * Every method is a bound function, so it can be passed around on its own.
 */
export class Segments {
  constructor(private readonly transport: Transport) {}

  /** Create a segment: DYNAMIC (the default) with a `condition`, or STATIC without one. */
  readonly create = (body: SegmentCreateBody, options?: RequestOptions): Promise<Segment> =>
    this.transport.call(contract.segments.create, { body }, options);

  /** Every segment of the project, newest first (not paginated). */
  readonly list = (options?: RequestOptions): Promise<Segment[]> =>
    this.transport.call(contract.segments.list, {}, options);

  /** A segment with its cached `memberCount` (as of `memberCountAt`; see `refresh`). */
  readonly get = (id: string, options?: RequestOptions): Promise<Segment> =>
    this.transport.call(contract.segments.get, { params: { id } }, options);

  /** Change the name, description, `trackMembership`, or the condition of a DYNAMIC segment. */
  readonly update = (id: string, body: SegmentUpdateBody, options?: RequestOptions): Promise<Segment> =>
    this.transport.call(contract.segments.update, { params: { id }, body }, options);

  /** Delete a segment (409 `CONFLICT` while a campaign, segment or workflow still uses it). */
  readonly delete = async (id: string, options?: RequestOptions): Promise<void> => {
    await this.transport.call(contract.segments.delete, { params: { id } }, options);
  };

  /** Campaigns, workflows and other segments that reference the segment (what makes `delete` a 409). */
  readonly usage = (id: string, options?: RequestOptions): Promise<SegmentUsage> =>
    this.transport.call(contract.segments.usage, { params: { id } }, options);

  /** How many contacts a condition matches now, without saving a segment (the same 400s as `create`). */
  readonly count = (condition: ConditionTreeInput, options?: RequestOptions): Promise<ConditionCount> =>
    this.transport.call(contract.segments.count, { body: { condition } }, options);

  /** One page of members (`page` from 1, `pageSize` up to 100); DYNAMIC segments are evaluated live. */
  readonly contacts = (
    id: string,
    query: SegmentContactsQuery = {},
    options?: RequestOptions,
  ): Promise<SegmentContactPage> => this.transport.call(contract.segments.contacts, { params: { id }, query }, options);

  /**
   * Every member, fetching pages lazily from `query.page` (default 1) until a short page or the
   * `total`: `for await (const contact of pigeon.segments.members(id, { pageSize: 100 })) …`
   */
  readonly members = (
    id: string,
    query: SegmentContactsQuery = {},
    options?: RequestOptions,
  ): AsyncGenerator<Contact, void, undefined> =>
    paginateTotal((page) => this.contacts(id, { ...query, page }, options), query.page);

  /** Add up to 1,000 emails to a STATIC segment; one result per distinct email. */
  readonly addMembers = (id: string, emails: string[], options: AddMembersOptions = {}): Promise<MembersChange> => {
    const { createMissing, subscribed, ...requestOptions } = options;
    return this.transport.call(
      contract.segments.addMembers,
      { params: { id }, body: { emails, createMissing, subscribed } },
      requestOptions,
    );
  };

  /** Remove up to 1,000 emails from a STATIC segment; one result per distinct email. */
  readonly removeMembers = (id: string, emails: string[], options?: RequestOptions): Promise<MembersChange> =>
    this.transport.call(contract.segments.removeMembers, { params: { id }, body: { emails } }, options);

  /**
   * Recompute a segment with `trackMembership`: records a `segment.<slug>.entry` or `.exit` event
   * for each contact that joined or left since the last computation.
   */
  readonly compute = (id: string, options?: RequestOptions): Promise<SegmentComputeResult> =>
    this.transport.call(contract.segments.compute, { params: { id } }, options);

  /** Recount the members now (no events, no membership changes); resolves with the segment. */
  readonly refresh = (id: string, options?: RequestOptions): Promise<Segment> =>
    this.transport.call(contract.segments.refresh, { params: { id } }, options);
}
