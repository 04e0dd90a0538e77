import { workspaceRoute } from "@/http/handler";
import { failureResponse } from "@/http/respond";
import { exportCsv } from "@/services/csv";

export const dynamic = "force-dynamic";

export const GET = workspaceRoute<{ id: string }>(async (_req, ctx, { id }) => {
  const csv = await exportCsv(ctx, id);
  if (!csv.ok) return failureResponse(csv.reason);
  return new Response(csv.value.body, {
    headers: {
      "content-type": "text/csv; charset=utf-8",
      // The filename holds only [A-Za-z0-9 ._-], so it needs no escaping inside the quotes.
      "content-disposition": `attachment; filename="${csv.value.filename}"`,
      "cache-control": "no-store",
    },
  });
});
