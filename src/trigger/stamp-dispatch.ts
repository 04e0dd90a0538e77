/** `stamp-dispatch`: the background stamping of a large run (the engine's `runStamper`). */
import { schemaTask } from "@trigger.dev/sdk";
import { StampPayloadSchema, TASKS } from "@/backends/port";
import { runStamper } from "@/engine/stamper";
import { taskEngine } from "./deps";

export const stampDispatch = schemaTask({
  id: TASKS.stamper,
  schema: StampPayloadSchema,
  retry: { maxAttempts: 1 },
  maxDuration: 3_600,
  run: async (payload, { ctx, signal }) => {
    const cells = await runStamper(taskEngine().engine, payload, {
      runId: ctx.run.id,
      signal,
    });
    return { cells };
  },
});
