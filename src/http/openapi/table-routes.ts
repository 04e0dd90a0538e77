/**
 * The operations under `/api/tables`: tables, rows, cells, runs, events, CSV and the
 * table's webhooks, schedules and saved views. Each entry names the contract its route validates with and the
 * contract its service answers with, so the document describes what the code does.
 */
import { z } from "zod";
import {
  CellAttemptsResponse,
  CellWithDetails,
  ResumeCellRequest,
  ResumeCellResponse,
} from "@/contracts/cells";
import { CsvImported } from "@/contracts/csv";
import { EventsQuery } from "@/contracts/events";
import { CreatedHook, CreateHookRequest, HookList } from "@/contracts/hooks";
import { TableProgress } from "@/contracts/progress";
import {
  DeletedRows,
  DeleteRowsRequest,
  InsertedRows,
  InsertRowsRequest,
  ListRowsQuery,
  PatchRowRequest,
  RowPage,
  RowView,
} from "@/contracts/rows";
import {
  CancelRunsRequest,
  CreateRunRequest,
  RunEstimate,
  RunList,
  RunRequestHeaders,
  RunStarted,
  RunsCancelled,
  RunView,
} from "@/contracts/runs";
import {
  CreateScheduleRequest,
  MAX_SCHEDULES_PER_TABLE,
  PatchScheduleRequest,
  Schedule,
  ScheduleList,
} from "@/contracts/schedules";
import {
  CreateTableRequest,
  PatchedTable,
  PatchTableRequest,
  TableList,
  TableView,
} from "@/contracts/table";
import {
  CreateViewRequest,
  MAX_VIEWS_PER_TABLE,
  PatchViewRequest,
  SavedView,
  ViewList,
} from "@/contracts/views";
import type { Operation } from "./operation";

const TABLE = { id: "The table's id" };
const ROW = { ...TABLE, rowId: "The row's id" };
const CELL = { ...ROW, groupId: "The group's id (the cell is the row's cell of that group)" };

const tables: Operation[] = [
  {
    method: "get",
    path: "/api/tables",
    operationId: "listTables",
    tag: "Tables",
    summary: "List the workspace's tables",
    access: "key",
    answers: [{ status: 200, description: "The tables", json: TableList }],
  },
  {
    method: "post",
    path: "/api/tables",
    operationId: "createTable",
    tag: "Tables",
    summary: "Create a table",
    description:
      "Invalid schema (an output column owned twice, a dependency cycle, an unknown column or workflow) → 400 with issues.",
    access: "key",
    body: { json: CreateTableRequest },
    answers: [{ status: 201, description: "The table", json: TableView }],
  },
  {
    method: "get",
    path: "/api/tables/{id}",
    operationId: "getTable",
    tag: "Tables",
    summary: "Get a table",
    access: "key",
    params: TABLE,
    answers: [{ status: 200, description: "The table", json: TableView }],
  },
  {
    method: "patch",
    path: "/api/tables/{id}",
    operationId: "patchTable",
    tag: "Tables",
    summary: "Edit a table",
    description:
      "The lists given replace the current ones; a group added with `autoRun` runs on the rows where it is eligible. Concurrent edits that keep colliding → 409. `autoRun: false` turns the table's auto-run switch off: no group fires by itself (inserts, edits, imports, insert webhooks, the cascade after a cell ends) until it is on again; it cancels nothing, and explicit runs, run webhooks and schedules go on. `autoRun: true` turns it on and needs `backfill`: `run` starts one run, mode `new`, of the auto-run groups (its `dispatchId` in the answer), `skip` leaves existing rows as they are. `backfill` without `autoRun: true` → 400. `maxCreditsPerRow: n | null` sets or clears the default budget per row that runs created afterwards without their own take (explicit, webhooks, auto-fires).",
    access: "key",
    params: TABLE,
    body: { json: PatchTableRequest },
    answers: [{ status: 200, description: "The table", json: PatchedTable }],
    errors: [409],
  },
  {
    method: "delete",
    path: "/api/tables/{id}",
    operationId: "deleteTable",
    tag: "Tables",
    summary: "Delete a table",
    description:
      "Stops the table's in-flight cells first, then deletes it with its rows, cells, runs, events and webhooks.",
    access: "key",
    params: TABLE,
    answers: [{ status: 204, description: "Deleted" }],
  },
];

