import { oneInFlight } from '../../db/one-in-flight.js';
import type { Queryable } from '../../db/sql.js';
import { markSent, type SentEmail } from '../email-states/public.js';

/**
 * Records sent mail in groups, one statement in flight per process (`oneInFlight`): the outcomes of
 * one turn of the event loop (SMTP replies read together) leave at its end, and those that arrive
 * while a statement runs go together in the next. A message is recorded within two statements of
 * its reply, which bounds the window a crash can turn into a duplicate (accepted, not yet
 * recorded). Against a statement per turn, several in flight, this put 2.8 messages in a statement
 * instead of 2.2 and took 16–28% off PostgreSQL's CPU per delivered message, for ~1 ms more of that
 * window (bench/results/2026-11-28-eighteenth-sitting.md).
 */
export function sentRecorder(db: Queryable, delivered: boolean): (sent: SentEmail) => Promise<void> {
  return oneInFlight<SentEmail, void>(async (sent) => {
    await markSent(db, delivered, sent);
    return sent.map(() => undefined);
  });
}
