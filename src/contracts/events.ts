import { z } from "zod";
import { EVENT_KINDS } from "../domain/statuses";

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

/** The `event:` names of the stream: the kinds stored, and `reset` for a cursor too old. */
export const StreamEventName = z.enum([...EVENT_KINDS, "reset"]);
export type StreamEventName = z.infer<typeof StreamEventName>;

/** The data of a `reset` event: refetch, then follow from `resumeFrom`. */
export const ResetEventData = z.object({ reason: z.string(), resumeFrom: z.number().int() });
export type ResetEventData = z.infer<typeof ResetEventData>;
