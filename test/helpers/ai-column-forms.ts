/**
 * The AI column tests' fixtures: a table's columns (one named unlike its id, so ids and
 * names can be told apart), a form over the dialog's defaults, and its plan.
 */
import type { Column, TableView } from "@/contracts/table";
import {
  type AiColumnForm,
  type AiColumnPlan,
  type AiField,
  emptyAiForm,
  planAiColumn,
} from "@/ui/grid/ai-column-plan";

export const columns: Column[] = [
  { id: "company", name: "Company", type: "text" },
  { id: "country", name: "Country", type: "select", options: ["FR", "US"] },
  { id: "employees", name: "Employees", type: "number" },
  { id: "industry", name: "Notes", type: "text" },
];
export const table: Pick<TableView, "columns" | "groups"> = { columns, groups: [] };
export const byId = (id: string) => columns.find((c) => c.id === id) as Column;

export function form(over: Partial<AiColumnForm>, fields?: AiField[]): AiColumnForm {
  return { ...emptyAiForm(), ...over, ...(fields ? { fields } : {}) };
}

export function planned(f: AiColumnForm, t = table): AiColumnPlan {
  const p = planAiColumn(t, f);
  if (!p.ok) throw new Error(`not planned: ${JSON.stringify(p.errors)}`);
  return p.plan;
}
