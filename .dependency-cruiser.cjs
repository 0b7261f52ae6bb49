/**
 * The layering of src/ (docs/architecture.md "Layers"), checked by dependency-cruiser on the
 * resolved import graph (type-only imports, `export … from`, require and import() included).
 * Run by src/architecture.spec.ts as part of `npm test`, and by `npm run lint:deps`.
 *
 * Layers, lowest first: core → config → common → metrics → queue → accounts → models → providers →
 * chat / structured → app. A folder may import only from layers below it.
 */
const FEATURES = '^src/(chat|structured|queue|health|models|providers|metrics|accounts)/';

module.exports = {
  forbidden: [
    {
      name: 'no-module-cycle',
      comment: 'No import cycle between files.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-folder-cycle',
      comment: 'No cycle between folders either: shared vocabulary belongs in core/, not under one feature.',
      severity: 'error',
      scope: 'folder',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'core-imports-nothing',
      comment: 'core/ is the contract vocabulary every layer shares; it depends on no other part of src/.',
      severity: 'error',
      from: { path: '^src/core/' },
      to: { path: '^src/', pathNot: '^src/core/' },
    },
    {
      name: 'config-reads-only-core',
      comment: 'Settings are parsed before anything else loads.',
      severity: 'error',
      from: { path: '^src/config/' },
      to: { path: '^src/', pathNot: '^src/(config|core)/' },
    },
    {
      name: 'common-stays-below-features',
      comment: 'common/ (guard, errors, SSE writer, logging) never imports a feature.',
      severity: 'error',
      from: { path: '^src/common/' },
      to: { path: `${FEATURES}|^src/app\\.|^src/main\\.ts$` },
    },
    {
      name: 'metrics-stays-below-features',
      severity: 'error',
      from: { path: '^src/metrics/' },
      to: { path: '^src/(chat|structured|queue|health|models|providers|accounts)/' },
    },
    {
      name: 'accounts-stay-below-providers',
      comment:
        "Logins and accounts (the pool, and each family's login code under accounts/provider-*/): adapters import them, they import no adapter, model or route.",
      severity: 'error',
      from: { path: '^src/accounts/' },
      to: { path: '^src/(chat|structured|health|models|providers)/' },
    },
    {
      name: 'models-stay-below-providers',
      comment: 'The catalog resolves ids; the registry (providers/) builds on it, never the reverse.',
      severity: 'error',
      from: { path: '^src/models/' },
      to: { path: '^src/(chat|structured|health|providers)/' },
    },
    {
      name: 'providers-never-import-callers-or-http',
      comment: 'Adapters know nothing of chat, structured or HTTP handling (docs/design/code-shape.md §8).',
      severity: 'error',
      from: { path: '^src/providers/' },
      to: {
        path: '^src/(chat|structured|health)/|^src/common/(http|sse|auth)/|^src/app\\.|^src/main\\.ts$|\\.controller\\.ts$',
      },
    },
    {
      name: 'providers-never-import-express',
      severity: 'error',
      from: { path: '^src/providers/' },
      to: { path: 'node_modules/(express|@types/express|@nestjs/platform-express)/' },
    },
    {
      name: 'families-never-import-each-other',
      comment: 'A family (its adapter in providers/, its logins in accounts/) uses only its own folders.',
      severity: 'error',
      from: { path: '^src/(providers|accounts)/(provider-[^/]+)/' },
      to: { path: '^src/(providers|accounts)/provider-[^/]+/', pathNot: '^src/(providers|accounts)/$2/' },
    },
    {
      name: 'families-import-the-contract-not-the-registry',
      comment:
        'providers/ root holds only what imports the families (module, registry); the interface and contract the families import live in providers/shared/, so no folder loop forms.',
      severity: 'error',
      from: { path: '^src/providers/(provider-[^/]+|shared)/' },
      to: { path: '^src/providers/[^/]+\\.ts$' },
    },
    {
      name: 'callers-use-the-adapter-interface-only',
      comment:
        'chat and structured reach adapters through providers/shared/provider-adapter.ts and the registry, never an adapter folder.',
      severity: 'error',
      from: { path: '^src/(chat|structured)/' },
      to: { path: '^src/(providers|accounts)/provider-[^/]+/' },
    },
    {
      name: 'queue-stays-below-accounts',
      comment:
        'The fair queue and the admissions built on it know the vocabulary, config and metrics: no login, model, adapter or route, so adapters (provider_c process slots) may use it.',
      severity: 'error',
      from: { path: '^src/queue/' },
      to: { path: '^src/(chat|structured|providers|health|models|accounts)/' },
    },
    {
      name: 'chat-and-structured-are-independent',
      severity: 'error',
      from: { path: '^src/(chat|structured)/' },
      to: { path: '^src/(chat|structured)/', pathNot: '^src/$1/' },
    },
  ],
  options: {
    tsConfig: { fileName: 'tsconfig.json' },
    // Type-only imports count: a type pulled from a feature couples the folders as much as a value.
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
    // Specs may reach across layers to build fixtures; the rules are about production code.
    exclude: { path: '\\.spec\\.ts$|__fixtures__' },
    moduleSystems: ['cjs', 'es6'],
  },
};
