import { readCsvBody } from "@/http/body";
import { workspaceRoute } from "@/http/handler";
import { respond } from "@/http/respond";
import { importCsv } from "@/services/csv";

/** The body is the CSV file itself (`Content-Type: text/csv`, at most 50 MiB). */
export const POST = workspaceRoute<{ id: string }>(async (req, ctx, { id }) => {
  const text = await readCsvBody(req);
  return respond(await importCsv(ctx, id, text), 201);
});
