"use client";
/**
 * PLACEHOLDER for the block form (helper C writes the real one with this signature: a
 * form per block type from its schema). Until then, the one field every transform and
 * condition needs, its expression (`form-expression`, the test id the real form keeps),
 * so a workflow can be built without typing JSON.
 */
import type { ReactNode } from "react";

export interface BlockFormProps {
  block: Record<string, unknown>;
  blockIds: string[];
  inputNames: string[];
  workflows: { id: string; name: string }[];
  onChange: (next: Record<string, unknown>) => void;
}

export function BlockForm({ block, onChange }: BlockFormProps): ReactNode {
  if (block.type !== "transform" && block.type !== "condition") return null;
  const expression = typeof block.expression === "string" ? block.expression : "";
  return (
    <div className="field">
      <label htmlFor="form-expression">Expression</label>
      <input
        id="form-expression"
        className="input mono"
        data-testid="form-expression"
        value={expression}
        onChange={(e) => onChange({ ...block, expression: e.target.value })}
      />
    </div>
  );
}
