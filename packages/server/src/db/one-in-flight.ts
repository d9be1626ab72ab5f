/**
 * Group commit for a statement that many callers of one process make: a call that finds none
 * running goes at the end of this turn of the event loop, with the other calls made in it; calls
 * made while one runs wait for it and go together in the next. No timer, so an idle process adds no
 * delay, and a busy one makes bigger groups instead of more concurrent statements (which cost
 * PostgreSQL more per row: each walks and locks past the others' rows).
 *
 * `run` gets the group's items in call order and answers one result per item, in the same order;
 * when it throws, every call of the group fails with its error and the next group still runs.
 */
export function oneInFlight<Item, Result>(run: (items: Item[]) => Promise<Result[]>): (item: Item) => Promise<Result> {
  let waiting: Array<{ item: Item; resolve: (result: Result) => void; reject: (err: unknown) => void }> = [];
  let running = false;
  let scheduled = false;
  const flush = async () => {
    scheduled = false;
    running = true;
    const group = waiting;
    waiting = [];
    try {
      const results = await run(group.map((w) => w.item));
      group.forEach((w, i) => {
        w.resolve(results[i] as Result);
      });
    } catch (err) {
      for (const w of group) w.reject(err);
    } finally {
      running = false;
      if (waiting.length > 0) void flush();
    }
  };
  return (item) =>
    new Promise<Result>((resolve, reject) => {
      waiting.push({ item, resolve, reject });
      if (running || scheduled) return;
      scheduled = true;
      setImmediate(() => void flush());
    });
}
