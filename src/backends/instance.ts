import { getDatabase } from "@db/instance";
import { readEnv } from "@/config/env";
import { log } from "@/config/log";
import { LocalBackend } from "./local";
import type { TaskBackend } from "./port";
import { triggerBackendFromEnv } from "./trigger";

const holder = globalThis as { __cellflowBackend?: TaskBackend };

/** The process's task backend, chosen by TASK_BACKEND. */
export function getBackend(): TaskBackend {
  if (!holder.__cellflowBackend) {
    const env = readEnv();
    if (env.TASK_BACKEND === "trigger") {
      holder.__cellflowBackend = triggerBackendFromEnv(env, { log: log(), db: getDatabase().db });
      return holder.__cellflowBackend;
    }
    const url = env.DATABASE_URL_UNPOOLED ?? env.DATABASE_URL;
    if (!url) throw new Error("DATABASE_URL is not set");
    holder.__cellflowBackend = new LocalBackend(url);
  }
  return holder.__cellflowBackend;
}

export async function closeBackend(): Promise<void> {
  const b = holder.__cellflowBackend;
  holder.__cellflowBackend = undefined;
  await b?.close();
}
