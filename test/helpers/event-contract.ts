/**
 * Every event the server wrote fits the stream's contract (src/contracts/events.ts).
 * The writers are SQL in a dozen statements, so no type links them to the schemas the
 * readers parse with; this check does, over every event a test file produced. Strict:
 * a field the schema does not name is a finding too (the schema must say what is sent).
 */
import pg from "pg";
import type { z } from "zod";
import { TABLE_EVENT_DATA } from "@/contracts/events";

type Kind = keyof typeof TABLE_EVENT_DATA;
const isKind = (kind: string): kind is Kind => kind in TABLE_EVENT_DATA;

/** What is wrong with one event's data, or null when it fits its kind's schema exactly. */
export function eventContractBreach(kind: string, data: unknown): string | null {
  if (!isKind(kind)) return `unknown kind ${kind}`;
  const schema: z.ZodObject = TABLE_EVENT_DATA[kind];
  const parsed = schema.safeParse(data);
  if (!parsed.success)
    return parsed.error.issues
      .map((i) => `${i.path.join(".") || "(data)"}: ${i.message}`)
      .join("; ");
  const extra = Object.keys(data as object).filter((k) => !(k in schema.shape));
  return extra.length > 0 ? `fields the schema does not name: ${extra.join(", ")}` : null;
}

/** The events in a database that break the contract, described (at most `limit`). */
export async function eventsOutsideContract(url: string, limit = 5): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ id: string; kind: string; data: unknown }>(
      "select id::text, kind::text, data from events order by id",
    );
    const found: string[] = [];
    for (const row of rows) {
      const breach = eventContractBreach(row.kind, row.data);
      if (breach)
        found.push(`event ${row.id} (${row.kind} ${JSON.stringify(row.data)}): ${breach}`);
      if (found.length >= limit) break;
    }
    return found;
  } finally {
    await client.end();
  }
}
