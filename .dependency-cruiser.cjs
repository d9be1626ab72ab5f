/**
 * Module layering of the server, checked by dependency-cruiser (`pnpm deps`, run by .ci/run).
 *
 * ALLOWED says, once, which other modules each `packages/server/src/modules/<name>/` may import
 * at run time (type-only imports compile away and are not counted). Loading this file fails when
 * the allowed graph has a cycle, so modules can only form layers: to let a module use another,
 * add the edge here; if that closes a loop, invert the dependency instead (a registration at the
 * composition root, a callback, a type-only interface) — see ARCHITECTURE.md "Module layers".
 */
const ALLOWED = {
  accounts: ['auth'],
  activity: ['campaigns', 'events', 'retention', 'workflows'],
  analytics: ['events'],
  auth: [],
  'background-jobs': [],
  billing: ['projects'],
  campaigns: [
    'billing',
    'composition',
    'conditions',
    'domains',
    'email-states',
    'emails',
    'engagement',
    'references',
    'topics',
  ],
  'change-feed': [],
  'compat-plunk': ['contacts'],
  'compat-resend': ['contacts', 'domains', 'emails'],
  composition: ['contacts', 'engagement', 'rendering'],
  conditions: [],
  contacts: ['background-jobs', 'event-log', 'references'],
  deliverability: ['contacts', 'dmarc-reports', 'email-states', 'event-log', 'inbound-routes'],
  'dmarc-reports': [],
  domains: ['dmarc-reports', 'sending-governor'],
  'email-states': ['event-log'],
  emails: [
    'billing',
    'composition',
    'contacts',
    'deliverability',
    'domains',
    'email-states',
    'engagement',
    'rendering',
    'sending-governor',
    'templates',
  ],
  engagement: ['contacts', 'email-states', 'event-log', 'rendering', 'topics'],
  events: ['background-jobs', 'change-feed', 'contacts', 'event-log', 'references', 'retention'],
  'event-log': [],
  'event-webhooks': ['background-jobs', 'domains', 'webhooks'],
  'inbound-routes': ['contacts', 'event-log', 'rendering'],
  'inbound-webhooks': ['billing', 'ses-feedback'],
  mcp: ['projects'],
  outbox: [],
  projects: ['accounts', 'auth', 'deliverability', 'domains', 'webhooks'],
  references: [],
  rendering: [],
  retention: [
    'deliverability',
    'dmarc-reports',
    'email-states',
    'event-log',
    'event-webhooks',
    'inbound-routes',
    'workflows',
  ],
  segments: ['conditions', 'contacts', 'event-log', 'references'],
  'sender-check': ['composition', 'contacts', 'deliverability', 'dmarc-reports', 'domains'],
  'sending-governor': [],
  'ses-feedback': ['deliverability'],
  'sign-in': ['accounts', 'auth', 'projects', 'sso'],
  'smtp-submission': ['composition', 'emails', 'projects'],
  sso: ['accounts', 'auth', 'projects'],
  system: ['change-feed', 'email-states', 'emails', 'workflows'],
  templates: ['composition', 'domains', 'references', 'rendering'],
  topics: ['event-log', 'references'],
  uploads: [],
  verify: ['domains'],
  webhooks: [],
  workflows: [
    'billing',
    'composition',
    'conditions',
    'contacts',
    'domains',
    'email-states',
    'emails',
    'engagement',
    'references',
    'rendering',
    'topics',
    'webhooks',
  ],
};

function assertLayered() {
  const state = new Map();
  const visit = (name, path) => {
    if (state.get(name) === 'done') return;
    if (state.get(name) === 'open') {
      const loop = [...path.slice(path.indexOf(name)), name];
      throw new Error(`.dependency-cruiser.cjs: the allowed module dependencies form a cycle: ${loop.join(' -> ')}`);
    }
    state.set(name, 'open');
    for (const dep of ALLOWED[name] ?? []) {
      if (!(dep in ALLOWED)) throw new Error(`.dependency-cruiser.cjs: ${name} allows an unknown module "${dep}"`);
      visit(dep, [...path, name]);
    }
    state.set(name, 'done');
  };
  for (const name of Object.keys(ALLOWED)) visit(name, []);
}
assertLayered();

const MODULES = 'packages/server/src/modules';
const escapeRe = (s) => s.replace(/[-/\\^$*+?.()|[\]{}]/g, '\\$&');

const layerRules = Object.entries(ALLOWED).map(([name, allowed]) => ({
  name: `layers:${name}`,
  comment: `${name} may import ${allowed.length ? allowed.join(', ') : 'no other module'} (ALLOWED in .dependency-cruiser.cjs)`,
  severity: 'error',
  from: { path: `^${escapeRe(MODULES)}/${escapeRe(name)}/` },
  to: {
    path: `^${escapeRe(MODULES)}/[^/]+/`,
    pathNot: `^${escapeRe(MODULES)}/(${[name, ...allowed].map(escapeRe).join('|')})/`,
    dependencyTypesNot: ['type-only'],
  },
}));

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'No run-time import cycle between files of the server or the contract (type-only imports excluded).',
      severity: 'error',
      from: { path: '^packages/(server|contract)/src/' },
      to: { circular: true, dependencyTypesNot: ['type-only'], viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
    {
      name: 'unknown-module',
      comment: 'Every module folder has its line in ALLOWED (.dependency-cruiser.cjs).',
      severity: 'error',
      from: {
        path: `^${escapeRe(MODULES)}/`,
        pathNot: `^${escapeRe(MODULES)}/(${Object.keys(ALLOWED).map(escapeRe).join('|')})/`,
      },
      to: {},
    },
    {
      name: 'no-composition-root',
      comment: 'Modules are wired by the composition roots; they never import them.',
      severity: 'error',
      from: { path: `^${escapeRe(MODULES)}/` },
      to: { path: '^packages/server/src/(main|http/app|jobs/index)\\.ts$' },
    },
    {
      name: 'orm-in-migrator-only',
      comment:
        'MikroORM runs the migrations and nothing else (db/migrator.ts, in a child process): no running process keeps its memory (docs/MEMORY.md).',
      severity: 'error',
      from: { path: '^packages/server/src/', pathNot: '^packages/server/src/db/(migrator\\.ts$|migrations/)' },
      to: { path: '@mikro-orm/' },
    },
    {
      name: 'migrator-loaded-lazily',
      comment:
        'Only the migrator child (and the bench exports) import db/migrator.ts statically; db/migrate.ts loads it on demand.',
      severity: 'error',
      from: { path: '^packages/server/src/', pathNot: '^packages/server/src/(migrate-child|bench-exports)\\.ts$' },
      to: { path: '^packages/server/src/db/migrator\\.ts$', dependencyTypesNot: ['dynamic-import'] },
    },
    ...layerRules,
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '\\.test\\.ts$' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
