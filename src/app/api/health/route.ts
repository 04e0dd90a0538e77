import { readEnv } from "@/config/env";
import { publicRoute } from "@/http/handler";
import { json } from "@/http/respond";
import { checkHealth } from "@/services/health";

export const dynamic = "force-dynamic";

export const GET = publicRoute(async (_req, _params, sys) => {
  const health = await checkHealth(sys.db, readEnv().TASK_BACKEND);
  return json(health, health.ok ? 200 : 503);
});
