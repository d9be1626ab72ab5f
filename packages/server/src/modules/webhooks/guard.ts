import ipaddr from 'ipaddr.js';

/**
 * Which addresses a webhook may connect to: public unicast only. Everything ipaddr.js puts in a
 * special range is refused (private, loopback, link-local, CGNAT, multicast, reserved,
 * documentation, benchmarking, unique-local, site-local…), and IPv6 outside 2000::/3 too.
 */

const GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3');
/** NAT64 well-known prefix: DNS64 hands these out on IPv6-only networks, so the IPv4 inside decides. */
const NAT64 = ipaddr.parseCIDR('64:ff9b::/96');

const LABELS: Record<string, string> = {
  unspecified: 'an unspecified',
  broadcast: 'a broadcast',
  multicast: 'a multicast',
  linkLocal: 'a link-local',
  loopback: 'a loopback',
  carrierGradeNat: 'a carrier-grade NAT',
  private: 'a private',
  reserved: 'a reserved',
  uniqueLocal: 'a unique-local',
  deprecatedSiteLocal: 'a site-local',
  benchmarking: 'a benchmarking',
  ipv4Mapped: 'an IPv4-mapped IPv6',
  rfc6145: 'an IPv4-translated IPv6',
  rfc6052: 'a local-use NAT64',
  '6to4': 'a 6to4',
  teredo: 'a Teredo',
};

const describe = (range: string) => `${LABELS[range] ?? `a special-purpose (${range})`} address`;

function ipv4Reason(ip: ipaddr.IPv4): string | null {
  const range = ip.range();
  return range === 'unicast' ? null : describe(range);
}

function ipv6Reason(ip: ipaddr.IPv6): string | null {
  const range = ip.range();
  if (range === 'unicast') return ip.match(GLOBAL_UNICAST) ? null : 'an IPv6 address outside global unicast (2000::/3)';
  if (ip.match(NAT64)) {
    const [a = 0, b = 0, c = 0, d = 0] = ip.toByteArray().slice(12);
    const embedded = new ipaddr.IPv4([a, b, c, d]);
    const reason = ipv4Reason(embedded);
    return reason ? `a NAT64 address of ${embedded} (${reason})` : null;
  }
  // IPv4-mapped, IPv4-translated, 6to4 and Teredo are refused whatever they embed: no public
  // webhook receiver is reached that way, and the OS may route them straight to the IPv4 inside.
  if (range === 'ipv4Mapped') return `${describe(range)} (${ip.toIPv4Address()})`;
  return describe(range);
}

/** Why a webhook may not connect to `address`, or null when it may (a public unicast address). */
export function forbiddenReason(address: string): string | null {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  if (!ipaddr.isValid(bare)) return 'not an IP address';
  const ip = ipaddr.parse(bare);
  return ip.kind() === 'ipv4' ? ipv4Reason(ip as ipaddr.IPv4) : ipv6Reason(ip as ipaddr.IPv6);
}

export const isForbiddenAddress = (address: string): boolean => forbiddenReason(address) !== null;
