import { workspaceRoute } from "@/http/handler";
import { respond } from "@/http/respond";
import { listEnrichments } from "@/services/enrichments";

export const GET = workspaceRoute(async (_req, ctx) => respond(listEnrichments(ctx)));
