/**
 * A throwaway `redis-server` on loopback (no persistence) for the rate-limit tests and
 * W5; `npm test`'s provision step (test/provision) makes sure the binary is there.
 * `stop()` ends that process only.
 */
import { type ChildProcess, spawn } from "node:child_process";
import net from "node:net";
import { freePort, waitFor } from "./processes";

export interface RedisServer {
  port: number;
  url: string;
  /** Stops the server (SIGKILL: nothing to persist) and waits for it to exit. */
  stop(): Promise<void>;
}

/** The redis-server binary: REDIS_SERVER_BIN, else the one on PATH. */
export function redisServerBin(): string {
  return process.env.REDIS_SERVER_BIN || "redis-server";
}

/** Whether a Redis answers PING on loopback `port`. */
export function answersPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    socket.setTimeout(500);
    socket.once("data", (d) => {
      socket.destroy();
      resolve(d.toString().startsWith("+PONG"));
    });
    socket.once("error", () => resolve(false));
    socket.once("timeout", () => {
      socket.destroy();
      resolve(false);
    });
    socket.once("connect", () => socket.write("PING\r\n"));
  });
}

export async function startRedis(): Promise<RedisServer> {
  const port = await freePort();
  const child: ChildProcess = spawn(
    redisServerBin(),
    ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let out = "";
  child.stdout?.on("data", (c: Buffer) => {
    out += c.toString();
  });
  let spawnError: Error | undefined;
  child.once("error", (err) => {
    spawnError = err;
  });
  const up = await waitFor(
    async () => spawnError !== undefined || child.exitCode !== null || (await answersPing(port)),
    10_000,
    50,
  );
  if (!up || spawnError || child.exitCode !== null) {
    child.kill("SIGKILL");
    throw new Error(
      `redis-server did not start (npm run provision installs it or says how): ${spawnError?.message ?? out}`,
    );
  }
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((r) => child.once("exit", () => r()));
      child.kill("SIGKILL");
      await exited;
    },
  };
}
