import { getDatabase } from "../../../../db/instance";
import { readEnv } from "../../../config/env";
import { publicRoute } from "../../../http/handler";
import { json } from "../../../http/respond";
import { checkHealth } from "../../../services/health";

export const dynamic = "force-dynamic";

export const GET = publicRoute(async () => {
  const health = await checkHealth(getDatabase().db, readEnv().TASK_BACKEND);
  return json(health, health.ok ? 200 : 503);
});
