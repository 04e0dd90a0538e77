"use client";
/**
 * The side form of the selected block, generated from its type's zod schema
 * (block-fields.ts): one input per field the schema has, with its bounds, expression and
 * template inputs that check as you type, and the schema run over the whole block on
 * every change, each issue under its field. `id`, `type` and `next` are the graph
 * editor's; the form writes the other fields and hands back the whole block, `next` and
 * any key it does not know kept as they were.
 */
import { type ReactNode, useEffect, useId, useMemo, useState } from "react";
import type { EnrichmentView } from "@/contracts/enrichments";
import type { BlockType } from "@/contracts/workflow";
import { answer, api, describeError } from "../api";
import { type BlockField, blockFields, isBlockType } from "./block-fields";
import { BLOCK_HELP, COMMON_FIELDS } from "./block-help";
import { blockIssues, issuesByField, withField, withGroupField } from "./block-values";
import type { ExpressionScope } from "./expression-check";
import {
  BooleanField,
  EnumField,
  FieldFrame,
  type FieldProps,
  inputId,
  JsonField,
  NumberField,
  NumberOrExpressionField,
  TextField,
} from "./form-fields";
import { MapField } from "./form-map-field";

export interface BlockFormProps {
  block: Record<string, unknown>;
  blockIds: string[];
  inputNames: string[];
  workflows: { id: string; name: string }[];
  onChange: (next: Record<string, unknown>) => void;
}

export function BlockForm(props: BlockFormProps): ReactNode {
  const { block } = props;
  const type = block.type;
  if (!isBlockType(type))
    return (
      <div className="form-block muted" data-testid="form-unknown-type">
        No form for a block of type {JSON.stringify(type ?? null)}: edit it as JSON.
      </div>
    );
  // A block of its own: text typed into one block's form never shows in another's.
  return <BlockFormOf key={`${String(block.id)}:${type}`} {...props} type={type} />;
}

type Enrichments =
  | { state: "loading" }
  | { state: "ready"; list: EnrichmentView[] }
  | { state: "error"; message: string };

function useEnrichments(wanted: boolean): Enrichments {
  const [loaded, setLoaded] = useState<Enrichments>({ state: "loading" });
  useEffect(() => {
    if (!wanted) return;
    let live = true;
    answer(api.GET("/api/enrichments")).then(
      (a) => live && setLoaded({ state: "ready", list: a.enrichments }),
      (err: unknown) => live && setLoaded({ state: "error", message: describeError(err) }),
    );
    return () => {
      live = false;
    };
  }, [wanted]);
  return loaded;
}

const helpOf = (type: BlockType, name: string) =>
  (
    BLOCK_HELP[type].fields.find((f) => f.name === name) ??
    COMMON_FIELDS.find((f) => f.name === name)
  )?.about;

function BlockFormOf(props: BlockFormProps & { type: BlockType }) {
  const { block, type, onChange } = props;
  const ids = useId();
  const fields = blockFields(type);
  const issues = useMemo(
    () => issuesByField(blockIssues(type, block, fields)),
    [type, block, fields],
  );
  const ownId = block.id;
  const scope = useMemo<ExpressionScope>(
    () => ({ inputNames: props.inputNames, blockIds: props.blockIds.filter((id) => id !== ownId) }),
    [props.inputNames, props.blockIds, ownId],
  );
  const enrichments = useEnrichments(type === "enrichment");
  const chosen =
    enrichments.state === "ready"
      ? enrichments.list.find((e) => e.id === block.enrichmentId)
      : undefined;

  const row = (field: BlockField, value: unknown, onValue: (v: unknown) => void): ReactNode => {
    const common: FieldProps = {
      field,
      value,
      onValue,
      ids,
      scope,
      issues: issues.get(field.path) ?? [],
      help: helpOf(type, field.name),
    };
    const k = field.kind;
    switch (k.kind) {
      case "text":
        return <TextField {...common} multiline={k.multiline} />;
      case "expression":
        return <TextField {...common} multiline={k.multiline} mode="expression" />;
      case "template":
        return <TextField {...common} multiline={k.multiline} mode="template" />;
      case "number":
        return <NumberField {...common} bounds={k} />;
      case "number-or-expression":
        return <NumberOrExpressionField {...common} bounds={k} />;
      case "enum":
        return <EnumField {...common} options={k.options} />;
      case "boolean":
        return <BooleanField {...common} />;
      case "json":
        return <JsonField {...common} object={k.object} />;
      case "map":
        return (
          <MapField
            {...common}
            values={k.values}
            expected={field.name === "inputs" ? chosen?.inputs.map((i) => i.id) : undefined}
          />
        );
      case "workflow":
        return <WorkflowSelect {...common} workflows={props.workflows} />;
      case "enrichment":
        return <EnrichmentSelect {...common} enrichments={enrichments} />;
      case "group":
        return (
          <fieldset className="form-group" data-testid={`form-${field.path}`}>
            <legend>
              {field.name}
              {common.help ? <span className="muted form-help"> — {common.help}</span> : null}
            </legend>
            {k.fields.map((sub) => (
              <div key={sub.path}>
                {row(sub, readKey(value, sub.name), (v) =>
                  onValue(withGroupField(value, sub.name, v, field.required)),
                )}
              </div>
            ))}
          </fieldset>
        );
    }
  };

  const blockLevel = issues.get("") ?? [];
  return (
    <form className="form-block" data-testid="form" onSubmit={(e) => e.preventDefault()}>
      <div className="form-title">
        <strong>{String(block.id ?? "")}</strong> <span className="muted">{type}</span>
      </div>
      {fields.map((f) => (
        <div key={f.path}>
          {row(f, block[f.name], (v) => onChange(withField(block, f.name, v)))}
        </div>
      ))}
      {blockLevel.length > 0 && (
        <div className="field-error" data-testid="form-issue-block">
          {blockLevel.map((m) => (
            <div key={m}>{m}</div>
          ))}
        </div>
      )}
    </form>
  );
}

