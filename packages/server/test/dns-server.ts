import dns2 from 'dns2';

const { Packet } = dns2;

export interface TestDnsServer {
  /** `127.0.0.1:<port>`, for DNS_SERVERS. */
  address: string;
  /** Publishes (or with no values, removes) the TXT records of a name. */
  setTxt(name: string, ...values: string[]): void;
  close(): Promise<void>;
}

/** A real authoritative DNS server on loopback (UDP) that answers TXT questions from a map. */
export async function startDnsServer(): Promise<TestDnsServer> {
  const txt = new Map<string, string[]>();
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
    close: () => server.close(),
  };
}
