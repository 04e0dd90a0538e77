import type { Db } from "@db/client";
import type { TaskBackend } from "@/backends/port";
import type { Logger } from "@/config/log";

/** What every workspace-scoped service call gets: the database and who is asking. */
export interface ServiceContext {
  db: Db;
  workspaceId: string;
  log: Logger;
  /** Where carriers are enqueued (runs, auto-run). */
  backend: TaskBackend;
}
