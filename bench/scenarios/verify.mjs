/**
 * POST /v1/verify with the secret key, 50 connections, warm DNS cache: addresses over 500
 * domains (plus common providers, a disposable one, typos and non-existent domains), each domain
 * verified once in setup so its MX, A, AAAA and NS answers are cached (one-hour TTL on the
 * scenario's own DNS server, `services/dns-server.mjs`). What is measured is Pigeon's own work:
 * the key check, the offline lists and heuristics, the typo suggester, the cache lookups.
 * Baseline: bare node:http POST.
 */
const DOMAINS = 500;
const EXTRA = ['gmail.com', 'outlook.com', 'mailinator.com', 'gmial.com', 'hotmail.con', 'duck.com'];

const TLDS = ['com', 'io', 'de', 'co.uk', 'fr'];
const domainOf = (i) => (i % 50 === 0 ? `nx.gone${i}.example` : `company${i}.${TLDS[i % TLDS.length]}`);
const LOCAL_PARTS = ['jane.doe', 'john+news', 'xkqzvwpt', 'info', 'marie-claire', 'a8f3k2j9d7x1'];

export default {
  name: 'verify',
  description: 'POST /v1/verify, warm DNS cache, 500+ domains, mixed addresses',
  baseline: 'bare-http',
  dnsServer: true,
  pigeonEnv: ({ dnsServer }) => ({ DNS_SERVERS: dnsServer.address }),
  target: { metric: 'reqPerSec', min: 2000, unit: 'req/s', label: '≥ 2,000 verifications/s (warm cache)' },
  async setup(ctx) {
    const domains = [...Array.from({ length: DOMAINS }, (_, i) => domainOf(i)), ...EXTRA];
    const warm = async (domain) => {
      const res = await ctx.fetch('/v1/verify', {
        method: 'POST',
        headers: ctx.auth,
        json: { email: `warm@${domain}` },
      });
      if (res.status !== 200) throw new Error(`verify warm-up answered ${res.status}: ${await res.text()}`);
      return (await res.json()).data;
    };
    for (let i = 0; i < domains.length; i += 20) await Promise.all(domains.slice(i, i + 20).map(warm));
    const typo = await warm('gmial.com');
    if (!typo.isTypo) throw new Error('warm-up: gmial.com was not recognised as a typo');
    const gone = await warm(domainOf(0));
    if (gone.valid || gone.domainExists !== false) throw new Error('warm-up: an NXDOMAIN domain came back valid');
    let n = 0;
    ctx.state.nextBody = () => {
      n++;
      return JSON.stringify({ email: `${LOCAL_PARTS[n % LOCAL_PARTS.length]}@${domains[n % domains.length]}` });
    };
  },
  request: (ctx) => ({
    requests: [
      {
        method: 'POST',
        path: '/v1/verify',
        headers: { ...ctx.auth, 'content-type': 'application/json' },
        setupRequest: (req) => ({ ...req, body: ctx.state.nextBody() }),
      },
    ],
  }),
};
