import type { Queryable } from '../../db/sql.js';
import { markSent, type SentEmail } from '../email-states/service.js';

/**
 * Records outcomes in groups, one statement in flight per process (as `TrackBatcher` does for
 * tracks): an outcome that finds none running leaves at the end of this turn of the event loop with
 * the others that arrived in it (SMTP replies read together); outcomes that arrive while one runs
 * wait for it and go together in the next. No timer: a message is recorded within two statements
 * of its reply, which bounds the window a crash can turn into a duplicate (accepted, not yet
 * recorded). Against a statement per turn, concurrent ones, this put 2.8 messages in a statement
 * instead of 2.2 and took 16–28% off PostgreSQL's CPU per delivered message (bench results of
 * 2026-11-28, eighteenth sitting).
 */
export function sentRecorder(db: Queryable, delivered: boolean): (sent: SentEmail) => Promise<void> {
  let waiting: Array<{ sent: SentEmail; done: (err?: unknown) => void }> = [];
  let running = false;
  let scheduled = false;
  const flush = async () => {
    scheduled = false;
    running = true;
    const batch = waiting;
    waiting = [];
    try {
      await markSent(
        db,
        delivered,
        batch.map((w) => w.sent),
      );
      for (const w of batch) w.done();
    } catch (err) {
      for (const w of batch) w.done(err);
    } finally {
      running = false;
      if (waiting.length > 0) void flush();
    }
  };
  return (sent: SentEmail) =>
    new Promise<void>((resolve, reject) => {
      waiting.push({ sent, done: (err) => (err ? reject(err) : resolve()) });
      if (running || scheduled) return;
      scheduled = true;
      setImmediate(() => void flush());
    });
}
