// The DNS server of the verify scenario: a real authoritative server (dns2, from packages/server)
// on loopback UDP, in its own process so its CPU is not Pigeon's. It answers every name from a
// rule rather than a zone file: names under `nx.` (e.g. `nx.gone42.example`) are NXDOMAIN; every
// other name has an MX (`10 mx.<name>`), an A (192.0.2.1), an NS and no AAAA, with a one-hour TTL.
// GET-free: it prints `dns-server listening on 127.0.0.1:<port>` and exits on SIGTERM.
import { createRequire } from 'node:module';

const require = createRequire(new URL('../../packages/server/package.json', import.meta.url));
const dns2 = require('dns2');
const { Packet } = dns2;
const TTL = 3600;

const server = dns2.createServer({
  udp: true,
  handle(request, send) {
    const response = Packet.createResponseFromRequest(request);
    const [question] = request.questions;
    const name = question?.name ?? '';
    const base = { name, class: Packet.CLASS.IN, ttl: TTL };
    if (name.toLowerCase().startsWith('nx.')) {
      response.header.rcode = 3;
    } else if (question?.type === Packet.TYPE.MX) {
      response.answers.push({ ...base, type: Packet.TYPE.MX, priority: 10, exchange: `mx.${name}` });
    } else if (question?.type === Packet.TYPE.A) {
      response.answers.push({ ...base, type: Packet.TYPE.A, address: '192.0.2.1' });
    } else if (question?.type === Packet.TYPE.NS) {
      response.answers.push({ ...base, type: Packet.TYPE.NS, ns: 'ns1.example' });
    }
    send(response);
  },
});
await server.listen({ udp: { port: 0, address: '127.0.0.1' } });
console.log(`dns-server listening on 127.0.0.1:${server.addresses().udp.port}`);
process.on('SIGTERM', () => server.close().then(() => process.exit(0)));
