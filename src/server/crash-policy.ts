/**
 * What a server or worker process does with a promise rejection nobody handled.
 * Invariant: losing the database (a Postgres crash or restart, a failover, a dropped
 * connection) never ends the process; anything else still does, as Node's default would.
 *
 * Why the exception: graphile-worker 0.17 marks a job done without awaiting it; when the
 * database is gone at that moment, the rejection is unhandled and Node exits. The engine
 * does not need that write: a carrier whose job stays locked is re-run as a no-op later
 * (its row lock and guarded transitions make that harmless), and the re-drive hands back
 * the cells of every lost session. Staying up lets the process reconnect by itself once
 * the database answers again, instead of waiting for a supervisor.
 */
import { isConnectionLoss } from "@db/sqlstate";
import type { Logger } from "@/config/log";

export function surviveDatabaseLoss(log: Logger): void {
  process.on("unhandledRejection", (reason) => {
    if (isConnectionLoss(reason)) {
      log.warn(
        { err: reason },
        "the database went away under a background write; continuing, it reconnects",
      );
      return;
    }
    log.fatal({ err: reason }, "unhandled promise rejection; exiting");
    process.exit(1);
  });
}
