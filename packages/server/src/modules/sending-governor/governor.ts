import type pg from 'pg';
import type { DeliveryError } from '../../mail/delivery-failure.js';
import {
  governorDeferrals,
  governorHeld,
  governorRate,
  MAILBOX_GROUPS,
  type MailboxGroup,
} from '../../metrics/registry.js';
import type { GovernorConfig } from './config.js';
import { GroupRate } from './group-rate.js';
import { type MxResolver, mxGroups } from './mx-groups.js';
import { nextDayStart, warmupCounter } from './warmup.js';

/** What the governor reads of a claimed email. */
export interface GovernedEmail {
  id: string;
  project_id: string;
  from_email: string;
  to_email: string;
  source: string;
  created_at: Date;
  requeued_at: Date | null;
}

/** Mail held under a warm-up cap; everything else (transactional, SMTP submission) is only counted. */
const HELD_SOURCES = new Set(['CAMPAIGN', 'WORKFLOW']);
/** A message whose slot would come later than this before its lifetime ends is sent at once instead. */
const LAST_CHANCE_MS = 1000;
/** Replies about the session, not the message: the relay's breaker handles those. */
const SESSION_COMMANDS = /^(CONN|EHLO|HELO|LHLO|STARTTLS|AUTH)/;
/** A provider slowing a sender down: `421`, or a 4xx whose enhanced status is 4.7.x (policy, RFC 3463). */
const THROTTLING = /^4\d\d[ -]4\.7\.\d{1,3}\b/;

/** Whether a relay's reply about a message is a provider's deferral (a plain 4xx, e.g. a full disk, is not). */
export function isDeferral(err: DeliveryError): boolean {
  const reply = err.responseCode ?? 0;
  if (reply < 400 || reply >= 500 || SESSION_COMMANDS.test(err.command ?? '')) return false;
  return reply === 421 || THROTTLING.test((err.response ?? err.message).trim());
}

export interface Governor {
  /** `undefined`: hand it to the transport now; a time (ms): put it back untried, due then. */
  admit(email: GovernedEmail): Promise<number | undefined>;
  /** The relay's answer about an admitted message: nothing (accepted) or its error. */
  answered(emailId: string, err?: DeliveryError): void;
}

/**
 * The governor per mailbox provider and the warm-up per sender domain (ARCHITECTURE.md
 * "Deliverability"). Rates live in this process: each worker process governs its own share of a
 * group (N processes send up to N times a group's rate), as each has its own relay breaker; sharing
 * them would cost a database round trip per message. The warm-up's daily count is shared in the
 * database, so a cap holds over every process.
 */
export function createGovernor(
  deps: { pool: pg.Pool; config: GovernorConfig; classifyRecipients: boolean; lifetimeMs: number },
  resolver: MxResolver,
): Governor {
  const { config } = deps;
  const rates = new Map(MAILBOX_GROUPS.map((g) => [g, new GroupRate(config)] as const));
  for (const group of MAILBOX_GROUPS) governorRate.set({ group }, config.maxRate);
  const governed = config.enabled && deps.classifyRecipients;
  const groupOf = mxGroups(resolver);
  const warmup = warmupCounter(deps.pool);
  const inFlight = new Map<string, MailboxGroup>();

  const rateOf = (group: MailboxGroup) => rates.get(group) as GroupRate;
  const show = (group: MailboxGroup) => governorRate.set({ group }, rateOf(group).rate);

  return {
    async admit(email) {
      const group = governed ? await groupOf(email.to_email) : 'other';
      if (governed) {
        const later = rateOf(group).admit(Date.now());
        // A slot at the end of its lifetime would fail it untried: it goes now, its last chance.
        const lifetimeEnd = (email.requeued_at ?? email.created_at).getTime() + deps.lifetimeMs;
        if (later !== undefined && later < lifetimeEnd - LAST_CHANCE_MS) {
          governorHeld.inc({ reason: 'rate', group });
          return later;
        }
        inFlight.set(email.id, group);
      }
      const domain = (email.from_email.split('@')[1] ?? '').toLowerCase();
      const holdable = HELD_SOURCES.has(email.source);
      if ((await warmup.admit({ projectId: email.project_id, domain, holdable })) !== 'later') return undefined;
      inFlight.delete(email.id);
      governorHeld.inc({ reason: 'warmup', group });
      return nextDayStart(Date.now());
    },
    answered(emailId, err) {
      const group = inFlight.get(emailId);
      if (!group) return;
      inFlight.delete(emailId);
      const now = Date.now();
      if (!err) {
        if (rateOf(group).accepted(now)) show(group);
        return;
      }
      if (!isDeferral(err)) return;
      governorDeferrals.inc({ group });
      if (rateOf(group).deferred(now)) show(group);
    },
  };
}
