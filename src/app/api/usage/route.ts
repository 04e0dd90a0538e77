import { workspaceRoute } from "@/http/handler";
import { respond } from "@/http/respond";
import { getUsage } from "@/services/usage";

/** This month's credits: used, the plan's limit, what remains, and by source. */
export const GET = workspaceRoute(async (_req, ctx) => respond(await getUsage(ctx)));
