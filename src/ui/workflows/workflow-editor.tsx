"use client";
/**
 * The workflow editor: the name, the definition as JSON (syntax errors as you type, the
 * API's issues after Save, each pointing into the text), the block graph it describes,
 * Save, Deploy, and a reference of the block types. Unsaved changes are marked, and
 * leaving the page with them asks first.
 */
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import type { BlockType, WorkflowView } from "../../contracts/workflow";
import { ApiError, api, describeError, type Issue } from "../api";
import { canAddBlock, withBlockAdded } from "./block-help";
import { BlockList } from "./block-list";
import { BlockReference } from "./block-reference";
import { CodeEditor, replaceText, revealSpan } from "./code-editor";
import { plural, timeAgo } from "./format";
import {
  blockAtOffset,
  blockIndexOfPath,
  type DefinitionSummary,
  describeDefinition,
  pathLabel,
} from "./graph";
import { canonicalJson, lineColumn, parseJsonText, spanOfPath } from "./json-text";

/** The API reports definition issues under this path. */
const DEF = "definition";

type Load =
  | { state: "loading" }
  | { state: "missing" }
  | { state: "failed"; message: string }
  | { state: "ready" };

/** What was last saved: the name and the definition's canonical JSON. */
interface Baseline {
  name: string;
  definition: string;
}

