/**
 * A redis-server the chaos run can stop and start again on the same port, so workers
 * whose REDIS_URL points at it find it back (test/helpers/redis.ts picks a new port per
 * server). No persistence: a restarted Redis has forgotten every grant, which is what a
 * failover to an empty replica does too.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { sleep } from "@/domain/sleep";
import { freePort } from "../test/helpers/processes";
import { answersPing, redisServerBin } from "../test/helpers/redis";
import { untilStopped } from "./cleanup";

export class RestartableRedis {
  private child: ChildProcess | undefined;
  private forget: () => void = () => {};

  private constructor(readonly port: number) {}

  static async start(): Promise<RestartableRedis> {
    const r = new RestartableRedis(await freePort());
    await r.up();
    return r;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Starts the server (again) on its port; resolves once it answers PING. */
  async up(): Promise<void> {
    const child = spawn(
      redisServerBin(),
      ["--port", String(this.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
      { stdio: "ignore" },
    );
    let failed: Error | undefined;
    child.once("error", (err) => {
      failed = err;
    });
    this.child = child;
    this.forget = untilStopped(() => this.down());
    const deadline = Date.now() + 10_000;
    while (!(await answersPing(this.port))) {
      if (failed || child.exitCode !== null || Date.now() > deadline) {
        // Not awaited: a process that failed to spawn never emits "exit".
        child.kill("SIGKILL");
        this.child = undefined;
        this.forget();
        throw new Error(
          `redis-server did not start on ${this.port} (npm run provision installs it or says how): ${failed?.message ?? "no PONG"}`,
        );
      }
      await sleep(50);
    }
  }

  /** SIGKILLs it (nothing to persist) and waits for the exit. */
  async down(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    this.forget();
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((r) => child.once("exit", () => r()));
    child.kill("SIGKILL");
    await exited;
  }
}
