"use client";
/** The block types and their fields, to write a definition without reading code. */
import type { BlockType } from "@/contracts/workflow";
import { BLOCK_HELP, COMMON_FIELDS, EXPRESSION_CONTEXT, type FieldHelp } from "./block-help";
import { KNOWN_BLOCK_TYPES } from "./graph";

function Fields({ fields }: { fields: FieldHelp[] }) {
  return (
    <dl className="wf-fields">
      {fields.map((f) => (
        <div key={f.name}>
          <dt>
            <code>{f.name}</code>
            {f.required ? <span className="wf-req">required</span> : null}
          </dt>
          <dd>{f.about}</dd>
        </div>
      ))}
    </dl>
  );
}

export function BlockReference({
  onAdd,
  canAdd,
}: {
  onAdd: (type: BlockType) => void;
  /** Adding needs a definition that parses and has a `blocks` list. */
  canAdd: boolean;
}) {
  return (
    <div className="wf-reference">
      <p className="muted wf-reference-intro">
        A definition has <code>inputs</code> (<code>{"{ name, type, required }"}</code>, mapped from
        table columns) and <code>blocks</code>. The run starts at the <b>entry</b> block — the one
        no <code>next</code> points to — and follows <code>next</code>. Expressions are{" "}
        <a href="https://docs.jsonata.org/overview" target="_blank" rel="noreferrer">
          JSONata
        </a>
        ; text fields marked “templates” take <code>{"{{ expression }}"}</code>.
      </p>
      <details>
        <summary>Fields every block has</summary>
        <Fields fields={COMMON_FIELDS} />
      </details>
      <details>
        <summary>What expressions can read</summary>
        <dl className="wf-fields">
          {EXPRESSION_CONTEXT.map((c) => (
            <div key={c.name}>
              <dt>
                <code>{c.name}</code>
              </dt>
              <dd>{c.about}</dd>
            </div>
          ))}
        </dl>
      </details>
      {KNOWN_BLOCK_TYPES.map((type) => {
        const help = BLOCK_HELP[type];
        return (
          <details key={type}>
            <summary>
              <span className="kind">{type}</span> <span className="muted">{help.summary}</span>
            </summary>
            <Fields fields={help.fields} />
            <p className="wf-output">
              <span className="muted">Output:</span> {help.output}
            </p>
            <pre className="wf-snippet">{JSON.stringify(help.example, null, 2)}</pre>
            <button
              type="button"
              className="btn btn-small"
              disabled={!canAdd}
              onClick={() => onAdd(type)}
              title={canAdd ? undefined : "Fix the JSON first"}
            >
              Add to the definition
            </button>
          </details>
        );
      })}
    </div>
  );
}