const rows: Operation[] = [
  {
    method: "get",
    path: "/api/tables/{id}/rows",
    operationId: "listRows",
    tag: "Rows",
    summary: "List rows, a page at a time",
    description:
      "`view` applies a saved view's filter and order: a `where` given too is added to the view's (both must hold), an `orderBy` given too wins over the view's (with its `dir`). An unknown view → 404; a view that no longer fits the table (its where or orderBy names a column or group the table no longer has, or a condition its column's type no longer takes) → 409 naming it, until the view is edited or deleted; a hidden column the table no longer has is ignored.",
    access: "key",
    params: TABLE,
    query: ListRowsQuery,
    answers: [{ status: 200, description: "A page of rows", json: RowPage }],
    errors: [409],
  },
  {
    method: "post",
    path: "/api/tables/{id}/rows",
    operationId: "insertRows",
    tag: "Rows",
    summary: "Insert rows (at most 1,000 per call)",
    description:
      "Values are checked against their columns' types; eligible groups auto-run. Rows that would take the table past its plan's rows per table → 402 `limit_reached` naming the cap, and none of them is kept.",
    access: "key",
    params: TABLE,
    body: { json: InsertRowsRequest },
    answers: [{ status: 201, description: "The inserted rows", json: InsertedRows }],
    errors: [402],
  },
  {
    method: "post",
    path: "/api/tables/{id}/rows/delete",
    operationId: "deleteRows",
    tag: "Rows",
    summary: "Delete rows by id (at most 10,000) or by a where list (stops their in-flight cells)",
    description:
      "`rowIds` (ids the table does not have are ignored) or `where` (the run `where` conditions). Each row goes as `DELETE /rows/{rowId}` deletes it: its in-flight cells are stopped, and no worker writes into them afterwards. Deleted 5,000 rows per transaction: not atomic across those batches (a request that fails midway keeps the batches it committed).",
    access: "key",
    params: TABLE,
    body: { json: DeleteRowsRequest },
    answers: [{ status: 200, description: "How many rows were deleted", json: DeletedRows }],
  },
  {
    method: "get",
    path: "/api/tables/{id}/rows/{rowId}",
    operationId: "getRow",
    tag: "Rows",
    summary: "Get a row",
    access: "key",
    params: ROW,
    answers: [{ status: 200, description: "The row", json: RowView }],
  },
  {
    method: "patch",
    path: "/api/tables/{id}/rows/{rowId}",
    operationId: "patchRow",
    tag: "Rows",
    summary: "Edit a row's values (merged; re-arms the groups that depend on them)",
    access: "key",
    params: ROW,
    body: { json: PatchRowRequest },
    answers: [{ status: 200, description: "The row", json: RowView }],
  },
  {
    method: "delete",
    path: "/api/tables/{id}/rows/{rowId}",
    operationId: "deleteRow",
    tag: "Rows",
    summary: "Delete a row (stops its in-flight cells)",
    access: "key",
    params: ROW,
    answers: [{ status: 204, description: "Deleted" }],
  },
  {
    method: "post",
    path: "/api/tables/{id}/rows/{rowId}/cells/{groupId}/resume",
    operationId: "resumeCell",
    tag: "Cells",
    summary: "Resume a paused cell with the data its approval block outputs",
    description: "A wrong or stale execution id, or a cell that is not paused → 409.",
    access: "key",
    params: CELL,
    body: { json: ResumeCellRequest },
    answers: [{ status: 202, description: "Queued again", json: ResumeCellResponse }],
    errors: [409],
  },
  {
    method: "get",
    path: "/api/tables/{id}/rows/{rowId}/cells/{groupId}",
    operationId: "getCell",
    tag: "Cells",
    summary: "One cell with its details (what each provider did and cost)",
    access: "key",
    params: CELL,
    answers: [{ status: 200, description: "The cell", json: CellWithDetails }],
  },
  {
    method: "get",
    path: "/api/tables/{id}/rows/{rowId}/cells/{groupId}/attempts",
    operationId: "listCellAttempts",
    tag: "Cells",
    summary: "A cell's attempts, newest first (at most 20)",
    access: "key",
    params: CELL,
    answers: [{ status: 200, description: "The attempts", json: CellAttemptsResponse }],
  },
];

