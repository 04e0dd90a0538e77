import type { CreatedHook, CreateHookRequest, HookList, HookView } from "@/contracts/hooks";
import { type Failure, notFound } from "@/domain/errors";
import { newId } from "@/domain/ids";
import type { Result } from "@/domain/result";
import { mintSigningSecret } from "@/security/signing-secret";
import { insertHook } from "@/store/hooks/create";
import { type HookRecord, listHooks as readHooks } from "@/store/hooks/read";
import { revokeHook as markRevoked } from "@/store/hooks/revoke";
import { getTable } from "@/store/tables/read";
import type { ServiceContext } from "./context";

/**
 * A path, not an absolute URL: behind proxies the origin a request arrived on is not one
 * a sender can reach, and the client knows the origin it called.
 */
export const hookPath = (id: string) => `/api/hooks/${id}`;

function view(hook: HookRecord): HookView {
  return {
    id: hook.id,
    url: hookPath(hook.id),
    tableId: hook.tableId,
    action: hook.action,
    createdAt: hook.createdAt.toISOString(),
    revokedAt: hook.revokedAt?.toISOString() ?? null,
  };
}

/** Creates a hook on a table; its signing secret is returned here once and stored sealed. */
export async function createHook(
  ctx: ServiceContext,
  tableId: string,
  req: CreateHookRequest,
): Promise<Result<CreatedHook, Failure>> {
  const table = await getTable(ctx.db, ctx.workspaceId, tableId);
  if (!table) return { ok: false, reason: notFound("table") };
  const { secret, ciphertext } = mintSigningSecret("webhook secrets");
  const hook = await insertHook(ctx.db, {
    id: newId("hook"),
    workspaceId: ctx.workspaceId,
    tableId,
    action: req.action,
    secretCiphertext: ciphertext,
  });
  ctx.log.info({ tableId, hookId: hook.id, action: hook.action }, "hook created");
  return { ok: true, value: { ...view(hook), secret } };
}

export async function listHooks(
  ctx: ServiceContext,
  tableId: string,
): Promise<Result<HookList, Failure>> {
  const table = await getTable(ctx.db, ctx.workspaceId, tableId);
  if (!table) return { ok: false, reason: notFound("table") };
  const hooks = await readHooks(ctx.db, ctx.workspaceId, tableId);
  return { ok: true, value: { hooks: hooks.map(view) } };
}

/** Revokes a hook: its deliveries are refused from now on. Idempotent. */
export async function revokeHook(
  ctx: ServiceContext,
  tableId: string,
  hookId: string,
): Promise<Result<null, Failure>> {
  const table = await getTable(ctx.db, ctx.workspaceId, tableId);
  if (!table) return { ok: false, reason: notFound("table") };
  if (!(await markRevoked(ctx.db, { workspaceId: ctx.workspaceId, tableId, hookId })))
    return { ok: false, reason: notFound("hook") };
  ctx.log.info({ tableId, hookId }, "hook revoked");
  return { ok: true, value: null };
}
