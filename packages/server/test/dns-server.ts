import dns2 from 'dns2';
import ipaddr from 'ipaddr.js';

const { Packet } = dns2;

export interface TestDnsServer {
  /** `127.0.0.1:<port>`, for DNS_SERVERS. */
  address: string;
  /** Publishes (or with no values, removes) the TXT records of a name. */
  setTxt(name: string, ...values: string[]): void;
  /** Publishes (or with no values, removes) the A and AAAA records of a name. */
  setAddresses(name: string, ...addresses: string[]): void;
  close(): Promise<void>;
}

/** A real authoritative DNS server on loopback (UDP) that answers TXT, A and AAAA questions from maps. */
export async function startDnsServer(): Promise<TestDnsServer> {
  const txt = new Map<string, string[]>();
  const addresses = new Map<string, string[]>();
  const server = dns2.createServer({
    udp: true,
    handle: (request, send) => {
      const response = Packet.createResponseFromRequest(request);
      const [question] = request.questions;
      const name = question?.name.toLowerCase() ?? '';
      for (const value of question?.type === Packet.TYPE.TXT ? (txt.get(name) ?? []) : []) {
        // One TXT record of character-strings of at most 255 bytes each.
        const chunks = value.match(/.{1,255}/g) ?? [''];
        const answer = {
          name: question?.name ?? name,
          type: Packet.TYPE.TXT,
          class: Packet.CLASS.IN,
          ttl: 1,
          data: chunks,
        };
        response.answers.push(answer as unknown as (typeof response.answers)[number]);
      }
      const family = question?.type === Packet.TYPE.A ? 'ipv4' : question?.type === Packet.TYPE.AAAA ? 'ipv6' : null;
      for (const ip of (family && addresses.get(name)) || []) {
        const parsed = ipaddr.parse(ip);
        if (parsed.kind() !== family) continue;
        // dns2 encodes AAAA only from the full eight-group form.
        const address = family === 'ipv6' ? parsed.toNormalizedString() : parsed.toString();
        const answer = { name: question?.name ?? name, type: question?.type, class: Packet.CLASS.IN, ttl: 1, address };
        response.answers.push(answer as unknown as (typeof response.answers)[number]);
      }
      send(response);
    },
  });
  await server.listen({ udp: { port: 0, address: '127.0.0.1' } });
  const port = (server.addresses() as { udp: { port: number } }).udp.port;
  return {
    address: `127.0.0.1:${port}`,
    setTxt(name, ...values) {
      if (values.length) txt.set(name.toLowerCase(), values);
      else txt.delete(name.toLowerCase());
    },
    setAddresses(name, ...ips) {
      if (ips.length) addresses.set(name.toLowerCase(), ips);
      else addresses.delete(name.toLowerCase());
    },
    close: () => server.close(),
  };
}
