/** Each test file gets its own database (cloned from a migrated template) and Redis prefix, so files run in parallel. */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  // The fault suite runs on its own (npm run test:faults).
  testPathIgnorePatterns: ['/node_modules/', '\\.fault\\.test\\.ts$'],
  transform: {
    // music-metadata takes content-type's default export as Node gives it (module.exports, which has no
    // `default`): that one file is transformed with Node's interop.
    '/node_modules/music-metadata/lib/ParserFactory\\.js$': [
      '@swc/jest',
      { jsc: { target: 'es2022' }, module: { type: 'commonjs', importInterop: 'node' } },
    ],
    '^.+\\.(t|j)sx?$': ['@swc/jest', { jsc: { target: 'es2022' }, module: { type: 'commonjs' } }],
  },
  // These ship ES modules only, and jest's CommonJS runtime needs them transformed: jose, oidc-provider,
  // openapi-fetch, cookie 2 (light-my-request's, listed so that the cookie nested under it is reached), and
  // music-metadata with the parts it is made of (a nested media-typer is reached through music-metadata).
  transformIgnorePatterns: [
    '/node_modules/(?!(jose|oidc-provider|openapi-fetch|light-my-request|cookie|music-metadata|strtok3|token-types|file-type|uint8array-extras|@tokenizer|@borewit|win-guid|media-typer)/)',
  ],
  // music-metadata and file-type name their Node entry under the `import` condition only, which jest's
  // CommonJS resolver does not ask for.
  moduleNameMapper: {
    '^music-metadata$': '<rootDir>/node_modules/music-metadata/lib/index.js',
    '^file-type$': '<rootDir>/node_modules/file-type/index.js',
  },
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  // Generous: CI machines are shared, and the polling helpers' own deadlines should fire first with a clearer message.
  testTimeout: 60000,
  maxWorkers: 2,
};
