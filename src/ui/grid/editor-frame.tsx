"use client";
/**
 * The frame the grid's column and group editors share: the modal dialog, a field's
 * error-or-help line, the notice for a failed save (issues no field showed), and
 * scrolling the first error into view after a failed save.
 */
import { type ReactNode, type RefObject, useEffect, useId, useRef } from "react";
import { ApiError, describeError } from "../api";
import { type FieldErrors, issuePlace } from "./issue-paths";

/** A failure to show at the top of an editor: the API's message and unplaced issues. */
export interface EditorNotice {
  message: string;
  details: string[];
}

/**
 * The notice for a failed save: issues the form placed on fields are left out; when
 * they were all placed, there is no notice (the fields say it).
 */
export function noticeFor(
  err: unknown,
  placed: FieldErrors,
  rest: readonly { path: string; message: string }[],
  body: Parameters<typeof issuePlace>[1],
): EditorNotice | null {
  if (!(err instanceof ApiError)) return { message: describeError(err), details: [] };
  if (err.issues.length === 0) return { message: err.message, details: [] };
  if (rest.length === 0 && Object.keys(placed).length > 0) return null;
  return {
    message: err.message,
    details: rest.map((i) => (i.path ? `${issuePlace(i.path, body)}: ${i.message}` : i.message)),
  };
}

export function NoticeError({ notice }: { notice: EditorNotice | null }) {
  if (!notice) return null;
  return (
    <div className="notice notice-error" role="alert">
      <strong>{notice.message}</strong>
      {notice.details.length > 0 && (
        <ul className="editor-issues">
          {notice.details.map((d) => (
            <li key={d}>{d}</li>
          ))}
        </ul>
      )}
    </div>
  );
}

/**
 * Brings the first error inside `root` into view each time `tick` moves (a save that
 * failed, on the client or the server): a long form may be scrolled past it.
 */
export function useRevealErrors(root: RefObject<HTMLElement | null>, tick: number): void {
  useEffect(() => {
    if (tick === 0) return;
    root.current
      ?.querySelector<HTMLElement>("[role=alert], .invalid, .field-error")
      ?.scrollIntoView({ block: "center", behavior: "smooth" });
  }, [root, tick]);
}

/** A field's error, or its help text when there is none. */
export function FieldHint({ error, help }: { error?: string | undefined; help?: ReactNode }) {
  if (error) return <div className="field-error">{error}</div>;
  if (help) return <div className="editor-help">{help}</div>;
  return null;
}

/** The modal frame: a titled dialog over the page; Escape closes it unless `busy`. */
export function EditorModal(props: {
  title: ReactNode;
  subtitle?: ReactNode;
  busy?: boolean;
  wide?: boolean;
  /** `data-testid` of the dialog. */
  testId?: string;
  onClose: () => void;
  children: ReactNode;
}) {
  const { busy = false, onClose } = props;
  const titleId = useId();
  const dialog = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "Escape" && !busy) onClose();
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [busy, onClose]);
  useEffect(() => {
    // Start in the first field, as a form dialog should.
    dialog.current?.querySelector<HTMLElement>("input:not([readonly]), select, textarea")?.focus();
  }, []);
  return (
    <div className="modal-backdrop">
      <div
        ref={dialog}
        className={`modal editor-modal${props.wide ? " editor-modal-wide" : ""}`}
        role="dialog"
        aria-modal="true"
        aria-labelledby={titleId}
        data-testid={props.testId}
      >
        <div className="editor-head">
          <h2 id={titleId}>{props.title}</h2>
          <button
            type="button"
            className="btn btn-ghost btn-small"
            aria-label="Close"
            onClick={onClose}
            disabled={busy}
          >
            ✕
          </button>
        </div>
        {props.subtitle && <p className="muted editor-sub">{props.subtitle}</p>}
        {props.children}
      </div>
    </div>
  );
}
