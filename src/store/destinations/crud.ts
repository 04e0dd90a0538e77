/**
 * A table's destinations: create, list, enable/disable, delete. Every statement names the
 * workspace and the table in its WHERE, so another workspace's id reads as absent.
 */
import type { Db } from "@db/client";
import { destinations } from "@db/schema";
import { and, asc, eq } from "drizzle-orm";

export interface DestinationRecord {
  id: string;
  tableId: string;
  url: string;
  name: string | null;
  enabled: boolean;
  createdAt: Date;
}

const columns = {
  id: destinations.id,
  tableId: destinations.tableId,
  url: destinations.url,
  name: destinations.name,
  enabled: destinations.enabled,
  createdAt: destinations.createdAt,
};

export interface NewDestination {
  id: string;
  workspaceId: string;
  tableId: string;
  url: string;
  name: string | null;
  /** Sealed by security/secret-box; the plain secret never reaches the database. */
  secretCiphertext: string;
}

export async function insertDestination(db: Db, d: NewDestination): Promise<DestinationRecord> {
  const [row] = await db.insert(destinations).values(d).returning(columns);
  if (!row) throw new Error("destination insert returned nothing");
  return row;
}

export async function listDestinations(
  db: Db,
  workspaceId: string,
  tableId: string,
): Promise<DestinationRecord[]> {
  return db
    .select(columns)
    .from(destinations)
    .where(and(eq(destinations.workspaceId, workspaceId), eq(destinations.tableId, tableId)))
    .orderBy(asc(destinations.createdAt), asc(destinations.id));
}

interface Scope {
  workspaceId: string;
  tableId: string;
  destinationId: string;
}

const inScope = (s: Scope) =>
  and(
    eq(destinations.id, s.destinationId),
    eq(destinations.workspaceId, s.workspaceId),
    eq(destinations.tableId, s.tableId),
  );

export async function getDestination(db: Db, s: Scope): Promise<DestinationRecord | null> {
  const [row] = await db.select(columns).from(destinations).where(inScope(s)).limit(1);
  return row ?? null;
}

/** Null when there is no such destination in this table and workspace. */
export async function setDestinationEnabled(
  db: Db,
  s: Scope,
  enabled: boolean,
): Promise<DestinationRecord | null> {
  const [row] = await db.update(destinations).set({ enabled }).where(inScope(s)).returning(columns);
  return row ?? null;
}

/** Its outbox entries go with it (cascade). False when there was none. */
export async function deleteDestination(db: Db, s: Scope): Promise<boolean> {
  const gone = await db.delete(destinations).where(inScope(s)).returning({ id: destinations.id });
  return gone.length > 0;
}
