import type { Db } from "@db/client";
import { secrets } from "@db/schema";
import { and, eq } from "drizzle-orm";

/** Deletes a workspace secret; false when the workspace has none by that name. */
export async function deleteSecret(
  db: Db,
  secret: { workspaceId: string; name: string },
): Promise<boolean> {
  const { workspaceId, name } = secret;
  const rows = await db
    .delete(secrets)
    .where(and(eq(secrets.workspaceId, workspaceId), eq(secrets.name, name)))
    .returning({ name: secrets.name });
  return rows.length === 1;
}
