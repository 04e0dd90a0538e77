import { readEnv } from "../config/env";
import { LocalBackend } from "./local";
import type { TaskBackend } from "./port";

const holder = globalThis as { __cellflowBackend?: TaskBackend };

/** The process's task backend, chosen by TASK_BACKEND. */
export function getBackend(): TaskBackend {
  if (!holder.__cellflowBackend) {
    const env = readEnv();
    if (env.TASK_BACKEND === "trigger") {
      throw new Error("TASK_BACKEND=trigger is not available in this version; use local");
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
