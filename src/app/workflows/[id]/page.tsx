"use client";
/** One workflow's editor; `?block=<id>` highlights a block (a failed cell links there). */
import "@xyflow/react/dist/style.css";
import { useParams, useSearchParams } from "next/navigation";
import { Shell } from "@/ui/shell";
import { WorkflowEditor } from "@/ui/workflows/workflow-editor";

export default function WorkflowPage() {
  const { id } = useParams<{ id: string }>();
  const block = useSearchParams().get("block");
  return (
    <Shell>
      {/* A new editor per workflow: nothing of one carries over to the next. */}
      <WorkflowEditor key={id} id={id} highlight={block === "" ? null : block} />
    </Shell>
  );
}
