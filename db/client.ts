import { createHash } from "node:crypto";
import { Pool as NeonPool, neonConfig, types as neonTypes } from "@neondatabase/serverless";
import type { SQL } from "drizzle-orm";
import { drizzle as drizzleNeon } from "drizzle-orm/neon-serverless";
import { drizzle as drizzlePg } from "drizzle-orm/node-postgres";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import pg from "pg";
import ws from "ws";
import * as schema from "./schema";

export type Schema = typeof schema;
/** What app code types against: either driver's drizzle instance, or a transaction of it. */
export type Db = PgDatabase<PgQueryResultHKT, Schema>;

/** The node-postgres shape both drivers' pools share; pinned sessions (locks, LISTEN) use it. */
export interface SessionClient {
  query(text: string, values?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
  /** A named (prepared) statement: parsed and planned once per connection. */
  query(config: {
    name: string;
    text: string;
    values: unknown[];
  }): Promise<{ rows: Record<string, unknown>[] }>;
  release(destroy?: boolean): void;
  on(event: "error", listener: (err: Error) => void): unknown;
  on(
    event: "notification",
    listener: (msg: { channel: string; payload?: string }) => void,
  ): unknown;
}
export interface SessionPool {
  connect(): Promise<SessionClient>;
  end(): Promise<void>;
}

export interface Database {
  db: Db;
  /**
   * Queries on the direct endpoint (`pool`): named statements work there, which a
   * transaction-mode pooler at `url` may refuse. The row-lock holders write through it.
   */
  sessionDb: Db;
  pool: SessionPool;
  driver: "pg" | "neon";
  close(): Promise<void>;
  /** Whether `close` was called: work scheduled before it (a coalesced wake) skips quietly. */
  isClosed(): boolean;
}

export interface DatabaseOptions {
  url: string;
  /**
   * A direct (unpooled) connection for `pool`, the pinned sessions: session advisory locks
   * and LISTEN do not survive a transaction-mode pooler such as Neon's `-pooler` endpoint,
   * which `url` may be. Default: `url` (then one pool serves both).
   */
  sessionUrl?: string;
  driver?: "pg" | "neon";
  poolMax?: number;
  /** `host:port` of a WebSocket-to-TCP proxy, for the Neon driver against plain Postgres. */
  neonWsProxy?: string;
  applicationName?: string;
  /**
   * How long an idle connection stays open. Default 10 s (node-postgres's). A worker keeps
   * its carriers' connections longer: opening one costs a fork and an authentication on
   * the server, and a window of carriers opening theirs at once starts a run slowly.
   */
  idleTimeoutMs?: number;
}

// Postgres bigint (int8) and numeric come back as strings by default; counts and
// positions here stay well inside 2^53. The neon package bundles its own copy of
// pg-types, so its parser registry is a separate one and needs the same setting.
pg.types.setTypeParser(20, (v) => Number.parseInt(v, 10));
neonTypes.setTypeParser(20, (v: string) => Number.parseInt(v, 10));

type DriverPool = pg.Pool | NeonPool;

function newPool(
  driver: "pg" | "neon",
  url: string,
  max: number,
  opts: DatabaseOptions,
  direct: boolean,
): DriverPool {
  // The same settings for both drivers (the neon Pool is node-postgres's): without a name,
  // neon sessions carry the package's, and ops and tests tell worker sessions apart by it.
  const config = {
    connectionString: url,
    max,
    idleTimeoutMillis: opts.idleTimeoutMs ?? 10_000,
    application_name: opts.applicationName ?? "cellflow",
    // Only statements we name are prepared (the engine's per-cell ones, all by key):
    // plan them once per connection instead of re-planning their first executions.
    // A startup setting, so only on the direct endpoint: PgBouncer refuses `-c` options
    // for settings it does not track, and a pooled `url` may be one.
    ...(direct ? { options: "-c plan_cache_mode=force_generic_plan" } : {}),
  };
  const pool = driver === "neon" ? new NeonPool(config) : new pg.Pool(config);
  pool.on("error", () => {
    // An idle client dropped by the server: the pool replaces it on next use; it must
    // not crash the process.
  });
  // A checked-out client between two statements (a transaction, a pinned lock session)
  // gets no pool listener, and a server going away (a Postgres crash or restart, a
  // terminated backend) makes it emit 'error': unheard, that kills the process. The
  // statements in flight reject with the error anyway, and the pool discards a client
  // that is no longer queryable when it comes back.
  (pool as pg.Pool).on("connect", (client) => {
    client.on("error", () => {});
  });
  return pool;
}

export function createDatabase(opts: DatabaseOptions): Database {
  const driver = opts.driver ?? "pg";
  const max = opts.poolMax ?? 20;
  if (driver === "neon") {
    neonConfig.webSocketConstructor = ws;
    if (opts.neonWsProxy) {
      const proxy = opts.neonWsProxy;
      neonConfig.wsProxy = (host, port) => `${proxy}/v1?address=${host}:${port}`;
      neonConfig.useSecureWebSocket = false;
      neonConfig.pipelineTLS = false;
      neonConfig.pipelineConnect = false;
    }
  }
  const sessionUrl = opts.sessionUrl ?? opts.url;
  const split = sessionUrl !== opts.url;
  const pool = newPool(driver, opts.url, max, opts, !split);
  // Each pinned session (a running carrier's row lock, a LISTEN) holds one connection of
  // its own pool, so with separate endpoints each pool gets the full size.
  const sessionPool = split ? newPool(driver, sessionUrl, max, opts, true) : pool;
  const drizzleOver = (p: DriverPool) =>
    (p instanceof NeonPool
      ? drizzleNeon({ client: p, schema })
      : drizzlePg({ client: p, schema })) as unknown as Db;
  const db = drizzleOver(pool);
  let closed = false;
  return {
    db,
    sessionDb: split ? drizzleOver(sessionPool) : db,
    pool: sessionPool as unknown as SessionPool,
    driver,
    close: async () => {
      closed = true;
      await Promise.all([pool.end(), sessionPool === pool ? undefined : sessionPool.end()]);
    },
    isClosed: () => closed,
  };
}

/** What `db.execute` does inside drizzle, reached to give the statement a name. */
interface DrizzleInternals {
  dialect: { sqlToQuery(query: SQL): { sql: string; params: unknown[] } };
  session: {
    prepareQuery(
      query: { sql: string; params: unknown[] },
      fields: undefined,
      name: string | undefined,
      arrayMode: boolean,
    ): { execute(): Promise<unknown> };
  };
}

const statementNames = new Map<string, string>();

/**
 * Rows of a raw statement, whichever driver ran it (both return node-postgres results).
 * `prepare` names the statement after a hash of its text, so each connection parses and
 * plans it once and then only binds: for the few statements the engine sends per cell,
 * whose texts do not vary with their values. Never for statements whose text does.
 */
export async function queryRows<T>(
  db: Db,
  query: SQL,
  opts: { prepare?: boolean } = {},
): Promise<T[]> {
  if (!opts.prepare) {
    const result = (await db.execute(query)) as unknown as { rows: T[] };
    return result.rows;
  }
  const inner = db as unknown as DrizzleInternals;
  const built = inner.dialect.sqlToQuery(query);
  let name = statementNames.get(built.sql);
  if (!name) {
    name = `cf_${createHash("sha1").update(built.sql).digest("hex").slice(0, 20)}`;
    statementNames.set(built.sql, name);
  }
  const result = (await inner.session.prepareQuery(built, undefined, name, false).execute()) as {
    rows: T[];
  };
  return result.rows;
}
