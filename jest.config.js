// Two projects: unit specs beside the code, e2e specs in test/ that boot the app on a random
// loopback port. Type checking is done once by `tsc --noEmit` in `npm test`, so ts-jest only
// transpiles (isolatedModules) to keep the suite fast on a 2-core machine.
const transform = {
  '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json', diagnostics: false }],
};
// NestJS 12 and several other dependencies ship ES modules only. The gateway's CommonJS build
// require()s them natively (Node 24), but Jest's own module system loads them only through node:vm's
// SourceTextModule, which Node exposes only with --experimental-vm-modules: the npm test scripts
// run Jest that way (docs/architecture.md "Runtime and toolchain"), and nothing is transpiled to
// CommonJS for Jest. Without the flag every spec would fail on its first Nest import, so say the
// fix once instead.
// eslint-disable-next-line @typescript-eslint/no-require-imports -- jest.config.js is CommonJS
if (typeof require('node:vm').SourceTextModule !== 'function') {
  throw new Error(
    'Jest must run with --experimental-vm-modules (NestJS 12 is ES modules only): use `npm test`, ' +
      '`npm run test:unit`, `npm run test:e2e`, or NODE_OPTIONS=--experimental-vm-modules npx jest …',
  );
}
// The built-in families register themselves when src/families.ts is imported, as every entry point
// does first; specs get the same registry this way (a spec may register a test-only family beside).
const setupFiles = ['<rootDir>/src/families.ts'];
module.exports = {
  // testTimeout is a global option: Jest ignores it inside `projects` entries (jest-circus reads
  // only globalConfig.testTimeout), so the e2e budget must be set here. It is a hang guard, not a
  // speed requirement: a test that passes on an idle machine must pass on a 2-core machine busy
  // with other work too, so it is generous; durations that matter are benchmark
  // figures (npm run bench), not test bounds.
  testTimeout: 120000,
  projects: [
    {
      displayName: 'unit',
      testEnvironment: 'node',
      rootDir: __dirname,
      roots: ['<rootDir>/src', '<rootDir>/scripts'],
      testRegex: '\\.spec\\.ts$',
      transform,
      moduleFileExtensions: ['ts', 'js', 'json', 'mjs'],
      setupFiles,
    },
    {
      displayName: 'e2e',
      testEnvironment: 'node',
      rootDir: __dirname,
      roots: ['<rootDir>/test'],
      testRegex: '\\.e2e-spec\\.ts$',
      transform,
      moduleFileExtensions: ['ts', 'js', 'json', 'mjs'],
      setupFiles,
    },
  ],
};
