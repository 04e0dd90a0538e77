"use client";
/** `where` conditions as chips people read ("Name contains “acme”"), each removable. */
import type { TableView } from "@/contracts/table";
import type { WhereCondition } from "@/contracts/where";
import { describeCondition } from "./row-query";

export function ConditionChips({
  table,
  where,
  testId,
  onChange,
}: {
  table: TableView;
  where: WhereCondition[];
  testId: string;
  onChange(where: WhereCondition[]): void;
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
