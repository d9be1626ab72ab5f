import { contract } from '@pigeon/contract';
import { initServer } from '@ts-rest/express';
import type { AppDeps } from '../../deps.js';
import { callerProject } from '../../kit/caller.js';
import * as executions from './executions.js';
import { workflowFields } from './fields.js';
import * as workflows from './service.js';

const s = initServer();

export const createWorkflowsRouter = (deps: AppDeps) => {
  const db = deps.db.pool;
  return s.router(contract.workflows, {
    list: async ({ req }) => ({ status: 200, body: await workflows.listWorkflows(db, callerProject(req).id) }),
    create: async ({ req, body }) => ({
      status: 201,
      body: await workflows.createWorkflow(db, callerProject(req).id, body),
    }),
    fields: async ({ req, query }) => ({
      status: 200,
      body: await workflowFields(db, callerProject(req).id, query.eventName),
    }),
    get: async ({ req, params }) => ({
      status: 200,
      body: await workflows.getWorkflow(db, callerProject(req).id, params.id),
    }),
    update: async ({ req, params, body }) => ({
      status: 200,
      body: await workflows.updateWorkflow(db, callerProject(req).id, params.id, body),
    }),
    delete: async ({ req, params }) => {
      await workflows.deleteWorkflow(db, callerProject(req).id, params.id);
      return { status: 204, body: undefined };
    },
    addStep: async ({ req, params, body }) => ({
      status: 201,
      body: await workflows.addStep(db, callerProject(req).id, params.id, body),
    }),
    updateStep: async ({ req, params, body }) => ({
      status: 200,
      body: await workflows.updateStep(db, callerProject(req).id, params.id, params.stepId, body),
    }),
    deleteStep: async ({ req, params, query }) => {
      await workflows.deleteStep(db, callerProject(req).id, params.id, params.stepId, query.splice === 'true');
      return { status: 204, body: undefined };
    },
    addTransition: async ({ req, params, body }) => ({
      status: 201,
      body: await workflows.addTransition(db, callerProject(req).id, params.id, body),
    }),
    deleteTransition: async ({ req, params }) => {
      await workflows.deleteTransition(db, callerProject(req).id, params.id, params.transitionId);
      return { status: 204, body: undefined };
    },
    startExecution: async ({ req, params, body }) => ({
      status: 201,
      body: await executions.startExecution(db, callerProject(req).id, params.id, body),
    }),
    listExecutions: async ({ req, params, query }) => ({
      status: 200,
      body: await executions.listExecutions(db, callerProject(req).id, params.id, query),
    }),
    getExecution: async ({ req, params }) => ({
      status: 200,
      body: await executions.getExecution(db, callerProject(req).id, params.id, params.executionId),
    }),
    cancelExecution: async ({ req, params }) => ({
      status: 200,
      body: await executions.cancelExecution(db, callerProject(req).id, params.id, params.executionId),
    }),
    cancelAll: async ({ req, params }) => ({
      status: 200,
      body: await executions.cancelAllExecutions(db, callerProject(req).id, params.id),
    }),
  });
};