const runs: Operation[] = [
  {
    method: "get",
    path: "/api/tables/{id}/runs",
    operationId: "listRuns",
    tag: "Runs",
    summary: "List the table's runs (active first)",
    access: "key",
    params: TABLE,
    answers: [{ status: 200, description: "The runs", json: RunList }],
  },
  {
    method: "post",
    path: "/api/tables/{id}/runs",
    operationId: "createRun",
    tag: "Runs",
    summary: "Start a run (or, with `dryRun`, count what it would do)",
    description:
      "With an `Idempotency-Key` (1–255 characters, per table, kept 24 h) the request is safe to retry: the same key with the same request (compared as parsed, not as bytes) answers the run it started, as it stands now, with `Cellflow-Replayed: true`, also while that run is being created or after the first request failed once the run existed; the same key with another request → 409 `conflict`. A dry run neither records nor looks up its key. `maxCreditsPerRow` (absent: the table's default) is the run's budget per row: a paid call that would take the row's charged plus reserved credits in the run past it is not made, and its cell ends `completed` with outcome `over_budget`, outputs blank; the run goes on.",
    access: "key",
    params: TABLE,
    headers: RunRequestHeaders,
    body: { json: CreateRunRequest },
    answers: [
      {
        status: 202,
        description: "The run started (or, for a repeated Idempotency-Key, the run it started)",
        json: RunStarted,
        headers: { "cellflow-replayed": "`true` when this answers a repeated Idempotency-Key" },
      },
      { status: 200, description: "A dry run's figures; nothing is written", json: RunEstimate },
    ],
    errors: [409],
  },
  {
    method: "get",
    path: "/api/tables/{id}/runs/{dispatchId}",
    operationId: "getRun",
    tag: "Runs",
    summary: "Get a run and its cells' counts",
    access: "key",
    params: { ...TABLE, dispatchId: "The run's id (`dispatchId`)" },
    answers: [{ status: 200, description: "The run", json: RunView }],
  },
  {
    method: "get",
    path: "/api/tables/{id}/progress",
    operationId: "getTableProgress",
    tag: "Runs",
    summary: "The table's cells per group by status and outcome, and rows never run",
    description:
      "Read off counters kept per statement (no count over the table): the same cost at any size. Exact at rest; every group of the schema, in schema order.",
    access: "key",
    params: TABLE,
    answers: [{ status: 200, description: "The table's progress", json: TableProgress }],
  },
  {
    method: "post",
    path: "/api/tables/{id}/runs/cancel",
    operationId: "cancelRuns",
    tag: "Runs",
    summary: "Stop cells in flight (an empty body stops everything in the table)",
    access: "key",
    params: TABLE,
    body: { json: CancelRunsRequest, optional: true },
    answers: [{ status: 200, description: "How many cells were stopped", json: RunsCancelled }],
  },
];

const io: Operation[] = [
  {
    method: "get",
    path: "/api/tables/{id}/events",
    operationId: "tableEvents",
    tag: "Events",
    summary: "Follow the table's changes as server-sent events",
    description:
      "Each event has `id: <seq>`, `event: cell | dispatch | limit | schema | rows | progress` (or `reset` when the cursor is older than retention: refetch, then follow from `resumeFrom`) and `data: <json>`; `TableEvent` (`x-itemSchema`) gives each kind's data (`CellEventData`, `RowsEventData`, …). Readers ignore fields they do not know: fields are added, never renamed. The `Last-Event-ID` header or `?after=<seq>` replays what came after; a comment line every 15 s keeps the connection open.",
    access: "key",
    params: TABLE,
    query: EventsQuery,
    headers: z.object({
      "last-event-id": z
        .string()
        .optional()
        .describe("Replay what came after this event id (takes precedence over `after`)"),
    }),
    answers: [
      {
        status: 200,
        description: "The event stream",
        text: "text/event-stream",
        items: "TableEvent",
      },
    ],
  },
  {
    method: "get",
    path: "/api/tables/{id}/export",
    operationId: "exportCsv",
    tag: "CSV",
    summary: "Export every row as CSV (columns by name, in column order)",
    access: "key",
    params: TABLE,
    answers: [{ status: 200, description: "The CSV file (RFC 4180, CRLF)", text: "text/csv" }],
  },
  {
    method: "post",
    path: "/api/tables/{id}/import",
    operationId: "importCsv",
    tag: "CSV",
    summary: "Import a CSV file (all rows or none)",
    description:
      "Headers name columns by name or id. A header naming no column, or a value that does not fit its column → 400 with issues. A file whose rows would take the table past its plan's rows per table → 402 `limit_reached` naming the cap; over 500 MiB or 1,000,000 rows → 413. Refused, none of its rows is kept. The rows go in as the file arrives, and fire one run.",
    access: "key",
    params: TABLE,
    body: { csv: true },
    answers: [{ status: 201, description: "How many rows were inserted", json: CsvImported }],
    errors: [402],
  },
  {
    method: "get",
    path: "/api/tables/{id}/hooks",
    operationId: "listHooks",
    tag: "Webhooks",
    summary: "List the table's webhooks (never their secrets)",
    access: "key",
    params: TABLE,
    answers: [{ status: 200, description: "The hooks", json: HookList }],
  },
  {
    method: "post",
    path: "/api/tables/{id}/hooks",
    operationId: "createHook",
    tag: "Webhooks",
    summary: "Create a webhook (its signing secret is shown once)",
    access: "key",
    params: TABLE,
    body: { json: CreateHookRequest },
    answers: [{ status: 201, description: "The hook and its secret", json: CreatedHook }],
  },
  {
    method: "delete",
    path: "/api/tables/{id}/hooks/{hookId}",
    operationId: "revokeHook",
    tag: "Webhooks",
    summary: "Revoke a webhook (idempotent)",
    access: "key",
    params: { ...TABLE, hookId: "The hook's id" },
    answers: [{ status: 204, description: "Revoked" }],
  },
];

