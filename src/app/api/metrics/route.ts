import { requireMetricsToken } from "@/http/auth";
import { publicRoute } from "@/http/handler";
import { METRICS_CONTENT_TYPE } from "@/metrics/render";
import { scrapeMetrics } from "@/services/metrics";

export const dynamic = "force-dynamic";

export const GET = publicRoute(async (req, _params, sys) => {
  requireMetricsToken(req);
  const text = await scrapeMetrics(sys.db);
  return new Response(text, {
    status: 200,
    headers: { "content-type": METRICS_CONTENT_TYPE, "cache-control": "no-store" },
  });
});
