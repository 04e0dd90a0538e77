/**
 * How `npm run worker` without DATABASE_URL finds the embedded Postgres of the server that
 * runs on the same data folder (`npm start` or `npm run dev`). Invariants: it joins only a
 * live server, judged as the data folder's lock judges it (the same process, not a reused
 * pid); only once that server has published its Postgres; and only with the secret key
 * that server uses, so workspace and webhook secrets open the same in both. Otherwise it
 * says in one line why not. The password comes from the data folder's file and is never
 * printed.
 */
import fs from "node:fs";
import path from "node:path";
import { PASSWORD_FILE } from "@db/embedded";
import type { Result } from "@/domain/result";
import { sleep } from "@/domain/sleep";
import { findSecretKey, secretKeyId } from "@/security/secret-key";
import { type Holder, readLiveHolder } from "./data-dir-lock";

/** The application_name of a joined worker's sessions, which the server waits for at shutdown. */
export const JOINED_WORKER_NAME = "cellflow-worker-joined";

export interface JoinedServer {
  /** Connection string of the server's database, password included: never print it. */
  url: string;
  /** The server's pid. */
  pid: number;
  /** The secret key the server uses, in its text form. */
  secretKey: string;
}

export interface JoinRefusal {
  /** `starting`: the server lives but has not published its Postgres yet; worth waiting for. */
  kind: "no-server" | "starting" | "unreadable" | "secret-key";
  /** One line for a person. */
  message: string;
}

export interface JoinOptions {
  dataDir: string;
  /** The data folder as the person knows it (relative to the project), for messages. */
  shownDir: string;
  /** CELLFLOW_SECRET_KEY of this process, if set. */
  envSecretKey: string | undefined;
}

const refuse = (
  kind: JoinRefusal["kind"],
  message: string,
): { ok: false; reason: JoinRefusal } => ({
  ok: false,
  reason: { kind, message },
});

/** The lock's record is another process's file: only well-formed fields count. */
function publishedPostgres(h: Holder): Holder["postgres"] {
  const pg = h.postgres;
  if (!pg || typeof pg !== "object") return undefined;
  const { host, port, user, database } = pg;
  if (typeof host !== "string" || typeof user !== "string" || typeof database !== "string")
    return undefined;
  if (!Number.isInteger(port) || port <= 0 || port > 65535) return undefined;
  return { host, port, user, database };
}

function matchingSecretKey(opts: JoinOptions, h: Holder): Result<string, JoinRefusal> {
  const server = h.secretKey;
  const where = `${opts.shownDir}/secret-key`;
  let mine: ReturnType<typeof findSecretKey>;
  try {
    mine = findSecretKey(opts.dataDir, opts.envSecretKey);
  } catch (err) {
    return refuse("secret-key", err instanceof Error ? err.message : String(err));
  }
  if (!server || typeof server.id !== "string") {
    // A server that published no key id: its key is the folder's unless it was given one.
    return mine
      ? { ok: true, value: mine.key }
      : refuse("secret-key", `no secret key in ${where}: set CELLFLOW_SECRET_KEY to the server's`);
  }
  if (mine && secretKeyId(mine.key) === server.id) return { ok: true, value: mine.key };
  if (server.fromEnv)
    return refuse(
      "secret-key",
      `the server at pid ${h.pid} was started with its own CELLFLOW_SECRET_KEY: set the same value here, or this worker could not open workspace secrets`,
    );
  return refuse(
    "secret-key",
    `CELLFLOW_SECRET_KEY here differs from the key the server at pid ${h.pid} uses (kept in ${where}): unset it, or set the same value`,
  );
}

/** The live server on the data folder and how to join it, or why that cannot be done now. */
export function findEmbeddedServer(opts: JoinOptions): Result<JoinedServer, JoinRefusal> {
  const live = readLiveHolder(opts.dataDir);
  if (!live.ok)
    return refuse(
      "no-server",
      `no Cellflow server is running on data folder ${opts.shownDir}: start one with npm start, or set DATABASE_URL`,
    );
  const holder = live.value;
  const pg = publishedPostgres(holder);
  if (!pg)
    return refuse(
      "starting",
      `the Cellflow server at pid ${holder.pid} on data folder ${opts.shownDir} has not started its Postgres yet`,
    );
  let password: string;
  try {
    password = fs.readFileSync(path.join(opts.dataDir, PASSWORD_FILE), "utf8").trim();
  } catch (err) {
    return refuse(
      "unreadable",
      `cannot read the Postgres password in ${opts.shownDir}/${PASSWORD_FILE} (${(err as NodeJS.ErrnoException).code ?? String(err)}): run the worker as the user that runs the server, or set DATABASE_URL`,
    );
  }
  const key = matchingSecretKey(opts, holder);
  if (!key.ok) return key;
  const url = new URL(`postgres://${pg.host}`);
  url.username = encodeURIComponent(pg.user);
  url.password = encodeURIComponent(password);
  url.port = String(pg.port);
  url.pathname = `/${encodeURIComponent(pg.database)}`;
  return { ok: true, value: { url: url.toString(), pid: holder.pid, secretKey: key.value } };
}

/**
 * findEmbeddedServer, waiting while the server is still starting (its lock taken, its
 * Postgres not yet up: an initdb takes seconds), up to `timeoutMs`.
 */
export async function waitForEmbeddedServer(
  opts: JoinOptions & { timeoutMs: number; pollMs?: number },
): Promise<Result<JoinedServer, JoinRefusal>> {
  const deadline = Date.now() + opts.timeoutMs;
  for (;;) {
    const found = findEmbeddedServer(opts);
    if (found.ok || found.reason.kind !== "starting") return found;
    if (Date.now() >= deadline)
      return refuse(
        "starting",
        `${found.reason.message} after ${Math.round(opts.timeoutMs / 1000)} s; try again once it prints its URL`,
      );
    await sleep(opts.pollMs ?? 250);
  }
}

/**
 * Calls `onGone` once when the joined server stops: it marked itself stopping, or its
 * process is gone, or another has the data folder now. Returns the function that stops
 * watching.
 */
export function watchJoinedServer(
  dataDir: string,
  pid: number,
  onGone: (why: "stopping" | "gone") => void,
  everyMs = 250,
): () => void {
  const timer = setInterval(() => {
    const live = readLiveHolder(dataDir);
    const why =
      !live.ok || live.value.pid !== pid ? "gone" : live.value.stopping ? "stopping" : null;
    if (why) {
      clearInterval(timer);
      onGone(why);
    }
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * The server side, at shutdown: waits until no joined worker is connected to its database
 * any more, so joined workers, told by the lock that it is stopping, hand their running
 * cells back before Postgres goes. Resolves at once when none is connected; the caller
 * bounds the wait. A worker given DATABASE_URL does not watch the lock and is not waited for.
 */
export async function joinedWorkersGone(url: string, pollMs = 100): Promise<void> {
  const { sessionCounter } = await import("@db/pools");
  const sessions = await sessionCounter(url, "cellflow-shutdown", JOINED_WORKER_NAME);
  try {
    for (;;) {
      if ((await sessions.count()) === 0) return;
      await sleep(pollMs);
    }
  } finally {
    await sessions.close();
  }
}
