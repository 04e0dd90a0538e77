import { z } from "zod";
import { ClientId, CreditAmount, EntityId, Name } from "./common";
import { ColumnCondition, WhereOp } from "./where";

export const COLUMN_TYPES = ["text", "number", "boolean", "date", "json", "select"] as const;
export const ColumnType = z.enum(COLUMN_TYPES);
export type ColumnType = z.infer<typeof ColumnType>;

export const Column = z
  .strictObject({
    id: ClientId,
    // Names are the keys of `row` in expressions, where `__proto__` would not be a key but
    // the object's prototype: the column's value would vanish from `row`.
    name: Name.refine((n) => n !== "__proto__", 'is reserved ("__proto__"); choose another name'),
    type: ColumnType,
    options: z.array(z.string().min(1).max(200)).min(1).max(500).optional(),
  })
  .superRefine((c, ctx) => {
    if (c.type === "select" && !c.options) {
      ctx.addIssue({ code: "custom", path: ["options"], message: "a select column needs options" });
    }
    if (c.type !== "select" && c.options) {
      ctx.addIssue({
        code: "custom",
        path: ["options"],
        message: "only select columns take options",
      });
    }
  });
export type Column = z.infer<typeof Column>;

export const GroupOutput = z.strictObject({
  columnId: ClientId,
  /** `<blockId>` or `<blockId>.<path>` for workflows; an output id for enrichments. */
  from: z
    .string()
    .min(1)
    .max(500)
    .regex(/^[a-z][a-z0-9_]{0,62}(\.[A-Za-z0-9_]+)*$/, "must be <blockId> or <blockId>.<path>"),
});
export type GroupOutput = z.infer<typeof GroupOutput>;

/**
 * A run condition: a column condition of the where vocabulary. Its value is typed
 * `unknown`, as the where compiler's checked conditions are, so a table read back through
 * the API client (whose JSON values are `unknown`) is a `TableView` as it is.
 */
export interface RunCondition {
  column: string;
  op: ColumnCondition["op"];
  value?: unknown;
}
const RunIf: z.ZodOptional<z.ZodType<RunCondition[]>> = z.array(ColumnCondition).max(20).optional();

const groupBase = {
  id: ClientId,
  name: Name,
  /** Input name → column id. */
  inputs: z.record(ClientId, ClientId).default({}),
  outputs: z.array(GroupOutput).max(100).default([]),
  dependsOn: z.array(ClientId).max(100).default([]),
  autoRun: z.boolean().default(false),
  /**
   * Run conditions: column conditions (all must hold) judged with the row's values when
   * the cell is claimed; not met, the cell ends `completed` / `condition_not_met`.
   */
  runIf: RunIf,
};

export const WorkflowGroup = z.strictObject({
  ...groupBase,
  kind: z.literal("workflow"),
  workflowId: EntityId,
  version: z.enum(["live", "deployed"]).default("live"),
});
export type WorkflowGroup = z.infer<typeof WorkflowGroup>;

export const EnrichmentGroup = z.strictObject({
  ...groupBase,
  kind: z.literal("enrichment"),
  enrichmentId: ClientId,
});
export type EnrichmentGroup = z.infer<typeof EnrichmentGroup>;

/** A waterfall's output name: what its steps map their answers to, and its outputs read. */
const WaterfallOutputName = z
  .string()
  .regex(
    /^[a-z][a-z0-9_]{0,62}$/,
    "must be lower case letters, digits and _, starting with a letter",
  );

/** A step output's path: an enrichment output id, or `<blockId>[.<path>]` of a workflow. */
const StepOutputPath = GroupOutput.shape.from;

/** A check of a step's answer (`empty`/`not_empty` take no value). */
export const WaterfallValidation = z.strictObject({
  output: WaterfallOutputName,
  op: WhereOp,
  value: z.union([z.string().max(2_000), z.number(), z.boolean()]).optional(),
});
export type WaterfallValidation = z.infer<typeof WaterfallValidation>;

