// The layering of the service, checked in CI by `npm run lint:layers` (issue 22):
//   domain/    pure rules and vocabulary: imports only domain/ and generated types
//   db/        tables, queries, migrations, seed: imports domain/ and generated/, never handlers/ or server/
//   generated/ output of `npm run generate`: imports nothing hand-written
//   handlers/  operations, services, presenters: may use db/, domain/, server/ (its runtime types)
//   server/    runtime assembly, HTTP, sockets, jobs, providers
// and nothing anywhere imports in a circle.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'domain-is-pure',
      comment: 'domain/ holds the business rules every layer uses; it must not reach into any of them.',
      severity: 'error',
      from: { path: '^domain/' },
      to: { path: '^(db|handlers|server|scripts|test)/|^index\\.ts$' },
    },
    {
      name: 'domain-uses-only-types-of-generated',
      comment: 'domain/ may name the contract types, not load generated runtime code.',
      severity: 'error',
      from: { path: '^domain/' },
      to: { path: '^generated/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'domain-has-no-packages',
      comment: 'Pure rules depend on the language and node builtins only.',
      severity: 'error',
      from: { path: '^domain/' },
      to: { dependencyTypes: ['npm', 'npm-dev', 'npm-optional', 'npm-peer', 'npm-no-pkg', 'npm-unknown'] },
    },
    {
      name: 'db-below-handlers-and-server',
      comment: 'Queries take an executor and return rows; HTTP, services and the runtime sit above them.',
      severity: 'error',
      from: { path: '^db/' },
      to: { path: '^(handlers|server|scripts|test)/' },
    },
    {
      name: 'generated-imports-nothing-hand-written',
      comment: 'generated/ is rebuilt from spec/ by npm run generate; a hand-written import would tie it to the code it types.',
      severity: 'error',
      from: { path: '^generated/' },
      to: { path: '^(?!generated/)[^/]+/|^index\\.ts$' },
    },
    {
      name: 'no-circular',
      comment: 'A cycle makes load order matter and hides which module owns what.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|test/consumers/clients)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default'],
      extensions: ['.ts', '.js', '.json'],
    },
  },
};
