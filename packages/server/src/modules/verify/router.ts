import { contract } from '@pigeon/contract';
import { initServer } from '@ts-rest/express';
import type { AppDeps } from '../../deps.js';
import { CachingResolver } from '../../kit/caching-resolver.js';
import { verifyAddress } from './service.js';

const s = initServer();

export const createVerifyRouter = (deps: AppDeps) => {
  // One resolver (and DNS cache) per process, shared by every request.
  const verifier = {
    resolver: new CachingResolver({
      servers: deps.config.dns.servers,
      timeoutMs: deps.config.verify.dnsTimeoutMs,
      maxEntries: deps.config.verify.dnsCacheSize,
    }),
  };
  return s.router(contract.verify, {
    verify: async ({ body }) => ({
      status: 200,
      body: { success: true, data: await verifyAddress(verifier, body.email) },
    }),
  });
};
