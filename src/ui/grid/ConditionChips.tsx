"use client";
/** `where` conditions as chips people read ("Name contains “acme”"), each removable. */
import type { RunCondition, TableView } from "@/contracts/table";
import type { WhereCondition } from "@/contracts/where";
import { describeCondition } from "./row-query";

/** Filter conditions, or a group's run conditions (the group editor's). */
export function ConditionChips<C extends WhereCondition | RunCondition>({
  table,
  where,
  testId,
  onChange,
}: {
  table: TableView;
  where: C[];
  testId: string;
  onChange(where: C[]): void;
}) {
  return where.map((cond) => {
    // Conditions are kept distinct (withCondition), so each one's JSON names it.
    const key = JSON.stringify(cond);
    const label = describeCondition(table, cond);
    return (
      <span className="chip" data-testid={testId} key={key}>
        {label}
        <button
          type="button"
          className="icon-btn"
          aria-label={`Remove ${label}`}
          data-testid={`${testId}-remove`}
          onClick={() => onChange(where.filter((c) => JSON.stringify(c) !== key))}
        >
          ✕
        </button>
      </span>
    );
  });
}
