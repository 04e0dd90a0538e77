/**
 * The trigger.dev tasks get the settings they need: every variable the engine reads is
 * classified (pushed to the tasks, set by the platform, or not for the tasks), the deploy
 * extension in trigger.config.ts pushes exactly the task variables set in the deploying
 * shell, secrets as secrets, and README's deploy section lists exactly those variables.
 */
import fs from "node:fs";
import path from "node:path";
import type { BuildExtension, BuildLayer } from "@trigger.dev/core/v3/build";
import { afterEach, describe, expect, it } from "vitest";
import { Env } from "@/config/env";
import {
  NOT_FOR_TASKS,
  PLATFORM_ENV,
  TASK_ENV,
  TASK_ENV_NAMES,
  taskEnvVars,
} from "@/config/task-env";
import config from "../../trigger.config";

const root = path.resolve(import.meta.dirname, "../..");
const saved = { ...process.env };
afterEach(() => {
  for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
  Object.assign(process.env, saved);
});

type OnBuildComplete = NonNullable<BuildExtension["onBuildComplete"]>;
type BuildContext = Parameters<OnBuildComplete>[0];
type BuildManifest = Parameters<OnBuildComplete>[1];

/** Runs the config's syncEnvVars extension as a deploy would, returning the layer it adds. */
async function deployLayer(): Promise<BuildLayer["deploy"]> {
  const extension = config.build?.extensions?.find((e) => e.name === "SyncEnvVarsExtension");
  expect(extension).toBeDefined();
  const layers: BuildLayer[] = [];
  const context = {
    target: "deploy",
    config: { project: "proj_test" },
    workingDir: root,
    logger: {
      debug: () => {},
      log: () => {},
      warn: () => {},
      progress: () => {},
      spinner: () => ({ stop: () => {}, message: () => {} }),
    },
    addLayer: (layer: BuildLayer) => layers.push(layer),
    registerPlugin: () => {},
    resolvePath: async () => undefined,
  };
  const manifest = { deploy: { env: {} }, environment: "prod" };
  await extension?.onBuildComplete?.(
    context as unknown as BuildContext,
    manifest as unknown as BuildManifest,
  );
  return layers.find((l) => l.id === "sync-env-vars")?.deploy;
}

describe("the variables trigger.dev tasks need", () => {
  it("every variable of the Env schema is classified exactly once", () => {
    const classified = [...TASK_ENV_NAMES, ...PLATFORM_ENV, ...Object.keys(NOT_FOR_TASKS)].sort();
    expect(classified).toEqual(Object.keys(Env.shape).sort());
  });

  it("taskEnvVars returns exactly the task variables that are set, none empty, none other", () => {
    const vars = taskEnvVars({
      DATABASE_URL: "postgres://pooled",
      DATABASE_URL_UNPOOLED: "postgres://direct",
      CELLFLOW_LLM_BASE_URL: "https://llm.example",
      CELLFLOW_ATTEMPT_TIMEOUT_MS: "",
      PORT: "3000",
      TRIGGER_SECRET_KEY: "tr_dev_x",
      PATH: "/bin",
    });
    expect(vars).toEqual([
      { name: "DATABASE_URL", value: "postgres://pooled", isSecret: true },
      { name: "DATABASE_URL_UNPOOLED", value: "postgres://direct", isSecret: true },
      { name: "CELLFLOW_LLM_BASE_URL", value: "https://llm.example", isSecret: false },
    ]);
    const all = Object.fromEntries(TASK_ENV_NAMES.map((n) => [n, `v-${n}`]));
    expect(taskEnvVars(all).map((v) => v.name)).toEqual(TASK_ENV_NAMES);
  });

  it("the deploy pushes the task variables set in the deploying shell, secrets as secrets", async () => {
    for (const name of [...TASK_ENV_NAMES, ...PLATFORM_ENV]) delete process.env[name];
    process.env.DATABASE_URL = "postgres://pooled";
    process.env.CELLFLOW_SECRET_KEY = "k".repeat(64);
    process.env.DATABASE_DRIVER = "neon";
    process.env.CELLFLOW_RATE_LIMIT_PER_SECOND = "7";
    process.env.LOG_LEVEL = "";
    process.env.PORT = "8080";
    const deploy = await deployLayer();
    expect(deploy?.env).toEqual({ DATABASE_DRIVER: "neon", CELLFLOW_RATE_LIMIT_PER_SECOND: "7" });
    expect(deploy?.secretEnv).toEqual({
      DATABASE_URL: "postgres://pooled",
      CELLFLOW_SECRET_KEY: "k".repeat(64),
    });
  });

  it("README's deploy section lists exactly the task variables", () => {
    const readme = fs.readFileSync(path.join(root, "README.md"), "utf8");
    const start = readme.indexOf("<!-- task-env:");
    const end = readme.indexOf("<!-- /task-env -->");
    expect(start).toBeGreaterThan(readme.indexOf("## Deploy on trigger.dev + Neon"));
    expect(end).toBeGreaterThan(start);
    const listed = [...readme.slice(start, end).matchAll(/^\| `([A-Z][A-Z0-9_]*)` \|/gm)].map(
      (m) => m[1],
    );
    expect(listed).toEqual(TASK_ENV_NAMES);
    for (const name of Object.keys(TASK_ENV)) expect(name in Env.shape).toBe(true);
  });
});
