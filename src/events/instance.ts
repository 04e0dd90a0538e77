import { getDatabase } from "../../db/instance";
import { log } from "../config/log";
import { EventHub } from "./hub";

const holder = globalThis as { __cellflowEventHub?: EventHub };

/** The process's event hub (one LISTEN connection shared by every stream). */
export function getEventHub(): EventHub {
  holder.__cellflowEventHub ??= new EventHub(
    getDatabase().pool,
    log().child({ component: "events" }),
  );
  return holder.__cellflowEventHub;
}

export async function closeEventHub(): Promise<void> {
  const hub = holder.__cellflowEventHub;
  holder.__cellflowEventHub = undefined;
  await hub?.close();
}
