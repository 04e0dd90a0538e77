/**
 * A throwaway `redis-server` on loopback (no persistence) for the rate-limit tests and
 * W5; `npm test`'s provision step (test/provision) makes sure the binary is there.
 * `stop()` ends that process only.
 */
import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import IORedis from "ioredis";
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

/**
 * `cluster`: a one-node Redis Cluster owning every slot, so multi-key commands and scripts
 * are held to one hash slot as on a real cluster (a CROSSSLOT error otherwise).
 */
export async function startRedis(opts: { cluster?: boolean } = {}): Promise<RedisServer> {
  const port = await freePort();
  const dir = opts.cluster ? fs.mkdtempSync(path.join(os.tmpdir(), "cellflow-redis-")) : null;
  const clusterArgs = dir
    ? [
        "--cluster-enabled",
        "yes",
        "--cluster-config-file",
        path.join(dir, "nodes.conf"),
        "--dir",
        dir,
      ]
    : [];
  const child: ChildProcess = spawn(
    redisServerBin(),
    [
      "--port",
      String(port),
      "--bind",
      "127.0.0.1",
      "--save",
      "",
      "--appendonly",
      "no",
      ...clusterArgs,
    ],
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
  const server: RedisServer = {
    port,
    url: `redis://127.0.0.1:${port}`,
    async stop() {
      if (dir) fs.rmSync(dir, { recursive: true, force: true });
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((r) => child.once("exit", () => r()));
      child.kill("SIGKILL");
      await exited;
    },
  };
  if (dir) await ownEverySlot(server);
  return server;
}

/** Gives the one node every slot and waits until the cluster says it is up. */
async function ownEverySlot(server: RedisServer): Promise<void> {
  const client = new IORedis(server.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await client.connect();
    await client.call("CLUSTER", "ADDSLOTSRANGE", "0", "16383");
    const ok = await waitFor(
      async () => String(await client.call("CLUSTER", "INFO")).includes("cluster_state:ok"),
      10_000,
      50,
    );
    if (!ok) throw new Error("the one-node Redis Cluster did not come up");
  } catch (err) {
    await server.stop();
    throw err;
  } finally {
    client.disconnect();
  }
}
