/**
 * The contract schemas the document names (`#/components/schemas/<name>`). Naming marks
 * the very instances the routes validate with, so every place a contract uses one refers
 * to it instead of repeating it, and a generated client gets a type per name. The names
 * live in the generator's own registry, so zod's global registry (and anything else that
 * reads it) is left alone.
 */
import { zodToOpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import type { ZodType } from "zod";
import * as cells from "@/contracts/cells";
import * as common from "@/contracts/common";
import * as csv from "@/contracts/csv";
import * as destinations from "@/contracts/destinations";
import * as enrichments from "@/contracts/enrichments";
import * as events from "@/contracts/events";
import * as health from "@/contracts/health";
import * as hooks from "@/contracts/hooks";
import * as progress from "@/contracts/progress";
import * as rows from "@/contracts/rows";
import * as runs from "@/contracts/runs";
import * as secrets from "@/contracts/secrets";
import * as session from "@/contracts/session";
import * as system from "@/contracts/system";
import * as table from "@/contracts/table";
import * as where from "@/contracts/where";
import * as workflow from "@/contracts/workflow";
import * as workflowTest from "@/contracts/workflow-test";
import * as workspaces from "@/contracts/workspaces";

const NAMED: Record<string, ZodType> = {
  JsonValue: common.JsonValue,
  ApiError: common.ApiError,
  Issue: common.Issue,
  ErrorCode: common.ErrorCode,
  HealthView: health.HealthView,
  CreateWorkspaceRequest: workspaces.CreateWorkspaceRequest,
  CreatedWorkspace: workspaces.CreatedWorkspace,
  Plan: workspaces.Plan,
  UpdateWorkspaceRequest: workspaces.UpdateWorkspaceRequest,
  WorkspaceView: workspaces.WorkspaceView,
  UsageView: workspaces.UsageView,
  SystemView: system.SystemView,
  SystemRun: system.SystemRun,
  StampToRunning: system.StampToRunning,
  ProviderLoad: system.ProviderLoad,
  SystemCellError: system.SystemCellError,
  SignInRequest: session.SignInRequest,
  SessionView: session.SessionView,
  Column: table.Column,
  ColumnType: table.ColumnType,
  GroupOutput: table.GroupOutput,
  WorkflowGroup: table.WorkflowGroup,
  EnrichmentGroup: table.EnrichmentGroup,
  WaterfallGroup: table.WaterfallGroup,
  WaterfallStep: table.WaterfallStep,
  WaterfallValidation: table.WaterfallValidation,
  Group: table.Group,
  CreateTableRequest: table.CreateTableRequest,
  PatchTableRequest: table.PatchTableRequest,
  PatchedTable: table.PatchedTable,
  TableView: table.TableView,
  TableList: table.TableList,
  CellStatus: rows.CellStatus,
  CellOutcome: rows.CellOutcome,
  RowData: rows.RowData,
  InsertRowsRequest: rows.InsertRowsRequest,
  PatchRowRequest: rows.PatchRowRequest,
  CellView: rows.CellView,
  RowView: rows.RowView,
  RowPage: rows.RowPage,
  InsertedRows: rows.InsertedRows,
  ResumeCellRequest: cells.ResumeCellRequest,
  ResumeCellResponse: cells.ResumeCellResponse,
  ChildRun: cells.ChildRun,
  CellWithDetails: cells.CellWithDetails,
  CellAttempt: cells.CellAttempt,
  CellAttemptsResponse: cells.CellAttemptsResponse,
  WhereOp: where.WhereOp,
  ColumnCondition: where.ColumnCondition,
  CellCondition: where.CellCondition,
  OutcomeCondition: where.OutcomeCondition,
  WhereCondition: where.WhereCondition,
  CreateRunRequest: runs.CreateRunRequest,
  CancelRunsRequest: runs.CancelRunsRequest,
  RunEstimate: runs.RunEstimate,
  UnknownCredits: runs.UnknownCredits,
  RunStarted: runs.RunStarted,
  RunCounts: runs.RunCounts,
  RunView: runs.RunView,
  RunList: runs.RunList,
  RunsCancelled: runs.RunsCancelled,
  GroupProgress: progress.GroupProgress,
  TableProgress: progress.TableProgress,
  CsvImported: csv.CsvImported,
  CellEventData: events.CellEventData,
  RowsEventData: events.RowsEventData,
  SchemaEventData: events.SchemaEventData,
  DispatchEventData: events.DispatchEventData,
  LimitEventData: events.LimitEventData,
  ResetEventData: events.ResetEventData,
  TableEvent: events.TableEvent,
  HookAction: hooks.HookAction,
  CreateHookRequest: hooks.CreateHookRequest,
  HookView: hooks.HookView,
  CreatedHook: hooks.CreatedHook,
  HookList: hooks.HookList,
  HookRowsInserted: hooks.HookRowsInserted,
  CreateDestinationRequest: destinations.CreateDestinationRequest,
  PatchDestinationRequest: destinations.PatchDestinationRequest,
  DestinationView: destinations.DestinationView,
  CreatedDestination: destinations.CreatedDestination,
  DestinationList: destinations.DestinationList,
  DeliveryStatus: destinations.DeliveryStatus,
  DeliveryView: destinations.DeliveryView,
  DeliveryPage: destinations.DeliveryPage,
  PutSecretRequest: secrets.PutSecretRequest,
  SecretView: secrets.SecretView,
  SecretList: secrets.SecretList,
  EnrichmentView: enrichments.EnrichmentView,
  EnrichmentList: enrichments.EnrichmentList,
  WorkflowInput: workflow.WorkflowInput,
  TransformBlock: workflow.TransformBlock,
  ConditionBlock: workflow.ConditionBlock,
  HttpBlock: workflow.HttpBlock,
  ForeachBlock: workflow.ForeachBlock,
  WorkflowBlock: workflow.WorkflowBlock,
  ApprovalBlock: workflow.ApprovalBlock,
  WaitBlock: workflow.WaitBlock,
  FailBlock: workflow.FailBlock,
  EnrichmentBlock: workflow.EnrichmentBlock,
  LlmBlock: workflow.LlmBlock,
  Block: workflow.Block,
  WorkflowDefinition: workflow.WorkflowDefinition,
  CreateWorkflowRequest: workflow.CreateWorkflowRequest,
  UpdateWorkflowRequest: workflow.UpdateWorkflowRequest,
  WorkflowView: workflow.WorkflowView,
  WorkflowList: workflow.WorkflowList,
  DeployWorkflowRequest: workflow.DeployWorkflowRequest,
  DeployedWorkflow: workflow.DeployedWorkflow,
  WorkflowVersionSummary: workflow.WorkflowVersionSummary,
  WorkflowVersionList: workflow.WorkflowVersionList,
  WorkflowVersionView: workflow.WorkflowVersionView,
  TestWorkflowRequest: workflowTest.TestWorkflowRequest,
  TestBlockReport: workflowTest.TestBlockReport,
  TestWorkflowResponse: workflowTest.TestWorkflowResponse,
};

/** Names the contract schemas; safe to call again (a name is set, not added twice). */
export function nameComponents(): void {
  for (const [refId, schema] of Object.entries(NAMED))
    zodToOpenAPIRegistry.add(schema, { _internal: { refId } });
}
