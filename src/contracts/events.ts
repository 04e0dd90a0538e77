import { z } from "zod";

/**
 * `GET /api/tables/:id/events?after=<seq>`: replay what came after that event id (the
 * `Last-Event-ID` header, when sent, takes precedence).
 */
export const EventsQuery = z.object({
  after: z
    .string()
    .regex(/^\d{1,15}$/, "must be an event id")
    .optional(),
});
export type EventsQuery = z.infer<typeof EventsQuery>;
