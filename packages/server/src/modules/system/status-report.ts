import type { Operations } from './operations.js';

const seconds = (s: number) => (s < 1 ? '0 s' : s < 120 ? `${Math.round(s)} s` : `${Math.round(s / 60)} min`);
const ago = (at: Date, now: Date) => `${seconds((now.getTime() - at.getTime()) / 1000)} ago`;

/** `pigeon status` for a person at a terminal. */
export function formatStatus(ops: Operations, now = new Date()): string {
  const lines: string[] = [];
  const alive = ops.workers.filter((w) => w.alive);
  lines.push(`Workers alive: ${alive.length}`);
  for (const w of ops.workers) {
    lines.push(`  ${w.id}  ${w.alive ? 'alive' : 'gone '}  v${w.version}  last seen ${ago(w.seenAt, now)}`);
  }
  lines.push('', 'Delivery queue (waiting / most overdue):');
  for (const q of ops.queue.byPriority) {
    lines.push(`  ${q.priority.padEnd(14)} ${String(q.queued).padStart(8)}   ${seconds(q.oldestDueSeconds)}`);
  }
  lines.push(`  ${'being sent'.padEnd(14)} ${String(ops.queue.sending).padStart(8)}`);
  lines.push(`  campaign recipients pending: ${ops.queue.campaignRecipientsPending}`);
  lines.push('', 'Change feed lag:');
  for (const f of ops.feed) lines.push(`  ${f.consumer.padEnd(20)} ${seconds(f.lagSeconds)}`);
  lines.push(
    '',
    `Workflow executions: ${ops.workflows.running} running, ${ops.workflows.waiting} waiting, ${ops.workflows.overdueTimers} timers overdue`,
  );
  const due = ops.jobs.filter((j) => j.due > 0 || j.running > 0);
  lines.push(
    `Background jobs: ${due.length ? due.map((j) => `${j.name} ${j.due} due/${j.running} running`).join(', ') : 'none due'}`,
  );
  lines.push('', 'Relays:');
  for (const r of ops.relays) {
    const down = r.downSince ? ` since ${ago(new Date(r.downSince), now)}: ${r.lastError ?? ''}` : '';
    lines.push(`  ${r.transport.padEnd(14)} ${r.state}${down}`);
  }
  const e = ops.lastDeliveryError;
  lines.push(`Last delivery error: ${e ? `${ago(e.at, now)} on ${e.worker}: ${e.message}` : 'none'}`);
  return lines.join('\n');
}
