import { getDatabase } from "@db/instance";
import { log } from "@/config/log";
import { EventFeeds } from "./feed";
import { EventHub } from "./hub";

const holder = globalThis as { __cellflowEventHub?: EventHub; __cellflowEventFeeds?: EventFeeds };

/** The process's event hub (one LISTEN connection shared by every stream). */
export function getEventHub(): EventHub {
  holder.__cellflowEventHub ??= new EventHub(
    getDatabase().pool,
    log().child({ component: "events" }),
  );
  return holder.__cellflowEventHub;
}

/** The process's table feeds (one reader per table shared by that table's streams). */
export function getEventFeeds(): EventFeeds {
  holder.__cellflowEventFeeds ??= new EventFeeds({
    db: getDatabase().db,
    hub: getEventHub(),
    log: log().child({ component: "events" }),
  });
  return holder.__cellflowEventFeeds;
}

export async function closeEventHub(): Promise<void> {
  const feeds = holder.__cellflowEventFeeds;
  holder.__cellflowEventFeeds = undefined;
  feeds?.close();
  const hub = holder.__cellflowEventHub;
  holder.__cellflowEventHub = undefined;
  await hub?.close();
}