const VIEW = { ...TABLE, viewId: "The view's id" };

const views: Operation[] = [
  {
    method: "get",
    path: "/api/tables/{id}/views",
    operationId: "listViews",
    tag: "Views",
    summary: "List the table's saved views, oldest first",
    access: "key",
    params: TABLE,
    answers: [{ status: 200, description: "The views", json: ViewList }],
  },
  {
    method: "post",
    path: "/api/tables/{id}/views",
    operationId: "createView",
    tag: "Views",
    summary: "Save a view: a filter, an order and hidden columns, shared by the workspace",
    description: `A where, orderBy or hidden column the table does not have → 400. At most ${MAX_VIEWS_PER_TABLE} views per table (→ 409).`,
    access: "key",
    params: TABLE,
    body: { json: CreateViewRequest },
    answers: [{ status: 201, description: "The view", json: SavedView }],
    errors: [409],
  },
  {
    method: "patch",
    path: "/api/tables/{id}/views/{viewId}",
    operationId: "patchView",
    tag: "Views",
    summary: "Edit a view (the fields given replace its own; null clears where or orderBy)",
    access: "key",
    params: VIEW,
    body: { json: PatchViewRequest },
    answers: [{ status: 200, description: "The view", json: SavedView }],
  },
  {
    method: "delete",
    path: "/api/tables/{id}/views/{viewId}",
    operationId: "deleteView",
    tag: "Views",
    summary: "Delete a view",
    access: "key",
    params: VIEW,
    answers: [{ status: 204, description: "Deleted" }],
  },
];

const SCHEDULE = { ...TABLE, scheduleId: "The schedule's id" };

const scheduleOps: Operation[] = [
  {
    method: "get",
    path: "/api/tables/{id}/schedules",
    operationId: "listSchedules",
    tag: "Schedules",
    summary: "List the table's schedules, oldest first, with their next and last runs",
    access: "key",
    params: TABLE,
    answers: [{ status: 200, description: "The schedules", json: ScheduleList }],
  },
  {
    method: "post",
    path: "/api/tables/{id}/schedules",
    operationId: "createSchedule",
    tag: "Schedules",
    summary: "Run the table on a cron (five fields, in an IANA time zone, UTC by default)",
    description: `The body is the run's (as \`POST /runs\` takes it, without rowIds and dryRun) with \`cron\`, \`timezone\` and \`enabled\`. Each due time starts one run, once across every process; a due time while the schedule's last run is still active is skipped (\`skipped\`, \`lastSkippedAt\`); after downtime one run catches up, not one per missed time. A bad cron or time zone → 400. At most ${MAX_SCHEDULES_PER_TABLE} schedules per table (→ 409).`,
    access: "key",
    params: TABLE,
    body: { json: CreateScheduleRequest },
    answers: [{ status: 201, description: "The schedule", json: Schedule }],
    errors: [409],
  },
  {
    method: "patch",
    path: "/api/tables/{id}/schedules/{scheduleId}",
    operationId: "patchSchedule",
    tag: "Schedules",
    summary:
      "Change a schedule (the fields given replace its own; a new cron, time zone or enabling computes the next due time from now)",
    description:
      "Merged from the schedule as read and written only if nothing wrote it since (another PATCH, or a due time taken); one that lost merges again from a fresh read, so PATCHes at once all keep their fields. One that loses three times in a row → 409.",
    access: "key",
    params: SCHEDULE,
    body: { json: PatchScheduleRequest },
    answers: [{ status: 200, description: "The schedule", json: Schedule }],
    errors: [409],
  },
  {
    method: "delete",
    path: "/api/tables/{id}/schedules/{scheduleId}",
    operationId: "deleteSchedule",
    tag: "Schedules",
    summary: "Delete a schedule (a run it started goes on)",
    access: "key",
    params: SCHEDULE,
    answers: [{ status: 204, description: "Deleted" }],
  },
];

export const TABLE_OPERATIONS: Operation[] = [
  ...tables,
  ...rows,
  ...runs,
  ...io,
  ...scheduleOps,
  ...views,
];
