import { LRUCache } from 'lru-cache';
import Mailcheck from 'mailcheck';
import { TOP_LEVEL_DOMAINS } from './lists.js';

/** `name+tag@…`: the tag is what providers ignore when delivering. */
export const isPlusAddressed = (local: string) => /^[^+]+\+.*$/.test(local);

/** Popular mailbox providers a misspelling is measured against (mailcheck's defaults and more). */
const POPULAR_DOMAINS = [
  ...Mailcheck.defaultDomains,
  'gmail.com',
  'yahoo.com',
  'hotmail.com',
  'outlook.com',
  'live.com',
  'icloud.com',
  'proton.me',
  'protonmail.com',
  'aol.com',
  'gmx.com',
  'gmx.de',
  'gmx.net',
  'yandex.com',
  'yandex.ru',
  'mail.ru',
  'zoho.com',
  'fastmail.com',
  'hotmail.co.uk',
  'yahoo.co.uk',
  'orange.fr',
  'free.fr',
  'laposte.net',
  'libero.it',
  't-online.de',
  'web.de',
  'comcast.net',
];
const SECOND_LEVEL = [...Mailcheck.defaultSecondLevelDomains, 'gmail', 'icloud', 'proton', 'protonmail', 'yandex'];
/** Every real TLD, and the common country second levels, so a real `.io` is never "corrected". */
const TLDS = [...new Set([...TOP_LEVEL_DOMAINS, ...Mailcheck.defaultTopLevelDomains])];
const TLD_SET = new Set(TLDS);

/** Suggested domain per domain (`''` for none): the suggestion depends on the domain only. */
const suggestions = new LRUCache<string, string>({ max: 50_000 });

/**
 * The likely intended address when the domain looks like a misspelling of a common one. A real
 * TLD is given to mailcheck alone (an exact match, so never "corrected"), which spares comparing
 * it with ~1,500 TLDs; and each domain's answer is kept, as the same domains come back all the time.
 */
export function suggestCorrection(email: string): string | undefined {
  const at = email.lastIndexOf('@');
  const domain = email.slice(at + 1);
  let suggested = suggestions.get(domain);
  if (suggested === undefined) {
    // mailcheck's split: the TLD is everything after the first label (`co.uk` in `acme.co.uk`).
    const tld = domain.slice(domain.indexOf('.') + 1);
    const result = Mailcheck.run({
      email: `x@${domain}`,
      domains: POPULAR_DOMAINS,
      secondLevelDomains: SECOND_LEVEL,
      topLevelDomains: TLD_SET.has(tld) ? [tld] : TLDS,
    });
    suggested = result && result.domain !== domain ? result.domain.toLowerCase() : '';
    suggestions.set(domain, suggested);
  }
  return suggested ? `${email.slice(0, at)}@${suggested}` : undefined;
}

const KEYBOARD_RUNS = [
  'qwert',
  'werty',
  'asdf',
  'sdfg',
  'dfgh',
  'fghj',
  'ghjk',
  'hjkl',
  'zxcv',
  'xcvb',
  'cvbn',
  'vbnm',
];

/**
 * Keyboard mashing or random characters in the local part (tag removed, separators ignored):
 * a keyboard row run, five consonants in a row, or a long string of letters and digits whose
 * character classes alternate like a generated token. Words, names and "john.smith1984" pass.
 */
export function isRandomInput(local: string): boolean {
  const core = (local.split('+')[0] ?? local).toLowerCase();
  const letters = core.replace(/[^a-z0-9]/g, '');
  if (letters.length < 5) return false;
  if (KEYBOARD_RUNS.some((run) => letters.includes(run))) return true;
  if (/[bcdfghjklmnpqrstvwxz]{5,}/.test(letters.replace(/[0-9]/g, ''))) return true;
  const switches = (letters.match(/[a-z][0-9]|[0-9][a-z]/g) ?? []).length;
  if (letters.length >= 10 && switches >= 4) return true;
  const vowels = (letters.match(/[aeiouy]/g) ?? []).length;
  const alpha = letters.replace(/[0-9]/g, '').length;
  return alpha >= 8 && vowels / alpha < 0.15;
}
