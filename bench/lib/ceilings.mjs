// Timed-task baselines (ceilings) run in one or more processes at once: bare-nodemailer.mjs,
// bare-durable-delivery.mjs, bare-durable-webhooks.mjs. Each process waits for START_AT, does its
// share, and prints one line `result {…}` with at least sent, failed, firstError, startAt, endAt
// (epoch ms), cpuSeconds and machineAtStart/machineAtEnd (the whole machine's busy CPU seconds,
// /proc/stat, read by the process itself at its start and its end).
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startNode } from './process.mjs';

const BASELINES_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'baselines');

/**
 * Runs baselines/<script>.mjs in `processes` processes (process i gets `env(i)` on top of the
 * harness's env, plus START_AT and PROCESS_INDEX), all starting at the same instant, and returns
 * each one's result with the aggregate: all sent ÷ (common start → the last process's end), and
 * the whole machine's busy CPU seconds over that window (from the first process's start reading to
 * the last one's end reading). Throws if any send failed. Bounded: a process that has not finished
 * within `timeoutMs` is stopped and the run throws.
 */
export async function runTogether({ script, processes, env, timeoutMs = 180_000 }) {
  const startAt = Date.now() + 3000; // after every process has loaded its modules and made its key
  const handles = Array.from({ length: processes }, (_, i) =>
    startNode({
      name: `${script} #${i + 1}`,
      args: [join(BASELINES_DIR, `${script}.mjs`)],
      env: { ...process.env, ...env(i), START_AT: String(startAt), PROCESS_INDEX: String(i + 1) },
      ready: /^result \{.*\}$/m,
      timeoutMs,
    }),
  );
  try {
    const done = await Promise.all(handles.map((h) => h.ready));
    const results = done.map((h) => JSON.parse(/^result (\{.*\})$/m.exec(h.output())[1]));
    const failed = results.reduce((n, r) => n + r.failed, 0);
    if (failed)
      throw new Error(
        `${script}: ${failed} sends failed: ${results
          .map((r) => r.firstError)
          .filter(Boolean)
          .join('; ')}`,
      );
    const sent = results.reduce((n, r) => n + r.sent, 0);
    const first = results.reduce((a, b) => (b.startAt < a.startAt ? b : a));
    const last = results.reduce((a, b) => (b.endAt > a.endAt ? b : a));
    const seconds = (last.endAt - first.startAt) / 1000;
    return {
      processes,
      sent,
      seconds,
      messagesPerSec: sent / seconds,
      machineCpuSeconds: last.machineAtEnd - first.machineAtStart,
      results,
    };
  } finally {
    await Promise.all(handles.map((h) => h.stop()));
  }
}

/** Machine CPU ms per message (`machineCpuSeconds` over `messages`), 3 decimals; null without a count. */
export const msPerMessage = (cpuSeconds, messages) =>
  messages ? Number(((cpuSeconds * 1000) / messages).toFixed(3)) : null;
