"use client";
/**
 * What a try answered: the run's status, its outputs (pretty JSON), why it did not
 * complete, what it was charged, and each block that started (status, time, error, a
 * short output), in start order.
 */
import { formatDuration, shortValue, type TestAnswer } from "./try-request";

const STATUS_LABEL: Record<TestAnswer["status"], string> = {
  completed: "Completed",
  error: "Failed",
  paused: "Paused (a pause ends a try)",
};

export function TryResult({ result }: { result: TestAnswer }) {
  return (
    <div className="try-result" data-testid="try-result">
      <div className="row">
        <span className={`try-status try-status-${result.status}`} data-testid="try-status">
          {STATUS_LABEL[result.status]}
        </span>
        <span className="spacer" />
        <span className="muted" data-testid="try-cost">
          {result.costCredits > 0 ? `${result.costCredits} credits` : "no charge"}
        </span>
      </div>
      {result.error && (
        <div className="notice notice-error" data-testid="try-error">
          {result.error}
        </div>
      )}
      <div className="editor-label">Outputs</div>
      <pre className="try-json" data-testid="try-outputs">
        {JSON.stringify(result.outputs, null, 2) ?? "null"}
      </pre>
      <div className="editor-label">Blocks</div>
      {result.blocks.length === 0 ? (
        <p className="muted">No block started.</p>
      ) : (
        <ol className="try-blocks">
          {result.blocks.map((b) => (
            <li
              key={b.id}
              className={`try-block try-block-${b.status}`}
              data-testid={`try-block-${b.id}`}
            >
              <code>{b.id}</code>
              <span className="try-block-status">{b.status}</span>
              <span className="muted">{formatDuration(b.durationMs)}</span>
              {b.error ? (
                <span className="field-error">{b.error}</span>
              ) : (
                b.status === "completed" && (
                  <span className="try-block-output">{shortValue(b.output, 80)}</span>
                )
              )}
            </li>
          ))}
        </ol>
      )}
    </div>
  );
}
