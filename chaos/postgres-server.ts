/**
 * An embedded Postgres in a directory of its own that a chaos run can SIGKILL and start
 * again in place, on the same data directory and port (the Postgres-kill scenario).
 */
import { type EmbeddedPostgres, startEmbeddedPostgres } from "@db/embedded";
import { sleep } from "@/domain/sleep";
import type { PostgresControl } from "./scenarios/postgres-kill";

export class RestartablePostgres implements PostgresControl {
  current!: EmbeddedPostgres;
  constructor(
    readonly dir: string,
    readonly port: number,
  ) {}

  async start(): Promise<void> {
    this.current = await startEmbeddedPostgres({
      dataDir: this.dir,
      port: this.port,
      // Two workers at concurrency 20 keep ~2 × 47 connections; room for the harness,
      // the simulated trigger.dev carriers, and backends a crash leaves for a moment.
      settings: { max_connections: "400" },
    });
  }

  async kill(): Promise<void> {
    const pid = this.current.pid;
    if (pid <= 0) throw new Error("no postgres pid to kill");
    // Its own process group (db/embedded.ts): the postmaster and every backend at once.
    process.kill(-pid, "SIGKILL");
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      try {
        process.kill(pid, 0);
      } catch {
        return;
      }
      await sleep(20);
    }
    throw new Error("postgres did not die after SIGKILL");
  }
}
