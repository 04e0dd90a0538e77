import { workspaceRoute } from "@/http/handler";
import { respond } from "@/http/respond";
import { getSystem } from "@/services/system";

/** What the System page shows: active runs, queue, claims, providers, credits, cell errors. */
export const GET = workspaceRoute(async (_req, ctx) => respond(await getSystem(ctx)));
