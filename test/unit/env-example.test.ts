import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { Env, readEnv } from "@/config/env";

describe(".env.example", () => {
  it("documents exactly the variables the code reads", () => {
    const text = fs.readFileSync(path.resolve(import.meta.dirname, "../../.env.example"), "utf8");
    const documented = [...text.matchAll(/^([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]).sort();
    expect(documented).toEqual(Object.keys(Env.shape).sort());
  });

  it("its values parse, and empty values mean the defaults", () => {
    const text = fs.readFileSync(path.resolve(import.meta.dirname, "../../.env.example"), "utf8");
    const vars = Object.fromEntries(
      [...text.matchAll(/^([A-Z][A-Z0-9_]*)=(.*)$/gm)].map((m) => [m[1], m[2]]),
    );
    const env = readEnv(vars);
    expect(env).toMatchObject({
      DATABASE_DRIVER: "pg",
      PORT: 3000,
      CELLFLOW_PG_PORT: 54329,
      TASK_BACKEND: "local",
    });
    expect(env.DATABASE_URL).toBeUndefined();
    expect(() => readEnv({ PORT: "eighty" })).toThrow(/PORT/);
  });
});
