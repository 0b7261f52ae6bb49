// Two projects: unit specs beside the code, e2e specs in test/ that boot the app on a random
// loopback port. Type checking is done once by `tsc --noEmit` in `npm test`, so ts-jest only
// transpiles (isolatedModules) to keep the suite fast on a 2-core machine.
const ESM_ONLY = ['https-proxy-agent', 'agent-base', 'proxy-agent-negotiate'];
const transform = {
  '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json', diagnostics: false }],
  // https-proxy-agent 9 and its helpers ship only ES modules. Node (>= 20.19) require()s them at
  // run time, but Jest's module system cannot, so Jest transpiles just these to CommonJS.
  [`node_modules/(${ESM_ONLY.join('|')})/.+\\.js$`]: [
    'ts-jest',
    { tsconfig: { allowJs: true, module: 'commonjs' }, diagnostics: false },
  ],
};
const transformIgnorePatterns = [`/node_modules/(?!(${ESM_ONLY.join('|')})/)`];
module.exports = {
  // testTimeout is a global option: Jest ignores it inside `projects` entries (jest-circus reads
  // only globalConfig.testTimeout), so the e2e budget must be set here. It is a hang guard, not a
  // speed requirement: a test that passes on an idle machine must pass on a 2-core machine busy
  // with other work too (issue 25), so it is generous; durations that matter are benchmark
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
      transformIgnorePatterns,
      moduleFileExtensions: ['ts', 'js', 'json', 'mjs'],
    },
    {
      displayName: 'e2e',
      testEnvironment: 'node',
      rootDir: __dirname,
      roots: ['<rootDir>/test'],
      testRegex: '\\.e2e-spec\\.ts$',
      transform,
      transformIgnorePatterns,
      moduleFileExtensions: ['ts', 'js', 'json', 'mjs'],
    },
  ],
};
