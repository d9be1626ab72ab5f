// Module hooks for import-cost.mjs: reports every npm package the server's bundle imports, in the
// order it is first resolved (the parent is a file of packages/server/dist).
import { isBuiltin } from 'node:module';

let port;
let serverDist;
const seen = new Set();

export function initialize(data) {
  port = data.port;
  serverDist = data.serverDist;
}

export async function resolve(specifier, context, nextResolve) {
  const result = await nextResolve(specifier, context);
  const bare = !/^(\.|\/|node:|file:|data:)/.test(specifier) && !isBuiltin(specifier);
  if (bare && context.parentURL?.startsWith(serverDist) && !seen.has(specifier)) {
    seen.add(specifier);
    port.postMessage({ specifier, url: result.url });
  }
  return result;
}
