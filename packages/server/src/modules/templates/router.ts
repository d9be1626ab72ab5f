import { contract } from '@pigeon/contract';
import { initServer } from '@ts-rest/express';
import type { AppDeps } from '../../deps.js';
import { callerProject } from '../../kit/caller.js';
import { previewTemplate } from './preview.js';
import * as templates from './service.js';

const s = initServer();

export const createTemplatesRouter = (deps: AppDeps) => {
  const db = deps.db.pool;
  return s.router(contract.templates, {
    create: async ({ req, body }) => ({
      status: 201,
      body: await templates.createTemplate(db, callerProject(req).id, body),
    }),
    list: async ({ req, query }) => ({
      status: 200,
      body: await templates.listTemplates(db, callerProject(req).id, query),
    }),
    get: async ({ req, params }) => ({
      status: 200,
      body: templates.toTemplateDto(await templates.findTemplate(db, callerProject(req).id, params.id)),
    }),
    update: async ({ req, params, body }) => ({
      status: 200,
      body: await templates.updateTemplate(db, callerProject(req).id, params.id, body),
    }),
    delete: async ({ req, params }) => {
      await templates.deleteTemplate(db, callerProject(req).id, params.id);
      return { status: 204, body: undefined };
    },
    duplicate: async ({ req, params }) => ({
      status: 201,
      body: await templates.duplicateTemplate(db, callerProject(req).id, params.id),
    }),
    preview: async ({ req, body }) => ({
      status: 200,
      body: await previewTemplate(
        db,
        callerProject(req).id,
        body,
        {
          publicUrl: deps.config.http.publicUrl,
          linkSecret: deps.config.secrets.linkSigning,
        },
        deps.clock.now(),
      ),
    }),
    usage: async ({ req, params }) => ({
      status: 200,
      body: await templates.templateUsage(db, callerProject(req).id, params.id),
    }),
  });
};
