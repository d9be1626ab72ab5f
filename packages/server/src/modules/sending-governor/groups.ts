import type { MailboxGroup } from '../../metrics/registry.js';

/** MX host suffixes of each mailbox provider; anything else is `other`. */
const SUFFIXES: Array<[MailboxGroup, string[]]> = [
  ['gmail', ['google.com', 'googlemail.com']],
  ['microsoft', ['outlook.com', 'protection.outlook.com', 'hotmail.com']],
  ['yahoo', ['yahoodns.net', 'yahoo.com']],
  ['apple', ['icloud.com', 'me.com', 'apple.com']],
];

const under = (host: string, suffix: string) => host === suffix || host.endsWith(`.${suffix}`);

/** The group of one MX host name (`alt1.gmail-smtp-in.l.google.com` → gmail). */
export function groupOfMxHost(host: string): MailboxGroup {
  const name = host.toLowerCase().replace(/\.$/, '');
  for (const [group, suffixes] of SUFFIXES) if (suffixes.some((s) => under(name, s))) return group;
  return 'other';
}

/** The group of a domain's MX records (`"10 host"`): its most preferred host's. */
export function groupOfMxRecords(records: string[]): MailboxGroup {
  const hosts = records
    .map((r) => r.split(' '))
    .filter(([, host]) => host && host !== '.')
    .sort(([a], [b]) => Number(a) - Number(b));
  const best = hosts[0]?.[1];
  return best ? groupOfMxHost(best) : 'other';
}
