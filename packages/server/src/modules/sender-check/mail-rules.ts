import { composeMessage } from '../composition/public.js';
import type { ContactRow } from '../contacts/public.js';
import type { ProjectHealth } from '../deliverability/public.js';
import type { RelayTarget, Rule } from './dns-rules.js';

/** Gmail's and Yahoo's bulk sender rules: keep spam complaints under 0.1%, never reach 0.3%. */
export const COMPLAINT_RATE = { recommended: 0.001, limit: 0.003 };
/**
 * Neither publishes a bounce limit. Pigeon warns from 2% (the line ESPs such as Mailchimp and
 * SendGrid draw for a clean list) and fails from 5% (where Amazon SES puts an account under review).
 */
export const BOUNCE_RATE = { recommended: 0.02, limit: 0.05 };

const pct = (x: number) => `${(x * 100).toFixed(2)}%`;

/**
 * Composes a campaign (MARKETING) message as campaign delivery does, for a stand-in contact, and
 * reads its headers: the rule passes only if composition really adds RFC 8058 one-click headers.
 */
export function oneClickUnsubscribeRule(settings: { publicUrl: string; linkSecret: string }): Rule {
  const contact: ContactRow = {
    id: '00000000-0000-0000-0000-000000000000',
    project_id: '00000000-0000-0000-0000-000000000000',
    email: 'reader@example.com',
    subscribed: true,
    data: {},
    created_at: new Date(0),
    updated_at: new Date(0),
  };
  const content = { subject: 'Check', html: '<p>News</p>', type: 'MARKETING' as const };
  const { headers } = composeMessage(content, contact, {}, '00000000-0000-0000-0000-000000000000', {
    ...settings,
    tracked: false,
    unsubscribeMailbox: null,
  });
  const target = /<(https?:\/\/[^>]+)>/.exec(headers['List-Unsubscribe'] ?? '')?.[1];
  if (!target || headers['List-Unsubscribe-Post'] !== 'List-Unsubscribe=One-Click') {
    return {
      id: 'one_click_unsubscribe',
      status: 'fail',
      detail: 'Campaign mail is composed without List-Unsubscribe and List-Unsubscribe-Post (RFC 8058)',
      fix: 'Campaign composition must add both headers; this is a defect of this Pigeon build',
    };
  }
  if (!target.startsWith('https://')) {
    return {
      id: 'one_click_unsubscribe',
      status: 'warn',
      detail: `Campaign mail carries one-click headers, but the URL is not HTTPS (${new URL(target).origin})`,
      fix: 'Serve Pigeon over HTTPS and set PUBLIC_URL to its https:// address: Gmail takes one-click unsubscribe over HTTPS only',
    };
  }
  return {
    id: 'one_click_unsubscribe',
    status: 'pass',
    detail: 'Campaign mail carries List-Unsubscribe (HTTPS) and List-Unsubscribe-Post: List-Unsubscribe=One-Click',
    fix: null,
  };
}

function rateRule(
  id: 'complaint_rate' | 'bounce_rate',
  rate: number,
  health: ProjectHealth,
  limits: { recommended: number; limit: number },
  fix: string,
): Rule {
  const over = `over the project's last ${health.sample} messages`;
  if (health.sample < health.minimumSample) {
    const detail = `${pct(rate)} ${over}: too few to judge (the health window counts from ${health.minimumSample})`;
    return { id, status: 'pass', detail, fix: null };
  }
  const detail = `${pct(rate)} ${over}`;
  if (rate >= limits.limit) {
    return { id, status: 'fail', detail: `${detail}, at or above ${pct(limits.limit)}`, fix };
  }
  if (rate >= limits.recommended) {
    return { id, status: 'warn', detail: `${detail}, above the recommended ${pct(limits.recommended)}`, fix };
  }
  return { id, status: 'pass', detail: `${detail}, under ${pct(limits.recommended)}`, fix: null };
}

/** The project health window's rates against Gmail's and Yahoo's thresholds (complaints) and Pigeon's (bounces). */
export function rateRules(health: ProjectHealth): Rule[] {
  return [
    rateRule(
      'complaint_rate',
      health.complaintRate,
      health,
      COMPLAINT_RATE,
      'Send only to people who asked for your mail, make unsubscribing easy, and lower the frequency to disengaged contacts',
    ),
    rateRule(
      'bounce_rate',
      health.bounceRate,
      health,
      BOUNCE_RATE,
      'Verify addresses before sending (POST /v1/verify), use double opt-in, and stop sending to contacts that never engage',
    ),
  ];
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '::1', '[::1]']);

function relayTls(relay: RelayTarget): { status: Rule['status']; text: string } {
  if (relay.kind === 'ses') return { status: 'pass', text: `${relay.name}: Amazon SES over HTTPS` };
  if (relay.kind === 'outbox') return { status: 'warn', text: `${relay.name}: the local outbox (no mail leaves)` };
  const url = new URL(relay.url ?? '');
  const option = (name: string) => url.searchParams.get(name)?.toLowerCase() === 'true';
  if (url.protocol === 'smtps:' || option('secure')) {
    return { status: 'pass', text: `${relay.name}: implicit TLS (${url.host})` };
  }
  if (option('requireTLS') && !option('ignoreTLS')) {
    return { status: 'pass', text: `${relay.name}: STARTTLS required (${url.host})` };
  }
  const local = LOOPBACK.has(url.hostname);
  const how = option('ignoreTLS') ? 'TLS turned off (ignoreTLS)' : 'STARTTLS only if the relay offers it';
  return {
    status: local ? 'warn' : 'fail',
    text: `${relay.name}: ${how} (${url.host}${local ? ', on this host' : ''})`,
  };
}

/** Mail to the relay must be encrypted: implicit TLS (`smtps://`) or STARTTLS required (`?requireTLS=true`). */
export function relayTlsRule(relays: RelayTarget[]): Rule {
  const checked = relays.map(relayTls);
  const status = checked.some((c) => c.status === 'fail')
    ? 'fail'
    : checked.some((c) => c.status === 'warn')
      ? 'warn'
      : 'pass';
  return {
    id: 'relay_tls',
    status,
    detail: checked.map((c) => c.text).join('; '),
    fix:
      status === 'pass'
        ? null
        : 'Use smtps:// (implicit TLS, port 465) or add ?requireTLS=true to the SMTP URL, so mail and credentials never cross the network in clear',
  };
}
