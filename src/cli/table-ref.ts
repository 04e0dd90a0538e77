/**
 * Names people type for tables, columns and groups: each may be given by id or by name.
 * An exact id wins, then an exact name, then a name ignoring case; a name two things share
 * is refused with their ids, never guessed.
 */
import type { Schemas } from "@/client/cellflow-client";
import { type Connection, call } from "./connection";
import { apiError, type CliResult, usageError } from "./failure";

export type Table = Schemas["TableView"];

interface Named {
  id: string;
  name: string;
}

export type Picked<T> =
  | { ok: true; value: T }
  | { ok: false; reason: "unknown" | "ambiguous"; among: T[] };

export function pickByIdOrName<T extends Named>(items: readonly T[], ref: string): Picked<T> {
  const byId = items.find((i) => i.id === ref);
  if (byId) return { ok: true, value: byId };
  for (const same of [
    (i: T) => i.name === ref,
    (i: T) => i.name.toLowerCase() === ref.toLowerCase(),
  ]) {
    const found = items.filter(same);
    if (found.length === 1 && found[0]) return { ok: true, value: found[0] };
    if (found.length > 1) return { ok: false, reason: "ambiguous", among: found };
  }
  return { ok: false, reason: "unknown", among: [...items] };
}

const listed = (items: readonly Named[]) => items.map((i) => `${i.id} (${i.name})`).join(", ");

/** A column or group named in a flag; a miss is bad usage, listing what there is. */
export function pickPart<T extends Named>(
  items: readonly T[],
  ref: string,
  what: "column" | "group",
  table: Table,
): CliResult<T> {
  const found = pickByIdOrName(items, ref);
  if (found.ok) return found;
  if (found.reason === "ambiguous")
    return usageError(`${found.among.length} ${what}s are named "${ref}": give the id`, [
      listed(found.among),
    ]);
  return usageError(
    `table ${table.name} has no ${what} "${ref}"`,
    items.length ? [`its ${what}s: ${listed(items)}`] : [],
  );
}

/** The table a command names, from the key's list of tables. */
export async function findTable(conn: Connection, ref: string): Promise<CliResult<Table>> {
  const list = await call(conn, conn.client.GET("/api/tables"));
  if (!list.ok) return list;
  const found = pickByIdOrName(list.value.tables, ref);
  if (found.ok) return found;
  if (found.reason === "ambiguous")
    return apiError(`${found.among.length} tables are named "${ref}": give the id`, [
      listed(found.among),
    ]);
  return apiError(`no table has the id or name "${ref}"`, ["cellflow tables lists them"]);
}
