/**
 * The layers of ../shared/design/DESIGN.md §2, extended to every folder, as import rules:
 * a wrong arrow fails `npm test` (script `layers`). A folder may import its own files
 * and the folders below it; the levels, lowest first:
 *
 *   core      src/contracts, src/domain, src/errors   pure: schemas, rules, the error vocabulary
 *   base      db, src/config, src/security, src/net, src/metrics, src/tracing   the database client and schema, settings, crypto, outbound HTTP, the process metrics and spans
 *   store     src/store, src/events                   one module per state change (SQL inside), the event stream
 *   adapters  src/enrichments, src/limits, src/backends  providers, rate limits and plans, task backends
 *   execution src/execution                          the workflow executor and its blocks
 *   engine    src/engine
 *   services  src/services, src/runtime (what both runtimes share: the composition root, the maintenance jobs)
 *   edges     src/http, src/server, src/trigger, src/client, src/cli
 *   pages     src/app, src/ui
 */
const LEVELS = [
  { name: "core", folders: ["src/contracts", "src/domain", "src/errors"] },
  {
    name: "base",
    folders: ["db", "src/config", "src/security", "src/net", "src/metrics", "src/tracing"],
  },
  { name: "store", folders: ["src/store", "src/events"] },
  { name: "adapters", folders: ["src/enrichments", "src/limits", "src/backends"] },
  { name: "execution", folders: ["src/execution"] },
  { name: "engine", folders: ["src/engine"] },
  { name: "services", folders: ["src/services", "src/runtime"] },
  { name: "edges", folders: ["src/http", "src/server", "src/trigger", "src/client", "src/cli"] },
  { name: "pages", folders: ["src/app", "src/ui"] },
];

/**
 * The files that may send requests the typed client cannot (test/helpers/raw-api.ts): the
 * hostile-input and authorization suites and their helpers, plus the few tests whose
 * requests are wrong on purpose (a raw body, an odd header, an unknown route).
 */
const RAW_API_USERS = [
  "test/helpers/hostile-input",
  "test/helpers/authz-fixtures",
  "test/integration/api-bad-input\\.test",
  "test/integration/api-garbage\\.property\\.test",
  "test/integration/security-hostile-input-[^/]+\\.test",
  "test/integration/security-authz-[^/]+\\.test",
  // imports CSV as raw bodies (odd charsets and lengths), and a JSON body to the CSV route
  "test/integration/api-csv\\.test",
  // delivers signed raw bodies to hooks; creates a hook with an unknown action
  "test/integration/api-hooks\\.test",
  // imports CSV as raw bodies and delivers signed hook bodies over the rows-per-table cap
  "test/integration/api-row-caps\\.test",
  // turns the auto-run switch on without its backfill (400s), imports CSV and delivers a
  // signed hook body to prove the switch holds for them
  "test/integration/auto-run-switch\\.test",
  // starts runs with bodies of the wrong shape (a dryRun that is not a boolean, an unknown mode)
  "test/integration/api-runs-dry-run\\.test",
  // puts secrets with values of the wrong type, extra fields and a body that is not JSON
  "test/integration/api-secrets\\.test",
  // signs in with cookies, forms and CSRF headers, and with bodies outside the schema
  "test/integration/api-session\\.test",
  // sends a workflow with a block type the API does not know
  "test/integration/api-workflows\\.test",
  // sends `where` that is not JSON and a `dir` that is neither asc nor desc
  "test/integration/find-rows\\.test",
  // resumes a cell with a malformed body
  "test/integration/pause-resume\\.test",
  // starts runs with a maxCredits that is not a number
  "test/integration/run-credit-cap\\.test",
  // sweeps every GET path, built as text, for leaked secrets
  "test/integration/security-secrets\\.test",
  // sends a where operator the API does not know
  "test/integration/where-filters\\.test",
];

const folderPattern = (folders) => `^(${folders.map((f) => f.replace("/", "\\/")).join("|")})/`;

/** For each level: nothing in it imports a folder of a higher level. */
const upward = LEVELS.slice(0, -1).map((level, i) => ({
  name: `${level.name}-imports-no-higher-layer`,
  comment: `${level.folders.join(", ")} may not import ${LEVELS.slice(i + 1)
    .map((l) => l.name)
    .join(", ")}`,
  severity: "error",
  from: { path: folderPattern(level.folders) },
  to: { path: folderPattern(LEVELS.slice(i + 1).flatMap((l) => l.folders)) },
}));

module.exports = {
  forbidden: [
    ...upward,
    {
      name: "nothing-imports-app",
      comment: "Next.js routes and pages are entry points",
      severity: "error",
      from: { pathNot: "^(src/app|test)/" },
      to: { path: "^src/app/" },
    },
    {
      name: "ui-is-browser-code",
      comment: "the UI talks to the server through the typed client only",
      severity: "error",
      from: { path: "^src/ui/" },
      to: { path: "^(src|db)/", pathNot: "^src/(ui|contracts|domain|client)/" },
    },
    {
      name: "ui-only-from-app",
      severity: "error",
      from: { pathNot: "^(src/app|src/ui|test)/" },
      to: { path: "^src/ui/" },
    },
    {
      name: "execution-reaches-records-through-ports",
      comment:
        "the executor and its blocks reach records only through what the engine hands them (ChildLedger, PaidCalls), so a block cannot write around the engine's fences",
      severity: "error",
      from: { path: "^src/execution/" },
      to: { path: "^src/store/" },
    },
    {
      name: "http-reaches-the-store-through-services",
      comment:
        "the HTTP layer parses, authenticates and answers; what it reads or changes goes through src/services",
      severity: "error",
      from: { path: "^src/http/" },
      to: { path: "^src/store/" },
    },
    {
      name: "sql-only-in-store-and-db",
      comment: "no SQL outside store/ and db/: only they reach the drivers and the query builder",
      severity: "error",
      from: { path: "^src/", pathNot: "^src/store/" },
      to: { path: "node_modules/(drizzle-orm|pg|@neondatabase/serverless)/" },
    },
    {
      name: "harness-imports-one-way",
      comment: "bench, chaos and load share helpers through test/helpers and src only",
      severity: "error",
      from: { path: "^(bench|chaos|load|src|db|test/helpers)/" },
      to: { path: "^(bench|chaos|load)/", pathNot: "$1" },
    },
    {
      name: "process-resources-built-at-the-root",
      comment:
        "the rate limiter the environment selects is built once per process, by the composition root (src/runtime/engine.ts)",
      severity: "error",
      from: { path: "^(src|db)/", pathNot: "^src/(runtime|limits/rate)/" },
      to: { path: "^src/limits/rate/instance\\.ts$" },
    },
    {
      name: "raw-api-only-for-hostile-requests",
      comment:
        "tests call the API through the typed client; only the files that must send what it cannot use the raw helper",
      severity: "error",
      from: { pathNot: `^(${RAW_API_USERS.join("|")})\\.ts$` },
      to: { path: "^test/helpers/raw-api\\.ts$" },
    },
    {
      name: "src-never-imports-tests",
      severity: "error",
      from: { path: "^(src|db)/" },
      to: { path: "^test/" },
    },
    {
      name: "no-circular",
      severity: "error",
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      extensions: [".ts", ".tsx", ".js", ".mjs", ".cjs", ".json"],
    },
    exclude: { path: "(^|/)(\\.next|\\.data)/" },
  },
};
