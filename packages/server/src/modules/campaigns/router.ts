import { contract } from '@pigeon/contract';
import { initServer } from '@ts-rest/express';
import type { AppDeps } from '../../deps.js';
import { callerProject } from '../../kit/caller.js';
import { requeueMessage } from '../email-states/public.js';
import { countAudience } from './audience.js';
import { cancelCampaign, requeueCampaignFailed, sendCampaign, testCampaign } from './sending.js';
import * as campaigns from './service.js';

const s = initServer();

export const createCampaignsRouter = (deps: AppDeps) => {
  const db = deps.db.pool;
  return s.router(contract.campaigns, {
    create: async ({ req, body }) => ({
      status: 201,
      body: { success: true, data: await campaigns.createCampaign(db, callerProject(req).id, body) },
    }),
    list: async ({ req, query }) => ({
      status: 200,
      body: await campaigns.listCampaigns(db, callerProject(req).id, query),
    }),
    get: async ({ req, params }) => ({
      status: 200,
      body: await campaigns.getCampaign(db, callerProject(req).id, params.id),
    }),
    replace: async ({ req, params, body }) => ({
      status: 200,
      body: await campaigns.replaceCampaign(db, callerProject(req).id, params.id, body),
    }),
    delete: async ({ req, params }) => {
      await campaigns.deleteCampaign(db, callerProject(req).id, params.id);
      return { status: 204, body: undefined };
    },
    duplicate: async ({ req, params }) => ({
      status: 201,
      body: { success: true, data: await campaigns.duplicateCampaign(db, callerProject(req).id, params.id) },
    }),
    audienceCount: async ({ req, body }) => ({
      status: 200,
      body: await countAudience(db, callerProject(req).id, body, {
        timeoutMs: deps.config.segments.queryTimeoutMs,
        workMemMb: deps.config.segments.workMemMb,
      }),
    }),
    test: async ({ req, params, body }) => ({
      status: 200,
      body: { success: true, data: await testCampaign(deps, callerProject(req).id, params.id, body.email) },
    }),
    send: async ({ req, params, body }) => {
      const { row, message } = await sendCampaign(deps, callerProject(req).id, params.id, body?.scheduledFor);
      const data = {
        id: row.id,
        name: row.name,
        status: row.status,
        scheduledFor: row.scheduled_for?.toISOString() ?? null,
        totalRecipients: row.total_recipients,
      };
      return { status: 200, body: { success: true, data, message } };
    },
    cancel: async ({ req, params }) => {
      const { message, ...data } = await cancelCampaign(db, callerProject(req).id, params.id);
      return { status: 200, body: { success: true, data, message } };
    },
    requeueFailed: async ({ req, params }) => {
      const data = await requeueCampaignFailed(db, callerProject(req).id, params.id);
      return { status: 200, body: { success: true, data, message: requeueMessage(data) } };
    },
    stats: async ({ req, params }) => ({
      status: 200,
      body: await campaigns.getCampaignStats(db, callerProject(req).id, params.id),
    }),
  });
};
