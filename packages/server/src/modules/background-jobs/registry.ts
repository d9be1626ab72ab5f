import { contactJobHandlers } from '../contacts/jobs.js';
import { createBackgroundJob } from './runner.js';

/** The Agenda job that runs every project background job, dispatching on its kind. */
export const backgroundJob = createBackgroundJob(contactJobHandlers);
