/**
 * Module layering of the server, checked by dependency-cruiser (`pnpm deps`, run by .ci/run).
 *
 * ALLOWED says, once, which other modules each `packages/server/src/modules/<name>/` may import,
 * type-only imports included (a type is a dependency too, and the drawn house shows it). Loading
 * this file fails when the allowed graph has a cycle, so modules can only form layers: to let a
 * module use another, add the edge here; if that closes a loop, invert the dependency instead (a
 * registration at the composition root, a callback, an interface the lower module declares) —
 * see ARCHITECTURE.md "Module layers". FLOORS (below) layers the rest of src/ the same way.
 */
const ALLOWED = {
  accounts: ['auth'],
  activity: ['campaigns', 'event-log', 'events', 'workflows'],
  analytics: ['change-feed', 'events'],
  auth: [],
  'background-jobs': [],
  billing: ['projects', 'webhook-receipts'],
  campaigns: [
    'billing',
    'composition',
    'conditions',
    'contacts',
    'domains',
    'email-states',
    'emails',
    'engagement',
    'references',
    'topics',
  ],
  'change-feed': [],
  'compat-plunk': ['contacts'],
  'compat-resend': ['contacts', 'domains', 'emails', 'idempotency'],
  composition: ['contacts', 'engagement', 'rendering'],
  conditions: ['references'],
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
    'idempotency',
    'rendering',
    'sending-governor',
    'templates',
  ],
  engagement: ['contacts', 'email-states', 'event-log', 'rendering', 'topics'],
  'event-log': [],
  'event-webhooks': ['background-jobs', 'change-feed', 'domains', 'webhooks'],
  events: [
    'background-jobs',
    'change-feed',
    'contacts',
    'event-log',
    'idempotency',
    'projects',
    'rate-limits',
    'references',
  ],
  idempotency: [],
  'inbound-routes': ['contacts', 'event-log', 'rendering'],
  'inbound-webhooks': ['billing', 'ses-feedback'],
  mcp: ['projects'],
  outbox: ['accounts'],
  projects: ['accounts', 'auth', 'deliverability', 'domains', 'idempotency', 'rate-limits', 'webhooks'],
  'rate-limits': [],
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
  segments: ['change-feed', 'conditions', 'contacts', 'event-log', 'references'],
  'sender-check': ['composition', 'contacts', 'deliverability', 'dmarc-reports', 'domains'],
  'sending-governor': [],
  'ses-feedback': ['deliverability', 'webhook-receipts'],
  'sign-in': ['accounts', 'auth', 'projects', 'sso'],
  'smtp-submission': ['composition', 'emails', 'idempotency', 'projects', 'rate-limits'],
  sso: ['accounts', 'auth', 'projects'],
  system: ['change-feed', 'email-states', 'emails', 'workflows'],
  templates: ['composition', 'contacts', 'domains', 'references', 'rendering'],
  topics: ['event-log', 'references'],
  uploads: [],
  verify: ['domains'],
  'webhook-receipts': [],
  webhooks: [],
  workflows: [
    'billing',
    'change-feed',
    'composition',
    'conditions',
    'contacts',
    'domains',
    'email-states',
    'emails',
    'engagement',
    'references',
    'rendering',
    'templates',
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

/**
 * The floors of packages/server/src, lowest first. A file may import its own floor and the floors
 * below it, never one above, type-only imports included (a type names what its file depends on as
 * much as a call does): the drawn house has no arrow running back up. Modules are one floor, layered
 * among themselves by ALLOWED. Every file of src/ stands on one floor (rule `unknown-floor`).
 */
const FLOORS = [
  { name: 'ground', paths: ['config/', 'logger.ts', 'version.ts', 'startup-heap.ts'] },
  { name: 'kit', paths: ['kit/'] },
  { name: 'db', paths: ['db/'] },
  { name: 'metrics', paths: ['metrics/'] },
  { name: 'mail', paths: ['mail/'] },
  { name: 'deps', paths: ['deps.ts'] },
  { name: 'jobs', paths: ['jobs/'] },
  { name: 'modules', paths: ['modules/'] },
  { name: 'front door', paths: ['http/'] },
  { name: 'job list', paths: ['job-list/'] },
  {
    name: 'composition root',
    paths: ['main.ts', 'supervisor.ts', 'admin-commands.ts', 'migrate-child.ts', 'bench-exports.ts'],
  },
  { name: 'entry points', paths: ['cli.ts', 'index.ts'] },
];

const SRC = 'packages/server/src';
const escapeRe = (s) => s.replace(/[-/\\^$*+?.()|[\]{}]/g, '\\$&');
const floorPath = (paths) =>
  `^${escapeRe(SRC)}/(${paths.map((p) => (p.endsWith('/') ? escapeRe(p) : `${escapeRe(p)}$`)).join('|')})`;

const floorRules = FLOORS.slice(0, -1).map((floor, i) => ({
  name: `floors:${floor.name}`,
  comment: `${floor.name} (${floor.paths.join(', ')}) imports only its own floor and those below it (FLOORS in .dependency-cruiser.cjs)`,
  severity: 'error',
  from: { path: floorPath(floor.paths) },
  to: { path: floorPath(FLOORS.slice(i + 1).flatMap((f) => f.paths)) },
}));

const MODULES = 'packages/server/src/modules';

const layerRules = Object.entries(ALLOWED).map(([name, allowed]) => ({
  name: `layers:${name}`,
  comment: `${name} may import ${allowed.length ? allowed.join(', ') : 'no other module'} (ALLOWED in .dependency-cruiser.cjs)`,
  severity: 'error',
  from: { path: `^${escapeRe(MODULES)}/${escapeRe(name)}/` },
  to: {
    path: `^${escapeRe(MODULES)}/[^/]+/`,
    pathNot: `^${escapeRe(MODULES)}/(${[name, ...allowed].map(escapeRe).join('|')})/`,
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
      to: { path: '^packages/server/src/(main|http/app|job-list/index)\\.ts$' },
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
    {
      name: 'unknown-floor',
      comment: 'Every file of packages/server/src stands on a floor (FLOORS in .dependency-cruiser.cjs).',
      severity: 'error',
      from: { path: `^${escapeRe(SRC)}/`, pathNot: floorPath(FLOORS.flatMap((f) => f.paths)) },
      to: {},
    },
    {
      name: 'faces',
      comment:
        'A module imports another module only through its public face, modules/<name>/public.ts (ARCHITECTURE.md "Module faces").',
      severity: 'error',
      from: { path: `^${escapeRe(MODULES)}/([^/]+)/` },
      to: {
        path: `^${escapeRe(MODULES)}/[^/]+/`,
        pathNot: [`^${escapeRe(MODULES)}/$1/`, `^${escapeRe(MODULES)}/[^/]+/public\\.ts$`],
      },
    },
    ...floorRules,
    ...layerRules,
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '\\.test\\.ts$' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
