import { isIP } from 'node:net';
import { forbiddenReason } from './guard.js';
import type { WebhookOutcome } from './retry.js';

/** The part of `node:dns/promises` `Resolver` a delivery uses (see `createResolver` in domains). */
export interface HostResolver {
  resolve4(hostname: string): Promise<string[]>;
  resolve6(hostname: string): Promise<string[]>;
}

/** Why an address may not be called (null: it may). The default is `forbiddenReason`. */
export type AddressPolicy = (address: string, port: number) => string | null;

export const defaultPolicy: AddressPolicy = (address) => forbiddenReason(address);

/** A failure that ends the attempt with a known outcome. */
export class AttemptFailure extends Error {
  constructor(
    readonly outcome: Exclude<WebhookOutcome, 'success'>,
    message: string,
  ) {
    super(message);
  }
}

export const permanent = (message: string) => new AttemptFailure('permanent', message);

/** Only http(s), and no credentials in the URL (they belong in a header). */
export function parseWebhookUrl(raw: string, base?: URL): URL {
  let url: URL;
  try {
    url = new URL(raw, base);
  } catch {
    throw permanent(`not a valid URL: ${raw.slice(0, 200)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw permanent(`not an http(s) URL: ${url.protocol}`);
  if (url.username || url.password) throw permanent('URLs with credentials are refused; send an authorization header');
  return url;
}

export const hostnameOf = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, '$1');
export const portOf = (url: URL) => Number(url.port) || (url.protocol === 'https:' ? 443 : 80);

/** `localhost.` is `localhost`: a fully qualified name (trailing dot) names the same host. */
const withoutTrailingDots = (hostname: string) => hostname.replace(/\.+$/, '');

/** RFC 6761: `localhost` and its subdomains are loopback by definition, whatever a DNS server says (trailing dots too). */
export function isLoopbackName(fqdn: string): boolean {
  const hostname = withoutTrailingDots(fqdn.toLowerCase());
  return hostname === 'localhost' || hostname.endsWith('.localhost');
}

async function resolveHost(resolver: HostResolver, fqdn: string): Promise<string[]> {
  if (isIP(fqdn)) return [fqdn];
  const hostname = withoutTrailingDots(fqdn);
  if (isLoopbackName(hostname)) return ['127.0.0.1', '::1'];
  const [v4, v6] = await Promise.allSettled([resolver.resolve4(hostname), resolver.resolve6(hostname)]);
  const addresses = [v4, v6].flatMap((r) => (r.status === 'fulfilled' ? r.value : []));
  if (addresses.length === 0) {
    const reason = v4.status === 'rejected' ? (v4.reason as NodeJS.ErrnoException) : undefined;
    throw new AttemptFailure('retryable', `could not resolve ${hostname} (${reason?.code ?? 'no addresses'})`);
  }
  return addresses;
}

/**
 * The one address to connect to for `url`, after every address the name resolves to passed the
 * policy (one private answer is enough to refuse: the attacker may control which one is used).
 * IPv4 is preferred when both families answer.
 */
export async function vetTarget(
  url: URL,
  opts: { resolver: HostResolver; allowPrivateNetworks: boolean; policy: AddressPolicy },
): Promise<string> {
  const hostname = hostnameOf(url);
  const addresses = await resolveHost(opts.resolver, hostname);
  if (!opts.allowPrivateNetworks) {
    for (const address of addresses) {
      const reason = opts.policy(address, portOf(url));
      if (reason) {
        const via = address === hostname ? '' : ` (${hostname} resolves to ${address})`;
        throw permanent(`refused: ${address} is ${reason}${via}; see WEBHOOK_ALLOW_PRIVATE_NETWORKS`);
      }
    }
  }
  return addresses.find((a) => isIP(a) === 4) ?? (addresses[0] as string);
}
