/**
 * One real Postgres for the whole run: embedded, in a fresh temp directory, on a free
 * port. Migrations run once into a template database; each test file clones it.
 * CELLFLOW_TEST_DRIVER=neon (the `test:neon` lane) also starts a WebSocket proxy in front
 * of it, and the test databases use the neon driver through it (see ./db.ts).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { startEmbeddedPostgres } from "@db/embedded";
import pg from "pg";
import type { TestProject } from "vitest/node";
import { migratedDatabase } from "./databases";
import { freePort } from "./processes";
import { startWsProxy } from "./ws-proxy";

export const TEMPLATE_DB = "cellflow_template";

declare module "vitest" {
  export interface ProvidedContext {
    pgAdminUrl: string;
    /** `host:port` of the WebSocket proxy when the run uses the neon driver, else "". */
    neonWsProxy: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cellflow-test-"));
  fs.chmodSync(dir, 0o777);
  // Commit timestamps: the engine model test orders what it audited by commit.
  const server = await startEmbeddedPostgres({
    dataDir: dir,
    port: await freePort(),
    settings: { track_commit_timestamp: "on" },
  });
  await migratedDatabase(server.url, TEMPLATE_DB);
  // A template must have no connections while it is cloned.
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  await admin.query(`alter database ${TEMPLATE_DB} with is_template true allow_connections false`);
  await admin.end();
  project.provide("pgAdminUrl", server.url);
  const proxy = process.env.CELLFLOW_TEST_DRIVER === "neon" ? await startWsProxy() : undefined;
  project.provide("neonWsProxy", proxy?.address ?? "");
  return async () => {
    await proxy?.stop();
    await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  };
}
