import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";

const root = path.resolve(import.meta.dirname, "../..");

describe("schema and migrations", () => {
  it("the drizzle schema and the committed migrations describe the same database", () => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "cellflow-drift-"));
    const out = path.join(tmp, "migrations");
    fs.cpSync(path.join(root, "db", "migrations"), out, { recursive: true });
    const config = path.join(tmp, "drizzle.config.mjs");
    fs.writeFileSync(
      config,
      // drizzle-kit resolves both paths against the working directory.
      `export default ${JSON.stringify({ dialect: "postgresql", schema: "./db/schema/index.ts", out: path.relative(root, out) })};`,
    );
    const before = fs.readdirSync(out).sort();
    const output = execFileSync(
      path.join(root, "node_modules/.bin/drizzle-kit"),
      ["generate", "--config", config],
      {
        cwd: root,
        encoding: "utf8",
      },
    );
    const after = fs.readdirSync(out).sort();
    fs.rmSync(tmp, { recursive: true, force: true });
    expect(after, `schema changed without a migration; run npm run db:generate\n${output}`).toEqual(
      before,
    );
    expect(output).toMatch(/No schema changes/);
  });

  it("migrations are append-only: the journal lists every SQL file, in order", () => {
    const dir = path.join(root, "db", "migrations");
    const journal = JSON.parse(
      fs.readFileSync(path.join(dir, "meta", "_journal.json"), "utf8"),
    ) as {
      entries: { idx: number; tag: string }[];
    };
    const files = fs
      .readdirSync(dir)
      .filter((f) => f.endsWith(".sql"))
      .sort();
    expect(journal.entries.map((e) => `${e.tag}.sql`)).toEqual(files);
    expect(journal.entries.map((e) => e.idx)).toEqual(files.map((_, i) => i));
  });
});