const stepBase = {
  /** Input name → column id. */
  inputs: z.record(ClientId, ClientId).default({}),
  /** Output name → the step's output path. */
  outputs: z.record(WaterfallOutputName, StepOutputPath),
  /** All must hold for the answer to win; default: the group's first output is not empty. */
  validate: z.array(WaterfallValidation).max(20).optional(),
};

export const WaterfallEnrichmentStep = z.strictObject({ ...stepBase, enrichmentId: ClientId });
export const WaterfallWorkflowStep = z.strictObject({
  ...stepBase,
  workflowId: EntityId,
  version: z.enum(["live", "deployed"]).default("live"),
});
export const WaterfallStep = z.union([WaterfallEnrichmentStep, WaterfallWorkflowStep]);
export type WaterfallStep = z.infer<typeof WaterfallStep>;

/**
 * Steps tried in order until one's answer is found and valid; its outputs fill the
 * group's (`from` = an output name of the steps).
 */
export const WaterfallGroup = z.strictObject({
  id: groupBase.id,
  name: groupBase.name,
  outputs: groupBase.outputs,
  dependsOn: groupBase.dependsOn,
  autoRun: groupBase.autoRun,
  runIf: groupBase.runIf,
  kind: z.literal("waterfall"),
  steps: z.array(WaterfallStep).max(10),
});
export type WaterfallGroup = z.infer<typeof WaterfallGroup>;

export const Group = z.discriminatedUnion("kind", [WorkflowGroup, EnrichmentGroup, WaterfallGroup]);
export type Group = z.infer<typeof Group>;

export const TableSchema = z.object({
  columns: z.array(Column).max(500),
  groups: z.array(Group).max(100),
});
export type TableSchema = z.infer<typeof TableSchema>;

export const CreateTableRequest = z.strictObject({
  name: Name,
  columns: z.array(Column).max(500).default([]),
  groups: z.array(Group).max(100).default([]),
});
export type CreateTableRequest = z.infer<typeof CreateTableRequest>;

/** Turning the auto-run switch back on: run the auto-run groups where they never ran, or not. */
export const AUTO_RUN_BACKFILLS = ["run", "skip"] as const;

export const PatchTableRequest = z
  .strictObject({
    name: Name.optional(),
    columns: z.array(Column).max(500).optional(),
    groups: z.array(Group).max(100).optional(),
    /** The table's auto-run switch: off, no group fires by itself. */
    autoRun: z.boolean().optional(),
    /** Required with `autoRun: true`, and only then. */
    backfill: z.enum(AUTO_RUN_BACKFILLS).optional(),
    /**
     * The default per-row budget of the runs created from now on without their own
     * (explicit, auto-fired, and cells of no run); null clears it.
     */
    maxCreditsPerRow: CreditAmount.nullable().optional(),
  })
  .superRefine((p, ctx) => {
    if (p.autoRun === true && !p.backfill)
      ctx.addIssue({
        code: "custom",
        path: ["backfill"],
        message:
          'turning auto-run on needs "run" (the auto-run groups run on the rows where they never ran) or "skip"',
      });
    if (p.backfill && p.autoRun !== true)
      ctx.addIssue({
        code: "custom",
        path: ["backfill"],
        message: "only goes with autoRun: true",
      });
  });
export type PatchTableRequest = z.infer<typeof PatchTableRequest>;

export const TableView = z.object({
  id: z.string(),
  name: z.string(),
  columns: z.array(Column),
  groups: z.array(Group),
  rowCount: z.number().int(),
  schemaVersion: z.number().int(),
  /** The auto-run switch (default on): off, no group fires by itself. */
  autoRun: z.boolean(),
  /** The default per-row budget in credits (null: none). */
  maxCreditsPerRow: z.number().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type TableView = z.infer<typeof TableView>;

/** The table after a patch, with the backfill's run when `backfill: "run"` started one. */
export const PatchedTable = TableView.extend({ dispatchId: z.string().optional() });
export type PatchedTable = z.infer<typeof PatchedTable>;

export const TableList = z.object({ tables: z.array(TableView) });
export type TableList = z.infer<typeof TableList>;
