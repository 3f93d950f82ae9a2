// The layering of the service, checked in CI by `npm run lint:layers`, lowest first:
//   domain/    pure rules and vocabulary: imports only domain/ and generated types
//   db/        tables, queries, migrations, seed: imports domain/ and generated/ only
//   generated/ output of `npm run generate`: imports nothing hand-written
//   platform/  config, logger, metrics, clock, tokens, providers: knows no use case
//   services/  the use cases, their errors, deps, idempotency and presenters: no HTTP
//   handlers/  one module per spec tag: parse, call a use case, reply; sees only the HTTP seam of server/
//   server/    the process: app, router, http, sockets, jobs; runtime.ts is the composition root
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
      name: 'db-below-everything-but-domain',
      comment: 'Queries take an executor and return rows; the platform, use cases, HTTP and the runtime sit above them.',
      severity: 'error',
      from: { path: '^db/' },
      to: { path: '^(platform|services|handlers|server|scripts|test)/' },
    },
    {
      name: 'platform-below-use-cases',
      comment:
        'platform/ (config, logger, metrics, clock, tokens, providers) is what every layer above db/ uses; it knows no use case or transport.',
      severity: 'error',
      from: { path: '^platform/' },
      to: { path: '^(services|handlers|server|scripts|test)/' },
    },
    {
      name: 'use-cases-know-no-transport',
      comment: 'services/ take plain typed inputs and return typed results; handlers, jobs and sockets call them, never the reverse.',
      severity: 'error',
      from: { path: '^services/' },
      to: { path: '^(handlers|server|scripts|test)/' },
    },
    {
      name: 'use-cases-use-no-http-packages',
      comment: 'A use case that reaches for express, ws or content negotiation is reading the transport.',
      severity: 'error',
      from: { path: '^services/' },
      to: { path: 'node_modules/(express|ws|negotiator|openapi-backend)/' },
    },
    {
      name: 'handlers-use-only-the-http-seam-of-server',
      comment: 'A handler sees its typed context and the HTTP helpers; the app, router, jobs and sockets are the process, above it.',
      severity: 'error',
      from: { path: '^handlers/' },
      to: { path: '^server/', pathNot: '^server/(handler-types\\.ts|ajv\\.ts|http/)' },
    },
    {
      name: 'only-the-composition-root-imports-handlers',
      comment: 'Jobs, sockets and scripts call use cases; only the runtime assembly wires the handler map.',
      severity: 'error',
      from: { path: '^(?!handlers/)', pathNot: '^server/runtime\\.ts$' },
      to: { path: '^handlers/' },
    },
    {
      name: 'server-http-below-handlers',
      comment: 'HTTP helpers serve handlers; reaching back into a handler would tie the seam to one operation.',
      severity: 'error',
      from: { path: '^server/(http/|handler-types\\.ts)' },
      to: { path: '^server/(?!http/|handler-types\\.ts|ajv\\.ts|types/)' },
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
