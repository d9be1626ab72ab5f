import { contactJobHandlers } from '../contacts/jobs.js';
import { deleteEventsByName } from '../events/jobs.js';
import { createBackgroundJob } from './runner.js';

/** The Agenda job that runs every project background job, dispatching on its kind. */
export const backgroundJob = createBackgroundJob({ ...contactJobHandlers, delete_events: deleteEventsByName });