function uniqueIssues(issues: Issue[]): Issue[] {
  const seen = new Set<string>();
  return issues.filter((i) => {
    const key = `${i.path}\u0000${i.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

export function WorkflowEditor({ id }: { id: string }) {
  const [load, setLoad] = useState<Load>({ state: "loading" });
  const [attempt, setAttempt] = useState(0);
  const [name, setName] = useState("");
  const [text, setText] = useState("");
  const [baseline, setBaseline] = useState<Baseline>({ name: "", definition: "" });
  const [deployedVersion, setDeployedVersion] = useState<number | null>(null);
  const [savedAt, setSavedAt] = useState<string | null>(null);
  const [busy, setBusy] = useState<"saving" | "deploying" | null>(null);
  const [issues, setIssues] = useState<Issue[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [selected, setSelected] = useState<number | null>(null);
  const [lastGood, setLastGood] = useState<DefinitionSummary | null>(null);
  const [, setTick] = useState(0);
  const textarea = useRef<HTMLTextAreaElement>(null);
  const path = `/api/workflows/${encodeURIComponent(id)}`;

  useEffect(() => {
    // `attempt` is only there to load again after a failure.
    void attempt;
    let cancelled = false;
    const run = async () => {
      try {
        const w = await api<WorkflowView>("GET", path);
        if (cancelled) return;
        setName(w.name);
        setText(JSON.stringify(w.definition, null, 2));
        setBaseline({ name: w.name, definition: canonicalJson(w.definition) });
        setDeployedVersion(w.deployedVersion);
        setSavedAt(w.updatedAt);
        setLoad({ state: "ready" });
      } catch (err) {
        if (cancelled) return;
        if (err instanceof ApiError && err.status === 404) setLoad({ state: "missing" });
        else setLoad({ state: "failed", message: describeError(err) });
      }
    };
    void run();
    return () => {
      cancelled = true;
    };
  }, [path, attempt]);

  // "Saved 3 minutes ago" stays true.
  useEffect(() => {
    const timer = window.setInterval(() => setTick((n) => n + 1), 30_000);
    return () => window.clearInterval(timer);
  }, []);

  const parsed = useMemo(() => parseJsonText(text), [text]);
  const current = useMemo(() => (parsed.ok ? describeDefinition(parsed.value) : null), [parsed]);
  useEffect(() => {
    if (current) setLastGood(current);
  }, [current]);
  const summary = current ?? lastGood;
  const stale = current === null;
  const canonical = useMemo(() => (parsed.ok ? canonicalJson(parsed.value) : null), [parsed]);

  const trimmedName = name.trim();
  const ready = load.state === "ready";
  const dirty = ready && (trimmedName !== baseline.name || canonical !== baseline.definition);
  const canSave = ready && parsed.ok && trimmedName !== "" && busy === null;

  const nameIssues = useMemo(() => issues.filter((i) => i.path === "name"), [issues]);
  const defIssues = useMemo(() => issues.filter((i) => i.path !== "name"), [issues]);
  const blockIds = useMemo(() => summary?.blocks.map((b) => b.id) ?? [], [summary]);

  const issueLines = useMemo(() => {
    const lines = new Set<number>();
    if (!parsed.ok) return lines;
    for (const i of defIssues) {
      const span = spanOfPath(parsed.spans, i.path, DEF);
      if (span) lines.add(lineColumn(text, span.start).line);
    }
    return lines;
  }, [parsed, defIssues, text]);

  const issueCounts = useMemo(() => {
    const counts = new Map<number, number>();
    const add = (index: number | null) => {
      if (index !== null) counts.set(index, (counts.get(index) ?? 0) + 1);
    };
    for (const i of defIssues) add(blockIndexOfPath(i.path, DEF));
    for (const p of current?.problems ?? []) add(blockIndexOfPath(p.path));
    return counts;
  }, [defIssues, current]);

  // Leaving with unsaved changes asks first (links and the nav are full page loads).
  useEffect(() => {
    if (!dirty) return;
    const onBeforeUnload = (e: BeforeUnloadEvent) => {
      e.preventDefault();
      e.returnValue = "";
    };
    window.addEventListener("beforeunload", onBeforeUnload);
    return () => window.removeEventListener("beforeunload", onBeforeUnload);
  }, [dirty]);

  /** Selects what a path names in the text (its nearest existing parent otherwise). */
  const reveal = (issuePath: string, prefix: string) => {
    const index = blockIndexOfPath(issuePath, prefix);
    if (index !== null) setSelected(index);
    if (!parsed.ok || !textarea.current) return;
    const span = spanOfPath(parsed.spans, issuePath, prefix);
    if (span) revealSpan(textarea.current, span);
  };

  const save = async (): Promise<boolean> => {
    if (!canSave || !parsed.ok) return false;
    const definition = parsed.value;
    const sentCanonical = canonicalJson(definition);
    setBusy("saving");
    setError(null);
    setNotice(null);
    try {
      const w = await api<WorkflowView>("PUT", path, { name: trimmedName, definition });
      // The baseline is what was sent: the API fills defaults in, which are no edit.
      setBaseline({ name: w.name, definition: sentCanonical });
      setSavedAt(w.updatedAt);
      setDeployedVersion(w.deployedVersion);
      setIssues([]);
      return true;
    } catch (err) {
      if (err instanceof ApiError && err.issues.length > 0) {
        setIssues(uniqueIssues(err.issues));
        setError(err.message);
      } else {
        setIssues([]);
        setError(describeError(err));
      }
      return false;
    } finally {
      setBusy(null);
    }
  };

  const deploy = async () => {
    if (dirty && !(await save())) return;
    setBusy("deploying");
    setError(null);
    setNotice(null);
    try {
      const r = await api<{ version: number }>("POST", `${path}/deploy`);
      setDeployedVersion(r.version);
      setNotice(`Deployed version ${r.version}`);
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(null);
    }
  };

  // Ctrl/⌘+S saves; the handler reads the latest `save` through a ref.
  const saveRef = useRef<() => Promise<boolean>>(save);
  const dirtyRef = useRef(dirty);
  useEffect(() => {
    saveRef.current = save;
    dirtyRef.current = dirty;
  });
  const onKeyDown = useCallback((e: KeyboardEvent) => {
    if ((e.metaKey || e.ctrlKey) && !e.altKey && e.key.toLowerCase() === "s") {
      e.preventDefault();
      if (dirtyRef.current) void saveRef.current();
    }
  }, []);
  useEffect(() => {
    window.addEventListener("keydown", onKeyDown);
    return () => window.removeEventListener("keydown", onKeyDown);
  }, [onKeyDown]);

  const format = () => {
    if (!parsed.ok || !textarea.current) return;
    replaceText(textarea.current, JSON.stringify(parsed.value, null, 2), setText);
  };

  const addBlock = (type: BlockType) => {
    if (!parsed.ok || !textarea.current) return;
    const added = withBlockAdded(parsed.value, type);
    if (!added) return;
    const next = JSON.stringify(added.definition, null, 2);
    replaceText(textarea.current, next, setText);
    const after = parseJsonText(next);
    const index = Array.isArray(added.definition.blocks) ? added.definition.blocks.length - 1 : -1;
    const span = after.ok ? after.spans.get(`blocks.${index}`) : undefined;
    if (span) revealSpan(textarea.current, span);
    setSelected(index);
    setNotice(
      `Added block “${added.id}”. Point a "next" at it from another block, or it becomes a second entry.`,
    );
  };

  const onCaret = (offset: number) => {
    if (parsed.ok && current)
      setSelected(blockAtOffset(parsed.spans, current.blocks.length, offset));
  };

  if (load.state !== "ready") {
    return (
      <>
        <div className="page-head">
          <a href="/workflows" className="wf-crumb">
            Workflows
          </a>
          <span className="muted">/</span>
        </div>
        {load.state === "loading" && (
          <div className="card">
            <p className="muted">Loading the workflow…</p>
          </div>
        )}
        {load.state === "missing" && (
          <div className="card wf-empty">
            <h2>This workflow does not exist</h2>
            <p className="muted">It may have been removed, or it belongs to another workspace.</p>
            <a className="btn" href="/workflows">
              Back to workflows
            </a>
          </div>
        )}
        {load.state === "failed" && (
          <div className="notice notice-error">
            Could not load the workflow: {load.message}{" "}
            <button
              type="button"
              className="btn btn-small"
              onClick={() => {
                setLoad({ state: "loading" });
                setAttempt((n) => n + 1);
              }}
            >
              Try again
            </button>
          </div>
        )}
      </>
    );
  }

  const saveTitle = !parsed.ok
    ? "Fix the JSON syntax error first"
    : trimmedName === ""
      ? "Give the workflow a name first"
      : undefined;

  return (
    <>
      <div className="page-head wf-head">
        <a href="/workflows" className="wf-crumb">
          Workflows
        </a>
        <span className="muted">/</span>
        <h1>{trimmedName || "Untitled workflow"}</h1>
        {deployedVersion === null ? (
          <span className="wf-version none" title="Tables can only run the live draft">
            Not deployed
          </span>
        ) : (
          <span className="wf-version" title="The version tables pinned to “deployed” run">
            Deployed · v{deployedVersion}
          </span>
        )}
        <div className="spacer" />
        <span className={`wf-save-state${dirty ? " dirty" : ""}`} aria-live="polite">
          {busy === "saving"
            ? "Saving…"
            : dirty
              ? "Unsaved changes"
              : savedAt
                ? `Saved ${timeAgo(savedAt)}`
                : "Saved"}
        </span>
        <button
          type="button"
          className="btn"
          disabled={!canSave || !dirty}
          title={saveTitle ?? "Save the draft (Ctrl/⌘+S)"}
          onClick={() => void save()}
        >
          {busy === "saving" ? "Saving…" : "Save"}
        </button>
        <button
          type="button"
          className="btn btn-primary"
          disabled={busy !== null || (dirty && !canSave)}
          title={
            (dirty ? saveTitle : undefined) ??
            "Freeze the saved draft as the next version; tables on “deployed” run it"
          }
          onClick={() => void deploy()}
        >
          {busy === "deploying" ? "Deploying…" : dirty ? "Save & deploy" : "Deploy"}
        </button>
      </div>

      {notice && (
        <div className="notice notice-ok" role="status">
          {notice}
        </div>
      )}
      {error && (
        <div className="notice notice-error" role="alert">
          {error}
          {defIssues.length > 0 ? " — see the issues under the definition." : ""}
        </div>
      )}

      <div className="wf-layout">
        <section className="card wf-main">
          <form
            className="field"
            onSubmit={(e) => {
              e.preventDefault();
              void save();
            }}
          >
            <label htmlFor="wf-name">Name</label>
            <input
              id="wf-name"
              className={`input${trimmedName === "" || nameIssues.length > 0 ? " invalid" : ""}`}
              value={name}
              maxLength={200}
              onChange={(e) => setName(e.target.value)}
              placeholder="e.g. Classify company size"
            />
            {trimmedName === "" && <span className="field-error">A workflow needs a name.</span>}
            {nameIssues.map((i) => (
              <span key={i.message} className="field-error">
                {i.message}
              </span>
            ))}
          </form>

          <div className="field wf-definition">
            <div className="wf-definition-head">
              <label htmlFor="wf-definition">Definition (JSON)</label>
              <span className="muted wf-keys">
                Tab indents · Esc leaves the editor · Ctrl/⌘+S saves
              </span>
            </div>
            <CodeEditor
              value={text}
              onChange={setText}
              textareaRef={textarea}
              errorLine={parsed.ok ? null : parsed.error.line}
              issueLines={issueLines}
              onCaret={onCaret}
              invalid={!parsed.ok}
              label="Workflow definition (JSON)"
              describedBy="wf-definition-status"
            />
            <div className="wf-status-line" id="wf-definition-status">
              {parsed.ok ? (
                <span className="muted">
                  Valid JSON · {plural(current?.blocks.length ?? 0, "block")} ·{" "}
                  {plural(current?.inputs.length ?? 0, "input")}
                </span>
              ) : (
                <span className="field-error" role="alert">
                  Line {parsed.error.line}, column {parsed.error.column}: {parsed.error.message}
                </span>
              )}
              <div className="spacer" />
              {!parsed.ok && (
                <button
                  type="button"
                  className="btn btn-small"
                  onClick={() => {
                    if (textarea.current)
                      revealSpan(textarea.current, {
                        start: parsed.error.offset,
                        end: parsed.error.offset,
                      });
                  }}
                >
                  Go to error
                </button>
              )}
              <button
                type="button"
                className="btn btn-small"
                disabled={!parsed.ok}
                onClick={format}
              >
                Format
              </button>
            </div>

            {defIssues.length > 0 && (
              <div className="wf-issues" role="alert">
                <div className="wf-issues-title">
                  {plural(defIssues.length, "issue")} from the last save
                  {parsed.ok ? " — click one to find it in the text" : ""}
                </div>
                <ul>
                  {defIssues.map((i) => (
                    <li key={`${i.path}\u0000${i.message}`}>
                      <button
                        type="button"
                        className="wf-issue"
                        disabled={!parsed.ok}
                        onClick={() => reveal(i.path, DEF)}
                      >
                        <code>{pathLabel(i.path, blockIds, DEF)}</code>
                        <span>{i.message}</span>
                      </button>
                    </li>
                  ))}
                </ul>
              </div>
            )}
          </div>
        </section>

        <aside className="wf-side">
          <section className="card">
            <div className="wf-side-head">
              <h2>Blocks</h2>
              {stale && <span className="muted">as last valid — fix the JSON to update</span>}
            </div>
            {summary ? (
              <>
                <div className="wf-inputs">
                  <span className="muted">Inputs:</span>{" "}
                  {summary.inputs.length === 0 ? (
                    <span className="empty">none</span>
                  ) : (
                    summary.inputs.map((inp) => (
                      <code key={inp.name} className="wf-input">
                        {inp.name}
                        <span className="type"> {inp.type}</span>
                        {inp.required && <span className="wf-req">required</span>}
                      </code>
                    ))
                  )}
                </div>
                <BlockList
                  summary={summary}
                  selected={selected}
                  issueCounts={issueCounts}
                  stale={stale}
                  onSelect={(index) => reveal(`blocks.${index}`, "")}
                />
                {!stale && summary.problems.length > 0 && (
                  <div className="notice notice-warn wf-checks">
                    <div className="wf-issues-title">The API will refuse this:</div>
                    <ul>
                      {summary.problems.map((p) => (
                        <li key={`${p.path}\u0000${p.message}`}>
                          <button
                            type="button"
                            className="wf-issue"
                            onClick={() => reveal(p.path, "")}
                          >
                            <code>{pathLabel(p.path, blockIds)}</code>
                            <span>{p.message}</span>
                          </button>
                        </li>
                      ))}
                    </ul>
                  </div>
                )}
              </>
            ) : (
              <p className="muted">The blocks show here once the JSON parses.</p>
            )}
          </section>

          <section className="card">
            <h2>Block reference</h2>
            <BlockReference onAdd={addBlock} canAdd={parsed.ok && canAddBlock(parsed.value)} />
          </section>
        </aside>
      </div>
    </>
  );
}
