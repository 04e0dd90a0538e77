/**
 * The definition being edited, with its undo history, as a pure reducer. The draft holds
 * the definition object and its JSON text together: an edit from the graph or a form
 * gives a new definition and the text is rewritten from it (pretty JSON); typed text that
 * parses replaces the definition, text that does not keeps the last definition that did.
 * Each edit is one undo step; typing is one step per burst (keystrokes less than
 * `TYPING_BURST_MS` apart, in the same field), so undo does not go back a character at a
 * time: in the JSON text, and in a form's field (an edit with a `burst` key).
 */
import { parseJsonText } from "./json-text";

export interface DraftState {
  text: string;
  /** The text's value when it parses; otherwise the last one that did (null: none yet). */
  definition: unknown;
}

export interface DraftHistory {
  past: DraftState[];
  present: DraftState;
  future: DraftState[];
  /** The field and time of the last typed edit, to join a burst of typing into one step. */
  typed: { key: string; at: number } | null;
}

export type DraftAction =
  /** The workflow as loaded: no history before it. */
  | { kind: "reset"; definition: unknown }
  /** A graph or form edit; typing in a form's field names the field in `burst`. */
  | { kind: "edit"; definition: unknown; burst?: { key: string; at: number } }
  /** Text typed in the JSON view, at time `at` (ms). */
  | { kind: "type"; text: string; at: number }
  | { kind: "undo" }
  | { kind: "redo" };

export const TYPING_BURST_MS = 1000;
/** Steps kept to go back: enough for a session, bounded so the page's memory is too. */
const MAX_STEPS = 200;

export const prettyJson = (value: unknown): string => JSON.stringify(value, null, 2);

export function initialHistory(definition: unknown = null): DraftHistory {
  return {
    past: [],
    present: { text: definition === null ? "" : prettyJson(definition), definition },
    future: [],
    typed: null,
  };
}

/** The new state as a step of its own, or joined to the last one in a burst of typing. */
function step(
  h: DraftHistory,
  present: DraftState,
  typed: { key: string; at: number } | null,
): DraftHistory {
  const last = h.typed;
  const burst =
    typed !== null &&
    last !== null &&
    last.key === typed.key &&
    typed.at - last.at < TYPING_BURST_MS;
  if (burst) return { ...h, present, future: [], typed };
  return { past: [...h.past, h.present].slice(-MAX_STEPS), present, future: [], typed };
}

export function draftReducer(h: DraftHistory, action: DraftAction): DraftHistory {
  switch (action.kind) {
    case "reset":
      return initialHistory(action.definition);
    case "edit": {
      const text = prettyJson(action.definition);
      if (text === h.present.text) return h;
      return step(h, { text, definition: action.definition }, action.burst ?? null);
    }
    case "type": {
      if (action.text === h.present.text) return h;
      const parsed = parseJsonText(action.text);
      const present = {
        text: action.text,
        definition: parsed.ok ? parsed.value : h.present.definition,
      };
      return step(h, present, { key: "text", at: action.at });
    }
    case "undo": {
      const prev = h.past[h.past.length - 1];
      if (!prev) return h;
      return {
        past: h.past.slice(0, -1),
        present: prev,
        future: [h.present, ...h.future],
        typed: null,
      };
    }
    case "redo": {
      const [next, ...rest] = h.future;
      if (!next) return h;
      return { past: [...h.past, h.present], present: next, future: rest, typed: null };
    }
  }
}

/** Ctrl/⌘+Z undoes, Ctrl/⌘+Shift+Z and Ctrl+Y redo; Alt is not part of them. */
export function undoShortcut(
  e: Pick<KeyboardEvent, "metaKey" | "ctrlKey" | "altKey" | "shiftKey" | "key">,
): "undo" | "redo" | null {
  if (!(e.metaKey || e.ctrlKey) || e.altKey) return null;
  const key = e.key.toLowerCase();
  if (key === "z") return e.shiftKey ? "redo" : "undo";
  if (key === "y" && e.ctrlKey && !e.metaKey) return "redo";
  return null;
}
