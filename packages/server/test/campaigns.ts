import type { contract } from '@pigeon/contract';
import type { ClientInferRequest } from '@ts-rest/core';
import { expect } from 'vitest';
import { api, bodyOf } from './api.js';
import type { TestPigeon } from './helpers.js';
import { until } from './until.js';

type CampaignBody = ClientInferRequest<typeof contract.campaigns.create>['body'];
type SendBody = ClientInferRequest<typeof contract.campaigns.send>['body'];

/** What a campaign is sent as: a project's key, its owner's session and a verified `from` (e.g. `verifiedSender`). */
export interface CampaignSender {
  auth: Record<string, string>;
  from: string;
  owner: { cookie: string };
  project: { id: string };
}

/** `${tag}${i}@${domain}` for i from 0 to count - 1. */
export const addresses = (tag: string, count: number, domain: string) =>
  Array.from({ length: count }, (_, i) => `${tag}${i}@${domain}`);

/** A contact per address of `to`, then a DRAFT campaign to all; `send()` sends it, `finished()` awaits its end. */
export async function campaignToAll<S extends CampaignSender>(
  pigeon: Pick<TestPigeon, 'url'>,
  sender: S,
  to: string[],
  options: {
    /** The project's campaignSendRate (messages a second), set first. */
    sendRate?: number;
    /** Name, subject, body (an unsubscribe link by default), type… */
    campaign?: Partial<Omit<CampaignBody, 'audienceType' | 'segmentId' | 'audienceCondition'>>;
  } = {},
) {
  const client = api(pigeon, sender.auth);
  if (options.sendRate !== undefined) {
    const owner = api(pigeon, { cookie: sender.owner.cookie });
    const body = { campaignSendRate: options.sendRate };
    bodyOf(await owner.users.updateProject({ params: { id: sender.project.id }, body }), 200);
  }
  for (const email of to) expect((await client.contacts.create({ body: { email } })).status).toBe(201);
  const body: CampaignBody = {
    name: 'To all',
    subject: 'Hi',
    body: '<p>Hi {{unsubscribeUrl}}</p>',
    from: sender.from,
    ...options.campaign,
    audienceType: 'ALL',
  };
  const campaign = bodyOf(await client.campaigns.create({ body }), 201).data;
  const params = { id: campaign.id };
  return {
    sender,
    client,
    campaign,
    body,
    params,
    send: async (sendBody?: SendBody) => bodyOf(await client.campaigns.send({ params, body: sendBody }), 200).data,
    finished: (timeoutMs?: number) =>
      until(
        async () => bodyOf(await client.campaigns.get({ params }), 200),
        (c) => c.status !== 'SENDING' && c.status !== 'SCHEDULED',
        timeoutMs,
      ),
  };
}
