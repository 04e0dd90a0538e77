import type { Db } from "../../db/client";
import type { Logger } from "../config/log";

/** What every workspace-scoped service call gets: the database and who is asking. */
export interface ServiceContext {
  db: Db;
  workspaceId: string;
  log: Logger;
}
