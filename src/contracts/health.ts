import { z } from "zod";

/**
 * `GET /api/health`: 200 when the database answers, 503 (same shape, `ok: false`) when it
 * does not; `backend` names where cells run.
 */
export const HealthView = z.object({
  ok: z.boolean(),
  db: z.enum(["ok", "error"]),
  backend: z.enum(["local", "trigger"]),
});
export type HealthView = z.infer<typeof HealthView>;
