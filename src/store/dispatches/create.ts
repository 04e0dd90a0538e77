import type { Db } from "../../../db/client";
import { dispatches } from "../../../db/schema";
import { newId } from "../../domain/ids";
import type { RunMode } from "../../domain/statuses";

export interface NewDispatch {
  tableId: string;
  groupIds: string[];
  mode: RunMode;
  rowIds: string[] | null;
  rowLimit: number | null;
  window: number;
  scanline?: boolean;
}

export async function createDispatch(db: Db, d: NewDispatch): Promise<string> {
  const id = newId("run");
  await db.insert(dispatches).values({ id, ...d });
  return id;
}
