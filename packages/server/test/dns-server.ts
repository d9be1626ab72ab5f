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
  /** Publishes (or with no values, removes) MX records (`"10 mx.example.com"`; `"0 ."` is a null MX). */
  setMx(name: string, ...records: string[]): void;
  /** Publishes (or with no values, removes) NS records. */
  setNs(name: string, ...hosts: string[]): void;
  /** Publishes (or with no target, removes) a CNAME record, answered to CNAME questions for the name. */
  setCname(name: string, target?: string): void;
  /** Answers NXDOMAIN (with an SOA whose minimum is `negativeTtl`) for this name and every name under it. */
  setNxDomain(name: string, nx?: boolean): void;
  /** Never answers questions about this name (a resolver that times out). */
  setSilent(name: string, silent?: boolean): void;
  /** TTL of every record answered from now on (default 1 second). */
  setTtl(seconds: number): void;
  /** How many questions of each `TYPE name` the server was asked. */
  questions(name: string, type: 'A' | 'AAAA' | 'MX' | 'NS' | 'TXT' | 'CNAME'): number;
  close(): Promise<void>;
}

/** A real authoritative DNS server on loopback (UDP) that answers TXT, A and AAAA questions from maps. */
export async function startDnsServer(): Promise<TestDnsServer> {
  const txt = new Map<string, string[]>();
  const addresses = new Map<string, string[]>();
  const mx = new Map<string, string[]>();
  const ns = new Map<string, string[]>();
  const cnames = new Map<string, string>();
  const nxDomains = new Set<string>();
  const silent = new Set<string>();
  const asked = new Map<string, number>();
  let ttl = 1;
  const under = (name: string, set: Set<string>) => [...set].some((d) => name === d || name.endsWith(`.${d}`));
  const server = dns2.createServer({
    udp: true,
    handle: (request, send) => {
      const response = Packet.createResponseFromRequest(request);
      const [question] = request.questions;
      const name = question?.name.toLowerCase() ?? '';
      const typeName = Object.entries(Packet.TYPE).find(([, v]) => v === question?.type)?.[0] ?? '?';
      asked.set(`${typeName} ${name}`, (asked.get(`${typeName} ${name}`) ?? 0) + 1);
      if (under(name, silent)) return;
      if (under(name, nxDomains)) {
        (response.header as unknown as { rcode: number }).rcode = 3;
        const soa = {
          name: question?.name ?? name,
          type: Packet.TYPE.SOA,
          class: Packet.CLASS.IN,
          ttl,
          primary: 'ns.test',
          admin: 'hostmaster.test',
          serial: 1,
          refresh: 3600,
          retry: 600,
          expiration: 86400,
          minimum: ttl,
        };
        response.authorities.push(soa as unknown as (typeof response.authorities)[number]);
        send(response);
        return;
      }
      if (question?.type === Packet.TYPE.MX) {
        for (const record of mx.get(name) ?? []) {
          const [priority, exchange] = record.split(' ');
          const answer = {
            name: question.name,
            type: Packet.TYPE.MX,
            class: Packet.CLASS.IN,
            ttl,
            priority: Number(priority),
            exchange: exchange === '.' ? '' : exchange,
          };
          response.answers.push(answer as unknown as (typeof response.answers)[number]);
        }
      }
      const cname = question?.type === Packet.TYPE.CNAME ? cnames.get(name) : undefined;
      if (cname) {
        const answer = { name: question?.name, type: Packet.TYPE.CNAME, class: Packet.CLASS.IN, ttl, domain: cname };
        response.answers.push(answer as unknown as (typeof response.answers)[number]);
      }
      if (question?.type === Packet.TYPE.NS) {
        for (const host of ns.get(name) ?? []) {
          const answer = { name: question.name, type: Packet.TYPE.NS, class: Packet.CLASS.IN, ttl, ns: host };
          response.answers.push(answer as unknown as (typeof response.answers)[number]);
        }
      }
      for (const value of question?.type === Packet.TYPE.TXT ? (txt.get(name) ?? []) : []) {
        // One TXT record of character-strings of at most 255 bytes each.
        const chunks = value.match(/.{1,255}/g) ?? [''];
        const answer = {
          name: question?.name ?? name,
          type: Packet.TYPE.TXT,
          class: Packet.CLASS.IN,
          ttl,
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
        const answer = { name: question?.name ?? name, type: question?.type, class: Packet.CLASS.IN, ttl, address };
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
    setMx(name, ...records) {
      if (records.length) mx.set(name.toLowerCase(), records);
      else mx.delete(name.toLowerCase());
    },
    setNs(name, ...hosts) {
      if (hosts.length) ns.set(name.toLowerCase(), hosts);
      else ns.delete(name.toLowerCase());
    },
    setCname(name, target) {
      if (target) cnames.set(name.toLowerCase(), target);
      else cnames.delete(name.toLowerCase());
    },
    setNxDomain(name, nx = true) {
      if (nx) nxDomains.add(name.toLowerCase());
      else nxDomains.delete(name.toLowerCase());
    },
    setSilent(name, quiet = true) {
      if (quiet) silent.add(name.toLowerCase());
      else silent.delete(name.toLowerCase());
    },
    setTtl(seconds) {
      ttl = seconds;
    },
    questions: (name, type) => asked.get(`${type} ${name.toLowerCase()}`) ?? 0,
    close: () => server.close(),
  };
}
