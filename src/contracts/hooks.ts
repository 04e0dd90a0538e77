import { z } from "zod";
import { HOOK_ACTIONS } from "@/domain/statuses";

export const HookAction = z.enum(HOOK_ACTIONS);
export type HookAction = z.infer<typeof HookAction>;

export const CreateHookRequest = z.strictObject({ action: HookAction });
export type CreateHookRequest = z.infer<typeof CreateHookRequest>;

export const HookView = z.object({
  id: z.string(),
  /** Path of the delivery endpoint, relative to the server's origin. */
  url: z.string(),
  tableId: z.string(),
  action: HookAction,
  createdAt: z.string(),
  revokedAt: z.string().nullable(),
});
export type HookView = z.infer<typeof HookView>;

/** The answer to creating a hook: the only time the signing secret is shown. */
export const CreatedHook = HookView.extend({ secret: z.string() });
export type CreatedHook = z.infer<typeof CreatedHook>;

/** What an `insert_rows` delivery answers (202). */
export const HookRowsInserted = z.object({
  inserted: z.number().int(),
  rowIds: z.array(z.string()),
});
export type HookRowsInserted = z.infer<typeof HookRowsInserted>;

/** A table's hooks, revoked ones included; never their secrets. */
export const HookList = z.object({ hooks: z.array(HookView) });
export type HookList = z.infer<typeof HookList>;
