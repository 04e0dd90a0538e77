import { workspaceRoute } from "@/http/handler";
import { respond } from "@/http/respond";
import { listSecrets } from "@/services/secrets";

export const GET = workspaceRoute(async (_req, ctx) => respond(await listSecrets(ctx)));
