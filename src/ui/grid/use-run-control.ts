"use client";
/**
 * Starting and stopping runs from the grid page. A run not confirmed yet asks for its dry
 * run first: a large, paid or uncountable one waits for the Run dialog (`confirming`),
 * anything else starts at once. A run started or cells stopped tell `onChanged` (the
 * runs list refreshes); what people should read (nothing to run, cells stopped, a
 * refusal) goes to `onMessage`, and `null` clears the last one.
 */
import { useState } from "react";
import type { Schemas } from "@/client/cellflow-client";
import { answer, api, describeError } from "../api";
import { needsConfirmation } from "./RunDialog";

export type RunRequest = Omit<Schemas["CreateRunRequest"], "dryRun">;
export type StopScope = Pick<Schemas["CancelRunsRequest"], "rowIds" | "groupIds">;
export interface PageMessage {
  text: string;
  error: boolean;
}

export interface RunControl {
  /** `confirmed`: start without the dry run (a row's own ▶, or the Run dialog's answer). */
  run(req: RunRequest, confirmed?: boolean): Promise<void>;
  stop(scope: StopScope): Promise<void>;
  /** The run waiting for the Run dialog, with its dry run's figures. */
  confirming: { req: RunRequest; estimate: Schemas["RunEstimate"] } | null;
  cancelConfirm(): void;
}

export function useRunControl(
  tableId: string,
  on: { changed(): void; message(m: PageMessage | null): void },
): RunControl {
  const [confirming, setConfirming] = useState<RunControl["confirming"]>(null);
  const path = { params: { path: { id: tableId } } };

  const run = async (req: RunRequest, confirmed = false) => {
    setConfirming(null);
    try {
      if (!confirmed) {
        const dry = await answer(
          api.POST("/api/tables/{id}/runs", { ...path, body: { ...req, dryRun: true } }),
        );
        if ("estimate" in dry && needsConfirmation(dry)) {
          setConfirming({ req, estimate: dry });
          return;
        }
      }
      const started = await answer(api.POST("/api/tables/{id}/runs", { ...path, body: req }));
      on.message(
        "stamped" in started && started.stamped === 0
          ? { text: "Nothing to run: every cell in scope already ran.", error: false }
          : null,
      );
      on.changed();
    } catch (err) {
      on.message({ text: describeError(err), error: true });
    }
  };

  const stop = async (scope: StopScope) => {
    try {
      const r = await answer(api.POST("/api/tables/{id}/runs/cancel", { ...path, body: scope }));
      on.message({ text: `Stopped ${r.cancelled.toLocaleString()} cells.`, error: false });
      on.changed();
    } catch (err) {
      on.message({ text: describeError(err), error: true });
    }
  };

  return { run, stop, confirming, cancelConfirm: () => setConfirming(null) };
}