const readKey = (v: unknown, key: string) =>
  typeof v === "object" && v !== null && !Array.isArray(v)
    ? (v as Record<string, unknown>)[key]
    : undefined;

function WorkflowSelect(props: FieldProps & { workflows: BlockFormProps["workflows"] }) {
  const { field, value, onValue, workflows } = props;
  const current = typeof value === "string" ? value : "";
  const known = current === "" || workflows.some((w) => w.id === current);
  return (
    <FieldFrame
      {...props}
      issues={known ? props.issues : ["not one of your workflows", ...props.issues]}
    >
      <select
        id={inputId(props.ids, field)}
        className="input"
        data-testid={`form-${field.path}`}
        value={current}
        onChange={(e) => onValue(e.target.value === "" ? undefined : e.target.value)}
      >
        <option value="">Choose a workflow…</option>
        {!known && <option value={current}>{current} (not found)</option>}
        {workflows.map((w) => (
          <option key={w.id} value={w.id}>
            {w.name}
          </option>
        ))}
      </select>
    </FieldFrame>
  );
}

/** The catalogue's enrichments; typed by id when it cannot be read. */
function EnrichmentSelect(props: FieldProps & { enrichments: Enrichments }) {
  const { field, value, onValue, enrichments } = props;
  const current = typeof value === "string" ? value : "";
  const set = (v: string) => onValue(v === "" ? undefined : v);
  if (enrichments.state !== "ready" || enrichments.list.length === 0)
    return (
      <FieldFrame
        {...props}
        help={
          enrichments.state === "error"
            ? `Couldn’t load the enrichments (${enrichments.message}): type its id.`
            : enrichments.state === "loading"
              ? "Loading the enrichments…"
              : "Type the enrichment's id."
        }
      >
        <input
          id={inputId(props.ids, field)}
          type="text"
          className="input"
          data-testid={`form-${field.path}`}
          value={current}
          onChange={(e) => set(e.target.value)}
        />
      </FieldFrame>
    );
  const list = enrichments.list;
  const known = current === "" || list.some((e) => e.id === current);
  const chosen = list.find((e) => e.id === current);
  return (
    <FieldFrame
      {...props}
      help={chosen ? `${chosen.description} (${chosen.cost} credits a lookup)` : props.help}
      issues={known ? props.issues : ["not an enrichment of this deployment", ...props.issues]}
    >
      <select
        id={inputId(props.ids, field)}
        className="input"
        data-testid={`form-${field.path}`}
        value={current}
        onChange={(e) => set(e.target.value)}
      >
        <option value="">Choose an enrichment…</option>
        {!known && <option value={current}>{current} (not found)</option>}
        {list.map((e) => (
          <option key={e.id} value={e.id}>
            {e.name}
          </option>
        ))}
      </select>
    </FieldFrame>
  );
}
