/**
 * Plain node-postgres pools and clients for what drizzle does not serve: graphile-worker's
 * own pool, and a short-lived probe of who is connected. Made here so that nothing
 * outside db/ and src/store/ talks to the driver.
 */
import pg from "pg";

export type JobsPool = pg.Pool;

/**
 * A pool for graphile-worker that we end ourselves: graphile-worker ends a pool it made
 * without waiting, and takes its error listener off first, so an idle session that the
 * server then terminated (a Postgres stopped right after) crashed the process with an
 * unheard 'error'.
 */
export function graphilePool(connectionString: string, max: number): JobsPool {
  const pool = new pg.Pool({ connectionString, max });
  pool.on("error", () => {});
  pool.on("connect", (client) => client.on("error", () => {}));
  return pool;
}

/** A dedicated session that counts the sessions whose application name starts so. */
export interface SessionCounter {
  count(): Promise<number>;
  close(): Promise<void>;
}

export async function sessionCounter(
  url: string,
  applicationName: string,
  namePrefix: string,
): Promise<SessionCounter> {
  const client = new pg.Client({ connectionString: url, application_name: applicationName });
  await client.connect();
  return {
    async count() {
      const { rows } = await client.query<{ n: number }>(
        `select count(*)::int as n from pg_stat_activity
          where datname = current_database() and application_name like $1`,
        [`${namePrefix}%`],
      );
      return rows[0]?.n ?? 0;
    },
    async close() {
      await client.end().catch(() => {});
    },
  };
}
