import { CreateScheduleRequest } from "@/contracts/schedules";
import { parseJsonBody } from "@/http/body";
import { workspaceRoute } from "@/http/handler";
import { respond } from "@/http/respond";
import { createSchedule, listSchedules } from "@/services/schedules";

export const GET = workspaceRoute<{ id: string }>(async (_req, ctx, { id }) =>
  respond(await listSchedules(ctx, id)),
);

export const POST = workspaceRoute<{ id: string }>(async (req, ctx, { id }) => {
  const body = await parseJsonBody(req, CreateScheduleRequest);
  return respond(await createSchedule(ctx, id, body), 201);
});
