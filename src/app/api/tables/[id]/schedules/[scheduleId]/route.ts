import { PatchScheduleRequest } from "@/contracts/schedules";
import { parseJsonBody } from "@/http/body";
import { workspaceRoute } from "@/http/handler";
import { respond } from "@/http/respond";
import { deleteSchedule, patchSchedule } from "@/services/schedules";

export const PATCH = workspaceRoute<{ id: string; scheduleId: string }>(
  async (req, ctx, { id, scheduleId }) => {
    const body = await parseJsonBody(req, PatchScheduleRequest);
    return respond(await patchSchedule(ctx, id, scheduleId, body));
  },
);

export const DELETE = workspaceRoute<{ id: string; scheduleId: string }>(
  async (_req, ctx, { id, scheduleId }) => respond(await deleteSchedule(ctx, id, scheduleId), 204),
);
