import { readEnv } from "@/config/env";
import { createDatabase, type Database } from "./client";

const holder = globalThis as { __cellflowDatabase?: Database };

/**
 * The process-wide database. Kept on globalThis because Next.js may load this module
 * more than once (route bundles) and every copy must share one pool.
 */
export function getDatabase(): Database {
  if (!holder.__cellflowDatabase) {
    const env = readEnv();
    if (!env.DATABASE_URL) {
      throw new Error(
        "DATABASE_URL is not set: start Cellflow with `npm start`, or set it to your Postgres",
      );
    }
    holder.__cellflowDatabase = createDatabase({
      url: env.DATABASE_URL,
      sessionUrl: env.DATABASE_URL_UNPOOLED,
      driver: env.DATABASE_DRIVER,
      poolMax: env.DATABASE_POOL_MAX,
      neonWsProxy: env.NEON_WS_PROXY,
    });
  }
  return holder.__cellflowDatabase;
}

export async function closeDatabase(): Promise<void> {
  const db = holder.__cellflowDatabase;
  holder.__cellflowDatabase = undefined;
  await db?.close();
}
