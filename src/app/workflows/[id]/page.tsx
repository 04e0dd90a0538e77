"use client";
/** One workflow's editor. */
import { useParams } from "next/navigation";
import { Shell } from "@/ui/shell";
import { WorkflowEditor } from "@/ui/workflows/workflow-editor";

export default function WorkflowPage() {
  const { id } = useParams<{ id: string }>();
  return (
    <Shell>
      {/* A new editor per workflow: nothing of one carries over to the next. */}
      <WorkflowEditor key={id} id={id} />
    </Shell>
  );
}
