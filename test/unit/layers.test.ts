/**
 * The layer rules (.dependency-cruiser.cjs, run by `npm run layers` in `npm test`) catch
 * the arrows they are written for: each case builds a tiny tree in a temp folder with
 * one import and checks which rule, if any, it breaks. A rule that matched nothing would
 * pass the project's own check silently; these prove each one bites.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { cruise, type IForbiddenRuleType } from "dependency-cruiser";
import { afterAll, describe, expect, it } from "vitest";

const require = createRequire(import.meta.url);
const config = require("../../.dependency-cruiser.cjs") as { forbidden: IForbiddenRuleType[] };

const roots: string[] = [];
afterAll(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

/** The rules broken by a tree of files (path → source), as "rule: from → to". */
async function violations(files: Record<string, string>): Promise<string[]> {
  const root = mkdtempSync(join(tmpdir(), "cellflow-layers-"));
  roots.push(root);
  for (const [path, source] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), source);
  }
  const result = await cruise(
    Object.keys(files)
      .map((path) => path.split("/")[0] ?? path)
      .filter(unique),
    {
      baseDir: root,
      validate: true,
      ruleSet: { forbidden: config.forbidden },
      // As the project's config: a type-only import is an arrow too.
      tsPreCompilationDeps: true,
      doNotFollow: { path: "node_modules" },
    },
    { extensions: [".ts", ".tsx", ".js"] },
  );
  const { output } = result;
  if (typeof output === "string") throw new Error("expected a cruise result object");
  return output.summary.violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`).sort();
}

function unique(value: string, index: number, all: string[]): boolean {
  return all.indexOf(value) === index;
}

describe("layer rules: the levels and the edges they would allow", () => {
  it("let a layer import its own folder and the layers below it", async () => {
    expect(
      await violations({
        "src/engine/carrier.ts": 'import { a } from "../store/cells";\nexport const c = a;\n',
        "src/store/cells.ts": 'import { d } from "../domain/rules";\nexport const a = d;\n',
        "src/domain/rules.ts": "export const d = 1;\n",
      }),
    ).toEqual([]);
  });

  it("fail an import of a higher layer (store → engine)", async () => {
    expect(
      await violations({
        "src/store/cells.ts": 'import { c } from "../engine/carrier";\nexport const a = c;\n',
        "src/engine/carrier.ts": "export const c = 1;\n",
      }),
    ).toEqual(["store-imports-no-higher-layer: src/store/cells.ts → src/engine/carrier.ts"]);
  });

  it("fail the executor reaching the store, though the store is a lower layer", async () => {
    expect(
      await violations({
        "src/execution/blocks/types.ts":
          'import type { E } from "../../store/child-runs/finish";\nexport type T = E;\n',
        "src/store/child-runs/finish.ts": "export type E = 1;\n",
        "src/execution/blocks/ok.ts":
          'import { d } from "../../domain/rules";\nexport const o = d;\n',
        "src/domain/rules.ts": "export const d = 1;\n",
      }),
    ).toEqual([
      "execution-reaches-records-through-ports: src/execution/blocks/types.ts → src/store/child-runs/finish.ts",
    ]);
  });

  it("fail the HTTP layer reaching the store, not the services it calls", async () => {
    expect(
      await violations({
        "src/http/auth.ts":
          'import { w } from "../store/api-keys/resolve";\nimport { s } from "../services/session";\nexport const a = w + s;\n',
        "src/store/api-keys/resolve.ts": "export const w = 1;\n",
        "src/services/session.ts":
          'import { w } from "../store/api-keys/resolve";\nexport const s = w;\n',
      }),
    ).toEqual([
      "http-reaches-the-store-through-services: src/http/auth.ts → src/store/api-keys/resolve.ts",
    ]);
  });
});

describe("layer rules: the boundaries beside the levels", () => {
  it("fail the UI reaching past the typed client into the server's code", async () => {
    expect(
      await violations({
        "src/ui/grid.tsx": 'import { a } from "../store/cells";\nexport const g = a;\n',
        "src/store/cells.ts": "export const a = 1;\n",
      }),
    ).toEqual(["ui-is-browser-code: src/ui/grid.tsx → src/store/cells.ts"]);
  });

  it("fail SQL outside store/: the engine importing the query builder", async () => {
    expect(
      await violations({
        "src/engine/lock.ts": 'import { sql } from "drizzle-orm";\nexport const l = sql;\n',
        "node_modules/drizzle-orm/package.json": '{"name":"drizzle-orm","main":"index.js"}',
        "node_modules/drizzle-orm/index.js": "exports.sql = 1;\n",
      }),
    ).toEqual(["sql-only-in-store-and-db: src/engine/lock.ts → node_modules/drizzle-orm/index.js"]);
  });

  it("fail one harness importing another (chaos → bench), not its own files", async () => {
    expect(
      await violations({
        "chaos/run.ts":
          'import { p } from "../bench/port";\nimport { s } from "./scene";\nexport const r = p + s;\n',
        "chaos/scene.ts": "export const s = 1;\n",
        "bench/port.ts": "export const p = 1;\n",
      }),
    ).toEqual(["harness-imports-one-way: chaos/run.ts → bench/port.ts"]);
  });

  it("fail an ordinary test importing the raw request helper, not a hostile-input suite", async () => {
    const raw = "export const call = 1;\n";
    const user = 'import { call } from "../helpers/raw-api";\nexport const t = call;\n';
    expect(
      await violations({
        "test/helpers/raw-api.ts": raw,
        "test/integration/api-rows.test.ts": user,
        "test/integration/security-hostile-input-bodies.test.ts": user,
        "test/integration/security-authz-tenancy.test.ts": user,
      }),
    ).toEqual([
      "raw-api-only-for-hostile-requests: test/integration/api-rows.test.ts → test/helpers/raw-api.ts",
    ]);
  });

  it("fail a module cycle", async () => {
    const found = await violations({
      "src/domain/a.ts": 'import { b } from "./b";\nexport const a = () => b;\n',
      "src/domain/b.ts": 'import { a } from "./a";\nexport const b = () => a;\n',
    });
    expect(found).toContain("no-circular: src/domain/a.ts → src/domain/b.ts");
  });

  it("fail an import of a Next.js route from anything but the app and tests", async () => {
    expect(
      await violations({
        "src/services/x.ts": 'import { GET } from "../app/api/route";\nexport const x = GET;\n',
        "src/app/api/route.ts": "export const GET = 1;\n",
      }),
    ).toEqual([
      "nothing-imports-app: src/services/x.ts → src/app/api/route.ts",
      "services-imports-no-higher-layer: src/services/x.ts → src/app/api/route.ts",
    ]);
  });

  it("fail building the rate limiter anywhere but the composition root", async () => {
    const files = {
      "src/limits/rate/instance.ts": "export const limiterFromEnv = 1;\n",
      "src/engine/paid.ts":
        'import { limiterFromEnv } from "../limits/rate/instance";\nexport const p = limiterFromEnv;\n',
      "src/runtime/engine.ts":
        'import { limiterFromEnv } from "../limits/rate/instance";\nexport const e = limiterFromEnv;\n',
    };
    expect(await violations(files)).toEqual([
      "process-resources-built-at-the-root: src/engine/paid.ts → src/limits/rate/instance.ts",
    ]);
  });
});
