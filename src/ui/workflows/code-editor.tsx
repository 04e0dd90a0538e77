"use client";
/**
 * A plain monospace editor for JSON: a textarea with line numbers, the line of a syntax
 * error and the lines with issues marked in the gutter. Enter keeps the indentation, Tab
 * indents, Escape leaves the editor (so Tab does not trap keyboard users).
 */
import { type RefObject, useMemo, useRef } from "react";
import { lineColumn, newlineWithIndent, type Span } from "./json-text";

/** Inserts text at the caret, through the browser's editing so that undo keeps working. */
function insertAtCaret(ta: HTMLTextAreaElement, insert: string, onChange: (v: string) => void) {
  // execCommand is the only way to edit a textarea and keep its undo history.
  if (!document.execCommand("insertText", false, insert)) {
    ta.setRangeText(insert, ta.selectionStart, ta.selectionEnd, "end");
    onChange(ta.value);
  }
}

/**
 * Selects a span of the text and scrolls it into view, a few lines from the top. Without
 * `focus` (a block clicked in the graph), the page and the keyboard stay where they are.
 */
export function revealSpan(ta: HTMLTextAreaElement, span: Span, focus = true): void {
  const { line } = lineColumn(ta.value, span.start);
  if (focus) ta.focus({ preventScroll: true });
  ta.setSelectionRange(span.start, span.end, "forward");
  const lineHeight = Number.parseFloat(getComputedStyle(ta).lineHeight) || 20;
  ta.scrollTop = Math.max(0, (line - 3) * lineHeight);
  if (focus) ta.scrollIntoView({ block: "nearest", behavior: "smooth" });
}

export function CodeEditor({
  value,
  onChange,
  textareaRef,
  errorLine,
  issueLines,
  onCaret,
  invalid,
  label,
  describedBy,
}: {
  value: string;
  onChange: (value: string) => void;
  textareaRef: RefObject<HTMLTextAreaElement | null>;
  errorLine: number | null;
  issueLines: ReadonlySet<number>;
  onCaret?: (offset: number) => void;
  invalid: boolean;
  label: string;
  describedBy?: string;
}) {
  const gutter = useRef<HTMLDivElement>(null);
  const lineCount = useMemo(() => {
    let n = 1;
    for (let i = 0; i < value.length; i++) if (value.charCodeAt(i) === 10) n++;
    return n;
  }, [value]);

  const numbers: number[] = [];
  for (let i = 1; i <= lineCount; i++) numbers.push(i);

  return (
    <div className={`code-editor${invalid ? " invalid" : ""}`} data-draft-undo="">
      <div className="code-gutter" ref={gutter} aria-hidden="true">
        {numbers.map((n) => (
          <div
            key={n}
            className={
              n === errorLine ? "line-error" : issueLines.has(n) ? "line-issue" : undefined
            }
          >
            {n}
          </div>
        ))}
      </div>
      <textarea
        ref={textareaRef}
        className="code-text"
        aria-label={label}
        aria-invalid={invalid}
        aria-describedby={describedBy}
        spellCheck={false}
        autoCapitalize="off"
        autoComplete="off"
        autoCorrect="off"
        wrap="off"
        value={value}
        onChange={(e) => onChange(e.target.value)}
        onScroll={(e) => {
          if (gutter.current) gutter.current.scrollTop = e.currentTarget.scrollTop;
        }}
        onSelect={(e) => onCaret?.(e.currentTarget.selectionStart)}
        onKeyDown={(e) => {
          const ta = e.currentTarget;
          if (e.key === "Escape") {
            ta.blur();
            return;
          }
          if (e.altKey || e.ctrlKey || e.metaKey || e.nativeEvent.isComposing) return;
          if (e.key === "Tab" && !e.shiftKey) {
            e.preventDefault();
            insertAtCaret(ta, "  ", onChange);
          } else if (e.key === "Enter" && !e.shiftKey) {
            e.preventDefault();
            insertAtCaret(ta, newlineWithIndent(ta.value, ta.selectionStart), onChange);
          }
        }}
      />
    </div>
  );
}
