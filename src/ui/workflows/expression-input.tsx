"use client";
/**
 * A small input for JSONata expressions and `{{ }}` templates: it checks the text as it
 * is typed (expression-check.ts: the syntax error with its position, names that are not
 * in scope) and offers the names in scope for the one being typed — ↑/↓ choose, Enter or
 * Tab take it, Escape closes the list; a click works too.
 */
import { type KeyboardEvent, useId, useLayoutEffect, useMemo, useRef, useState } from "react";
import {
  checkExpression,
  checkTemplate,
  completeAt,
  type ExpressionScope,
} from "./expression-check";

export type ExpressionMode = "expression" | "template" | "number-or-expression";

export interface ExpressionInputProps {
  /** `form-<testId>` on the input, `form-<testId>-error` on its syntax error. */
  testId: string;
  id?: string;
  value: string;
  onChange: (value: string) => void;
  mode: ExpressionMode;
  multiline: boolean;
  scope: ExpressionScope;
  placeholder?: string;
  invalid?: boolean;
}

const DIGITS = /^\s*-?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?\s*$/;

export function ExpressionInput(props: ExpressionInputProps) {
  const { testId, value, onChange, mode, scope } = props;
  const listId = useId();
  const ref = useRef<HTMLInputElement & HTMLTextAreaElement>(null);
  const [caret, setCaret] = useState<number | null>(null);
  const [active, setActive] = useState(0);
  const [dismissed, setDismissed] = useState(false);
  const pendingCaret = useRef<number | null>(null);

  const problems = useMemo(() => {
    if (mode === "template") return checkTemplate(value, scope);
    if (mode === "number-or-expression" && DIGITS.test(value)) return [];
    return checkExpression(value, scope);
  }, [value, mode, scope]);
  const errors = problems.filter((p) => p.severity === "error");
  const warnings = problems.filter((p) => p.severity === "warning");

  const completion = useMemo(
    () =>
      caret === null || dismissed ? null : completeAt(value, caret, scope, mode === "template"),
    [value, caret, dismissed, scope, mode],
  );
  const options = completion?.options ?? [];
  const current = Math.min(active, Math.max(options.length - 1, 0));

  // After a completion the caret goes after the inserted name, once the new text is in.
  useLayoutEffect(() => {
    const at = pendingCaret.current;
    if (at === null || !ref.current || ref.current.value !== value) return;
    pendingCaret.current = null;
    ref.current.setSelectionRange(at, at);
    setCaret(at);
  }, [value]);

  const take = (option: string) => {
    if (!completion) return;
    const next = value.slice(0, completion.from) + option + value.slice(completion.to);
    pendingCaret.current = completion.from + option.length;
    setActive(0);
    onChange(next);
    ref.current?.focus();
  };

  const onKeyDown = (e: KeyboardEvent) => {
    if (options.length === 0) return;
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      e.preventDefault();
      const step = e.key === "ArrowDown" ? 1 : options.length - 1;
      setActive((current + step) % options.length);
    } else if (e.key === "Enter") {
      const option = options[current];
      if (option === undefined) return;
      e.preventDefault();
      take(option);
    } else if (e.key === "Escape") {
      e.preventDefault();
      setDismissed(true);
    }
  };

  const common = {
    ref,
    id: props.id,
    value,
    placeholder: props.placeholder,
    spellCheck: false,
    autoComplete: "off",
    className: `input form-code${props.invalid || errors.length > 0 ? " invalid" : ""}`,
    "data-testid": `form-${testId}`,
    "aria-autocomplete": "list" as const,
    "aria-controls": options.length > 0 ? listId : undefined,
    "aria-activedescendant": options.length > 0 ? `${listId}-${current}` : undefined,
    onChange: (e: { target: HTMLInputElement | HTMLTextAreaElement }) => {
      setDismissed(false);
      setCaret(e.target.selectionStart);
      onChange(e.target.value);
    },
    onSelect: (e: { currentTarget: HTMLInputElement | HTMLTextAreaElement }) =>
      setCaret(e.currentTarget.selectionStart),
    onBlur: () => setCaret(null),
    onKeyDown,
  };

  return (
    <div className="form-expr">
      {props.multiline ? <textarea rows={3} {...common} /> : <input type="text" {...common} />}
      {options.length > 0 && (
        <div
          className="form-suggest"
          role="listbox"
          id={listId}
          data-testid={`form-${testId}-suggestions`}
        >
          {options.map((o, i) => (
            <button
              key={o}
              type="button"
              role="option"
              id={`${listId}-${i}`}
              aria-selected={i === current}
              tabIndex={-1}
              className={`chip form-suggestion${i === current ? " active" : ""}`}
              data-testid={`form-${testId}-suggestion`}
              // Keep the input's focus (and caret) while the mouse takes an option.
              onMouseDown={(e) => e.preventDefault()}
              onClick={() => take(o)}
            >
              {o}
            </button>
          ))}
        </div>
      )}
      {errors.map((p) => (
        <div
          key={`${p.position}:${p.message}`}
          className="field-error"
          data-testid={`form-${testId}-error`}
        >
          {p.message}
        </div>
      ))}
      {warnings.length > 0 && (
        <div className="form-warning" data-testid={`form-${testId}-warning`}>
          {warnings.map((p) => (
            <div key={`${p.position}:${p.message}`}>{p.message}</div>
          ))}
        </div>
      )}
    </div>
  );
}
