import { csvBody } from "@/http/body";
import { workspaceRoute } from "@/http/handler";
import { respond } from "@/http/respond";
import { importCsv } from "@/services/csv-import";

/**
 * The body is the CSV file itself (`Content-Type: text/csv`, at most 500 MiB), read as it
 * arrives: its rows go in while the rest is still being sent.
 */
export const POST = workspaceRoute<{ id: string }>(async (req, ctx, { id }) =>
  respond(await importCsv(ctx, id, csvBody(req)), 201),
);
