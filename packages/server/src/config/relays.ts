import { type Env, RELAY_NAME, type RelayConfig, type RelayRoutes } from './schema.js';

/**
 * The relays and their routes. Without `RELAYS`, one relay named for its kind, as before there were
 * several: `ses` (SES_REGION), `smtp` (SMTP_URL) or `outbox`. With `RELAYS`, each `name=smtp://…` or
 * `name=ses`; a route not given is every relay in `RELAYS` order. Problems are pushed to `problems`.
 */
export function relayList(e: Env, problems: string[]): { relays: RelayConfig[]; routes: RelayRoutes } {
  const relays = e.RELAYS ? parseRelays(e, problems) : [singleRelay(e)];
  const names = relays.map((r) => r.name);
  const route = (variable: 'RELAY_ROUTE_TRANSACTIONAL' | 'RELAY_ROUTE_CAMPAIGN') => {
    const given = e[variable]?.split(',').map((n) => n.trim());
    if (!given) return names;
    const unknown = given.filter((n) => !names.includes(n));
    if (unknown.length) {
      problems.push(`${variable}: no relay named ${unknown.join(', ')} (the relays are ${names.join(', ')})`);
    }
    return [...new Set(given)];
  };
  return {
    relays,
    routes: { transactional: route('RELAY_ROUTE_TRANSACTIONAL'), campaign: route('RELAY_ROUTE_CAMPAIGN') },
  };
}

function singleRelay(e: Env): RelayConfig {
  if (e.SES_REGION) return { name: 'ses', kind: 'ses' };
  if (e.SMTP_URL) return { name: 'smtp', kind: 'smtp', url: e.SMTP_URL };
  return { name: 'outbox', kind: 'outbox' };
}

function parseRelays(e: Env, problems: string[]): RelayConfig[] {
  if (e.SMTP_URL) problems.push('SMTP_URL and RELAYS: name the SMTP relay in RELAYS instead (name=smtp://…)');
  const relays: RelayConfig[] = [];
  for (const entry of (e.RELAYS ?? '').split(/[\s,]+/).filter(Boolean)) {
    const at = entry.indexOf('=');
    const name = entry.slice(0, at);
    const target = entry.slice(at + 1);
    if (at < 1 || !RELAY_NAME.test(name)) {
      problems.push(
        `RELAYS: "${entry.split('=')[0]}" is not a relay name (name=smtp://… or name=ses; a-z, 0-9, - and _)`,
      );
    } else if (relays.some((r) => r.name === name)) {
      problems.push(`RELAYS: the name ${name} is given twice`);
    } else if (target === 'ses') {
      if (!e.SES_REGION) problems.push(`RELAYS: ${name}=ses needs SES_REGION`);
      relays.push({ name, kind: 'ses' });
    } else if (/^smtps?:\/\/[^/]/.test(target)) {
      relays.push({ name, kind: 'smtp', url: target });
    } else {
      problems.push(`RELAYS: ${name} must be an smtp:// or smtps:// URL, or ses`);
    }
  }
  if (relays.filter((r) => r.kind === 'ses').length > 1) problems.push('RELAYS: at most one relay is ses');
  if (relays.length === 0 && problems.length === 0) problems.push('RELAYS: name at least one relay');
  return relays;
}
