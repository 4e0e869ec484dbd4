/**
 * The import rules `npm run lint` checks (docs/architecture.md, "Layers").
 *
 * `shared/` is five layers. A folder (or a top-level file) may import its own layer and the
 * layers below it, never one above; folders never import each other in a circle; `shared/`
 * never imports `api/` or `workers/`. A new folder of `shared/` must be given a layer here.
 *
 * The folder-circle check sees `api/` as one folder holding all its subfolders, so a circle
 * between a top-level file of `api/` or `workers/` and one of their folders is invisible to it.
 * Those files are either declarations the folders read (`LEAF_FILES`), which import no folder, or
 * the composition root, which no folder imports; a circle through them cannot form.
 */
const LEAF_FILES = ['api/deps.ts', 'workers/mutation-options.ts'];
const LAYERS = [
  {
    name: 'foundation',
    units: [
      'errors.ts',
      'ids.ts',
      'dates.ts',
      'digest.ts',
      'wire.ts',
      'timeout.ts',
      'logger.ts',
      'redis.ts',
      'heartbeat.ts',
      'csv.ts',
      'config/',
      'db/',
      'runtime/',
      'ratelimit/',
      'idempotency/',
      'crypto/',
      'net/',
    ],
  },
  { name: 'identity-and-access', units: ['auth/', 'workspaces/', 'staff/', 'access/', 'mcp/'] },
  { name: 'engine-and-ledger', units: ['adapters/', 'suppliers/', 'queues/', 'outbox/', 'events/', 'wallet/', 'assets/'] },
  {
    name: 'domains',
    units: [
      'campaigns/',
      'creatives/',
      'plans/',
      'bookings/',
      'delivery/',
      'audiences/',
      'measurement/',
      'studies/',
      'optimizations/',
      'personas/',
      'sessions/',
      'billing/',
      'pixel/',
      'agent/',
      'webhooks/',
      'reconciliation/',
      'rules/',
    ],
  },
  { name: 'read-models', units: ['reporting/', 'readiness/'] },
];

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** A unit's modules: a folder's files at any depth, or the one top-level file. */
const unitPath = (unit) => `^shared/${escape(unit)}${unit.endsWith('/') ? '' : '$'}`;
const anyOf = (units) => units.map(unitPath).join('|');
const describe = (units) => units.join(', ');

const layerRules = LAYERS.flatMap((layer, i) => {
  const above = LAYERS.slice(i + 1).flatMap((l) => l.units);
  const folders = layer.units.filter((u) => u.endsWith('/'));
  const files = layer.units.filter((u) => !u.endsWith('/'));
  const rules = [];
  if (above.length) {
    rules.push({
      name: `layer-${layer.name}`,
      comment: `shared/ layer '${layer.name}' (${describe(layer.units)}) may import only its own layer and those below it, never ${describe(above)}.`,
      severity: 'error',
      from: { path: anyOf(layer.units) },
      to: { path: anyOf(above) },
    });
  }
  if (files.length && folders.length) {
    // A top-level file importing a folder of its own layer could close a circle that the
    // folder-level check cannot see (the file is no folder of its own).
    rules.push({
      name: `top-level-files-of-${layer.name}`,
      comment: `Top-level files of '${layer.name}' (${describe(files)}) import only other top-level files and lower layers, not ${describe(folders)}.`,
      severity: 'error',
      from: { path: anyOf(files) },
      to: { path: anyOf(folders) },
    });
  }
  return rules;
});

const allUnits = anyOf(LAYERS.flatMap((l) => l.units));
const anyFile = (files) => files.map((f) => `^${escape(f)}$`).join('|');

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-folder-cycle',
      comment:
        'Folders of api/, workers/ and shared/ must not import each other in a circle: cut it by moving code to the folder that owns it, or by inverting the dependency.',
      severity: 'error',
      scope: 'folder',
      from: { path: '^(api|workers|shared)/' },
      to: { circular: true },
    },
    {
      name: 'no-circle-through-top-level-files',
      comment:
        'A folder of api/ or workers/ imports no top-level file of its tree but the declarations listed in LEAF_FILES (the composition root imports the folders, never the reverse).',
      severity: 'error',
      from: { path: '^(api|workers)/[^/]+/' },
      to: { path: '^$1/[^/]+$', pathNot: anyFile(LEAF_FILES) },
    },
    {
      name: 'leaf-files-import-no-folder',
      comment: `The declarations folders read (${LEAF_FILES.join(', ')}) import no folder of their tree, so no folder can reach itself through them.`,
      severity: 'error',
      from: { path: anyFile(LEAF_FILES) },
      to: { path: '^(api|workers)/[^/]+/' },
    },
    {
      name: 'no-module-cycle',
      comment: 'Modules must not import each other in a circle.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'shared-imports-neither-api-nor-workers',
      comment: 'shared/ holds the rules both processes use; it never imports api/ or workers/.',
      severity: 'error',
      from: { path: '^shared/' },
      to: { path: '^(api|workers)/' },
    },
    {
      name: 'api-and-workers-apart',
      comment: 'api/ and workers/ are separate processes; what both need lives in shared/.',
      severity: 'error',
      from: { path: '^(api|workers)/' },
      to: { path: '^(api|workers)/', pathNot: '^$1/' },
    },
    {
      name: 'every-shared-module-has-a-layer',
      comment: 'A new folder or top-level file of shared/ must be given a layer in .dependency-cruiser.cjs (and docs/architecture.md).',
      severity: 'error',
      from: {},
      to: { path: '^shared/', pathNot: allUnits },
    },
    ...layerRules,
  ],
  options: {
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)node_modules/' },
  },
};
