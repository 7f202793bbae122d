/**
 * The planes depend downwards only. Lower → higher imports are errors, and the workflow sandbox may
 * import only the workflow API, pure shared code, the policy evaluator, the workflow contracts and types from
 * activities.
 *
 * From the ground up: `src/` is the library every other folder stands on (shared code, configuration, the stores,
 * the rules, admission, retrieval, and the Temporal client's gateways with the contracts of every workflow);
 * `activities/` and `workflows/` run in the worker; `app/` holds the composition roots (the API server, the
 * worker's wiring, the CLI), the only place that knows them all.
 */
const layers = [
  ['shared', '^src/shared/'],
  ['config', '^src/config/'],
  ['observability', '^src/observability/'],
  ['substrate', '^src/substrate/'],
  ['governance', '^src/governance/'],
  ['ingestion', '^src/ingestion/'],
  ['retrieval', '^src/retrieval/'],
  ['temporal client', '^src/temporal/'],
  ['activities', '^activities/'],
  ['workflows', '^workflows/'],
  ['composition roots', '^app/'],
];

// The rank of each plane: a module may import only planes of lower or equal rank.
const rank = {
  shared: 0,
  config: 1,
  observability: 1,
  substrate: 2,
  governance: 3,
  ingestion: 4,
  retrieval: 4,
  'temporal client': 5,
  activities: 6,
  workflows: 7,
  'composition roots': 8,
};

const forbidden = [];
for (const [from, fromPath] of layers) {
  const higher = layers.filter(([to]) => rank[to] > rank[from]).map(([, p]) => p);
  if (higher.length === 0) continue;
  forbidden.push({
    name: `no-${from.replace(/ /g, '-')}-to-higher-plane`,
    comment: `${from} is a lower plane and must not import a higher one`,
    severity: 'error',
    from: { path: fromPath },
    to: { path: higher.join('|') },
  });
}

forbidden.push(
  {
    name: 'workflow-sandbox',
    comment:
      'at run time, workflows/ may import only @temporalio/workflow, pure shared modules and the policy evaluator',
    severity: 'error',
    from: { path: '^workflows/' },
    to: {
      dependencyTypesNot: ['type-only'],
      pathNot: [
        '^workflows/',
        '^src/shared/',
        '^src/governance/policy/evaluate',
        '^src/temporal/contracts/',
        'node_modules/@temporalio/(workflow|common)/',
        '^activities/',
      ],
    },
  },
  {
    name: 'contracts-fit-the-sandbox',
    comment:
      'workflow contracts are imported by workflows at run time: they may import only the workflow API and types',
    severity: 'error',
    from: { path: '^src/temporal/contracts/' },
    to: {
      dependencyTypesNot: ['type-only'],
      pathNot: ['^src/temporal/contracts/', 'node_modules/@temporalio/(workflow|common)/'],
    },
  },
  {
    name: 'activities-through-ports',
    comment: 'activities reach the databases through the stores and ports of src/, never through a driver of their own',
    severity: 'error',
    from: { path: '^activities/' },
    to: { path: 'node_modules/(mongodb|@elastic/elasticsearch|pg)/' },
  },
  {
    name: 'workflow-imports-only-activity-types',
    comment: 'workflows import activities for their types only',
    severity: 'error',
    from: { path: '^workflows/' },
    to: { path: '^activities/', dependencyTypesNot: ['type-only'] },
  },
  {
    name: 'console-through-the-api',
    comment:
      'the consoles reach the product through the HTTP API only; of its code they bundle just the pure offline verifiers',
    severity: 'error',
    from: { path: '^console/' },
    to: {
      path: '^(src|activities|workflows|policies)/',
      pathNot: [
        '^src/shared/',
        '^src/governance/certificates/(certificate|certificate-verify|certificate-schema|verification-key)\\.ts$',
        '^src/governance/audit/audit-chain\\.ts$',
        // The log verifiers; their signed-note and cosignature checks are swapped for WebCrypto ones in the bundle.
        '^src/governance/audit/log-tree/(checkpoint|consistency-check|log-anchor|merkle-tree|merkle-verify|signed-note-format)\\.ts$',
        '^src/governance/audit/witness/cosignature-format\\.ts$',
        '^src/governance/certificates/anchored-certificate\\.ts$',
        '^src/governance/auth/principal\\.ts$',
      ],
    },
  },
  {
    name: 'no-circular',
    severity: 'error',
    from: {},
    to: { circular: true },
  },
);

module.exports = {
  forbidden,
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
