import fs from "node:fs";
import path from "node:path";
import type { Db } from "@db/client";
import { generateApiKey } from "@/store/api-keys/keys";
import { registerApiKey } from "@/store/api-keys/register";
import { ensureDefaultWorkspace } from "@/store/workspaces/create";

export interface DefaultAccess {
  workspaceId: string;
  apiKey: string;
  /** Where the key came from, for the start-up banner. */
  source: "env" | "file" | "generated";
}

/**
 * The `default` workspace and its key: CELLFLOW_API_KEY when set; else the key kept in
 * `<dataDir>/api-key`; else a new one, written there (mode 0600) before it is registered,
 * so a crash between the two can never leave a registered key nobody knows.
 */
export async function ensureDefaultAccess(
  db: Db,
  dataDir: string,
  envKey: string | undefined,
): Promise<DefaultAccess> {
  const ws = await ensureDefaultWorkspace(db);
  const keyFile = path.join(dataDir, "api-key");
  let apiKey: string;
  let source: DefaultAccess["source"];
  if (envKey) {
    apiKey = envKey;
    source = "env";
  } else if (fs.existsSync(keyFile)) {
    apiKey = fs.readFileSync(keyFile, "utf8").trim();
    source = "file";
  } else {
    apiKey = generateApiKey();
    fs.mkdirSync(dataDir, { recursive: true });
    fs.writeFileSync(keyFile, `${apiKey}\n`, { mode: 0o600 });
    source = "generated";
  }
  const registered = await registerApiKey(db, {
    workspaceId: ws.id,
    key: apiKey,
    label: `default key (${source})`,
  });
  if (!registered.ok) {
    throw new Error(
      "The configured API key already belongs to another workspace; choose another CELLFLOW_API_KEY",
    );
  }
  return { workspaceId: ws.id, apiKey, source };
}
