"use client";
/**
 * The enrichment catalog: what each enrichment takes and gives, what it costs, and how a
 * table group of kind `enrichment` maps it (input id → column id, output id → column).
 */
import { useState } from "react";
import type { EnrichmentView } from "@/contracts/enrichments";
import { answer, api } from "@/ui/api";
import { Shell } from "@/ui/shell";
import { useListFetch } from "@/ui/use-list-fetch";

/** A group using the enrichment, with placeholder column ids (`col_<field>`). */
function groupSnippet(e: EnrichmentView): string {
  const inputs = e.inputs.filter((i) => i.required);
  const shown = inputs.length > 0 ? inputs : e.inputs.slice(0, 1);
  const firstOutput = e.outputs[0];
  const group = {
    id: e.id,
    name: e.name,
    kind: "enrichment",
    enrichmentId: e.id,
    inputs: Object.fromEntries(shown.map((i) => [i.id, `col_${i.id}`])),
    outputs: firstOutput ? [{ columnId: `col_${firstOutput.id}`, from: firstOutput.id }] : [],
    autoRun: true,
  };
  return JSON.stringify(group, null, 2);
}

/** The mapping in one line: `"inputs": { "email": "<column id>" }, "outputs": [{ … "from": "domain" }]`. */
function mappingHint(e: EnrichmentView): string {
  const input = e.inputs.find((i) => i.required) ?? e.inputs[0];
  const output = e.outputs[0];
  const inputs = input ? `{ "${input.id}": "<column id>" }` : "{}";
  const outputs = output ? `[{ "columnId": "<column id>", "from": "${output.id}" }]` : "[]";
  return `"inputs": ${inputs}, "outputs": ${outputs}`;
}

function cost(credits: number): string {
  if (credits === 0) return "Free";
  return `${credits} credit${credits === 1 ? "" : "s"}`;
}

function CopyButton({ text }: { text: string }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setCopied(true);
      window.setTimeout(() => setCopied(false), 1500);
    } catch {
      // No clipboard (an insecure origin): the text is there to select by hand.
    }
  };
  return (
    <button type="button" className="btn btn-small" onClick={() => void copy()}>
      {copied ? "Copied" : "Copy"}
    </button>
  );
}

function EnrichmentCard({ e }: { e: EnrichmentView }) {
  const snippet = groupSnippet(e);
  return (
    <article className="card en-card" id={e.id}>
      <header className="en-card-head">
        <div>
          <h2>{e.name}</h2>
          <code className="muted">{e.id}</code>
        </div>
        <div className="spacer" />
        <span
          className={`en-cost${e.cost === 0 ? " free" : ""}`}
          title="Charged per value found; nothing for skipped or not found"
        >
          {cost(e.cost)}
          {e.cost > 0 && <span className="en-cost-unit"> per hit</span>}
        </span>
      </header>
      <p className="en-description">{e.description}</p>
      <div className="en-io">
        <div>
          <h3>Inputs</h3>
          <ul className="en-fields">
            {e.inputs.map((i) => (
              <li key={i.id}>
                <code>{i.id}</code> <span className="type">{i.type}</span>
                {i.required ? (
                  <span className="wf-req">required</span>
                ) : (
                  <span className="en-optional">optional</span>
                )}
                {i.description && <div className="muted en-field-about">{i.description}</div>}
              </li>
            ))}
          </ul>
        </div>
        <div>
          <h3>Outputs</h3>
          <ul className="en-fields">
            {e.outputs.map((o) => (
              <li key={o.id}>
                <code>{o.id}</code> <span className="type">{o.type}</span>
                {o.description && <div className="muted en-field-about">{o.description}</div>}
              </li>
            ))}
          </ul>
        </div>
      </div>
      <p className="en-mapping">
        <span className="muted">In a table group: </span>
        <code>{mappingHint(e)}</code>
      </p>
      <details className="en-usage">
        <summary>Full group example</summary>
        <div className="en-snippet">
          <pre className="wf-snippet">{snippet}</pre>
          <CopyButton text={snippet} />
        </div>
        <p className="muted en-hint">
          A group of kind <code>enrichment</code> maps <code>inputs</code> (enrichment input id →
          column id) and <code>outputs</code> (<code>from</code> = an output id, written to{" "}
          <code>columnId</code>). In a workflow, an <code>enrichment</code> block calls it with
          expressions instead:{" "}
          <code>{`"enrichmentId": "${e.id}", "inputs": { "${e.inputs[0]?.id ?? "input"}": "row.${e.inputs[0]?.id ?? "column"}" }`}</code>
        </p>
      </details>
    </article>
  );
}

const readEnrichments = async (): Promise<EnrichmentView[]> =>
  (await answer(api.GET("/api/enrichments"))).enrichments;

export default function EnrichmentsPage() {
  const { list, error, reload: load } = useListFetch(readEnrichments);

  return (
    <Shell>
      <div className="page-head">
        <div>
          <h1>Enrichments</h1>
          <p className="muted wf-subtitle">
            Ready-made lookups that fill columns from a row's data. Add one to a table as a group,
            or call it from a workflow with an <code>enrichment</code> block. Credits are charged
            only when a value is found.
          </p>
        </div>
      </div>
      {error && (
        <div className="notice notice-error" role="alert">
          Could not load the catalog: {error}{" "}
          <button className="btn btn-small" type="button" onClick={() => void load()}>
            Try again
          </button>
        </div>
      )}
      {list === null ? (
        !error && (
          <div className="card">
            <p className="muted">Loading the catalog…</p>
          </div>
        )
      ) : list.length === 0 ? (
        <div className="card wf-empty">
          <h2>No enrichments available</h2>
          <p className="muted">This workspace has no enrichments enabled.</p>
        </div>
      ) : (
        <div className="en-grid">
          {list.map((e) => (
            <EnrichmentCard key={e.id} e={e} />
          ))}
        </div>
      )}
    </Shell>
  );
}
