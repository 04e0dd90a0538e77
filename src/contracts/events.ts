import { z } from "zod";
import { DISPATCH_STATUSES } from "@/domain/statuses";
import { JsonValue } from "./common";
import { TableProgress } from "./progress";
import { CellOutcome, CellStatus } from "./rows";

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

/*
 * The stream's events (`event: <kind>`, `data: <json>`), one schema per kind. Readers (the
 * web UI, the CLI) parse with these; the server's writers are SQL, so the suite checks
 * every event it produced against them, strictly (no field the schema does not name).
 * Fields are added, never renamed: a reader must ignore fields it does not know.
 */

/**
 * A cell changed. `status: null` means the cell is gone (cleared by an edit, withdrawn
 * by a Stop before it ran, or by a halted run): the grid drops it. A write that merged
 * outputs into the row carries them (`null` clears a column).
 */
export const CellEventData = z.object({
  rowId: z.string(),
  groupId: z.string(),
  // Not `.nullable()`: the document generator would make the named CellStatus nullable everywhere.
  status: z.union([CellStatus, z.null()]),
  executionId: z.string(),
  /** The attempt of the write: 0 while queued; each claim of the execution counts up. */
  attempt: z.number().int().nonnegative(),
  outcome: z.union([CellOutcome, z.null()]).optional(),
  error: z.string().nullable().optional(),
  runningBlockIds: z.array(z.string()).optional(),
  blockErrors: z.record(z.string(), z.string()).optional(),
  outputs: z.record(z.string(), JsonValue).optional(),
  /** A waterfall's cell that ended with a winner: its step (1-based), on the terminal event. */
  winningStep: z.number().int().optional(),
  /** The run that stamped the cell (on the stamp's event). */
  dispatchId: z.string().nullable().optional(),
  /** The attempt paused at a wait or an approval. */
  pause: z
    .object({
      blockId: z.string(),
      reason: z.enum(["approval", "wait"]),
      /** When a wait ends (epoch milliseconds); null for an approval. */
      resumeAt: z.number().nullable(),
    })
    .optional(),
  /** Gone because an edit of its inputs cleared it (it will be stamped again if eligible). */
  cleared: z.literal(true).optional(),
});
export type CellEventData = z.infer<typeof CellEventData>;

/**
 * An insert or delete of more than this many rows in one statement writes one `rows`
 * event without their ids (`bulk: true`, `rowIds: []`, `count`): a reader reads what it
 * shows again. A 1,000,000-row import thus writes 40 small events, not 40 of 25,000 ids.
 */
export const ROW_EVENT_IDS_UP_TO = 500;

/**
 * Rows were inserted, deleted or had values edited (`columns`: the ids edited). A bulk
 * one (`bulk: true`) names no row: `count` rows went in or out, `rowIds` is empty.
 */
export const RowsEventData = z.object({
  op: z.enum(["insert", "delete", "update"]),
  rowIds: z.array(z.string()),
  columns: z.array(z.string()).optional(),
  /** How many rows the statement inserted or deleted (on a bulk event). */
  count: z.number().int().positive().optional(),
  /** More than ROW_EVENT_IDS_UP_TO rows: their ids are not listed. */
  bulk: z.literal(true).optional(),
});
export type RowsEventData = z.infer<typeof RowsEventData>;

/** The table was created or its schema (columns, groups) or name changed. */
export const SchemaEventData = z.object({
  schemaVersion: z.number().int(),
  name: z.string(),
  /** The table's auto-run switch, sent when it flips (open grids show the new state). */
  autoRun: z.boolean().optional(),
  /** The table's default per-row budget, sent when it changes (null: cleared). */
  maxCreditsPerRow: z.number().nullable().optional(),
});
export type SchemaEventData = z.infer<typeof SchemaEventData>;

/**
 * A change of many cells in one statement writes a `cell` event per cell only up to this
 * many cells; above it, the run's `dispatch` event (with `stamped`, `cancelled` or
 * `unstamped`) stands
 * for them all, and a reader refetches what it shows.
 */
export const CELL_EVENTS_UP_TO = 50;

/**
 * A run's news: it ended (`completed`, `cancelled` by a Stop, `halted` by a limit), or,
 * while `active`, a page of its stamping committed (`stamped`) or a Stop cancelled some of
 * its cells (`cancelled`). `status` is the run's status when the event was written.
 */
export const DispatchEventData = z.object({
  dispatchId: z.string(),
  status: z.enum(DISPATCH_STATUSES),
  /**
   * One stamping page: its counts and the positions of the rows it looked at (after
   * `afterPosition`, up to `lastPosition`). `cell` events for its cells only when `cells`
   * is at most CELL_EVENTS_UP_TO.
   */
  stamped: z
    .object({
      cells: z.number().int().nonnegative(),
      rows: z.number().int().nonnegative(),
      afterPosition: z.number().int(),
      lastPosition: z.number().int(),
    })
    .optional(),
  /** A Stop cancelled this many of the run's cells, with no `cell` event for each. */
  cancelled: z.number().int().positive().optional(),
  /**
   * On a `halted` run: its limit took back this many queued cells (they are un-run again),
   * with no `cell` event for each; only when more than CELL_EVENTS_UP_TO.
   */
  unstamped: z.number().int().positive().optional(),
});
export type DispatchEventData = z.infer<typeof DispatchEventData>;

/** A run was halted by a limit: the month's credits (`credits`) or its own cap (`run_credit_cap`). */
export const LimitEventData = z.object({
  dispatchId: z.string(),
  reason: z.enum(["credits", "run_credit_cap"]),
  haltReason: z.string(),
  message: z.string(),
});
export type LimitEventData = z.infer<typeof LimitEventData>;

/**
 * The table's progress changed (the body of `GET /progress`): sent by the counters' fold,
 * at most once a second per table, only when a count moved.
 */
export const ProgressEventData = TableProgress;
export type ProgressEventData = z.infer<typeof ProgressEventData>;

/** The cursor asked for is older than what the server keeps: refetch, then follow from `resumeFrom`. */
export const ResetEventData = z.object({ reason: z.string(), resumeFrom: z.number().int() });
export type ResetEventData = z.infer<typeof ResetEventData>;

export const TABLE_EVENT_DATA = {
  cell: CellEventData,
  rows: RowsEventData,
  schema: SchemaEventData,
  dispatch: DispatchEventData,
  limit: LimitEventData,
  progress: ProgressEventData,
  reset: ResetEventData,
} as const;

/** One event of the stream: its kind and its data. */
export const TableEvent = z.discriminatedUnion("event", [
  z.object({ event: z.literal("cell"), data: CellEventData }),
  z.object({ event: z.literal("rows"), data: RowsEventData }),
  z.object({ event: z.literal("schema"), data: SchemaEventData }),
  z.object({ event: z.literal("dispatch"), data: DispatchEventData }),
  z.object({ event: z.literal("limit"), data: LimitEventData }),
  z.object({ event: z.literal("progress"), data: ProgressEventData }),
  z.object({ event: z.literal("reset"), data: ResetEventData }),
]);
export type TableEvent = z.infer<typeof TableEvent>;

/** An event as read off the stream; null for a kind this reader does not know or data that does not fit. */
export function parseTableEvent(event: string, data: unknown): TableEvent | null {
  const parsed = TableEvent.safeParse({ event, data });
  return parsed.success ? parsed.data : null;
}
