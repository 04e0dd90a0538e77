import type { Db } from "@db/client";
import { secrets } from "@db/schema";
import { sql } from "drizzle-orm";
import type { SecretRecord } from "./read";

/**
 * Creates or replaces a workspace secret in one statement, so two PUTs racing on the same
 * name leave one of the values, never an error. `createdAt` survives a replacement.
 */
export async function putSecret(
  db: Db,
  secret: {
    workspaceId: string;
    name: string;
    /** Sealed by security/secret-box; the plain value never reaches the database. */
    ciphertext: string;
  },
): Promise<SecretRecord> {
  const { workspaceId, name, ciphertext } = secret;
  const [row] = await db
    .insert(secrets)
    .values({ workspaceId, name, ciphertext })
    .onConflictDoUpdate({
      target: [secrets.workspaceId, secrets.name],
      set: { ciphertext: sql`excluded.ciphertext`, updatedAt: sql`now()` },
    })
    .returning({ name: secrets.name, createdAt: secrets.createdAt, updatedAt: secrets.updatedAt });
  if (!row) throw new Error("secret upsert returned nothing");
  return row;
}
