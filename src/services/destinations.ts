/**
 * A table's destinations (API.md "Schedules, destinations, views"): create (the signing
 * secret is shown once and stored sealed), list, enable or disable, delete, and each one's
 * deliveries. What is sent, and when, is the engine's (engine/destination-send.ts).
 */
import type {
  CreateDestinationRequest,
  CreatedDestination,
  DeliveryPage,
  DestinationList,
  DestinationView,
  ListDeliveriesQuery,
} from "@/contracts/destinations";
import { type Failure, invalid, notFound } from "@/domain/errors";
import { newId } from "@/domain/ids";
import type { Result } from "@/domain/result";
import { urlRefusal } from "@/net/outbound";
import { mintSigningSecret } from "@/security/signing-secret";
import {
  type DestinationRecord,
  deleteDestination as deleteRecord,
  getDestination,
  insertDestination,
  listDestinations as readDestinations,
  setDestinationEnabled,
} from "@/store/destinations/crud";
import { listDeliveries as readDeliveries } from "@/store/destinations/deliveries-read";
import { getTable } from "@/store/tables/read";
import type { ServiceContext } from "./context";

const DEFAULT_PAGE = 50;

function view(d: DestinationRecord): DestinationView {
  return {
    id: d.id,
    tableId: d.tableId,
    url: d.url,
    name: d.name,
    enabled: d.enabled,
    createdAt: d.createdAt.toISOString(),
  };
}

/**
 * Why a URL cannot be a destination, or null: what the sender would refuse without DNS
 * (net/outbound.ts, under its policy), so a mistake shows at once rather than as failed
 * deliveries, and no credentials in it (they would be posted with every row).
 */
function urlProblem(text: string): string | null {
  const refused = urlRefusal(text);
  if (refused !== null) return refused;
  const url = new URL(text);
  return url.username !== "" || url.password !== "" ? "must not carry credentials" : null;
}

export async function createDestination(
  ctx: ServiceContext,
  tableId: string,
  req: CreateDestinationRequest,
): Promise<Result<CreatedDestination, Failure>> {
  const table = await getTable(ctx.db, ctx.workspaceId, tableId);
  if (!table) return { ok: false, reason: notFound("table") };
  const problem = urlProblem(req.url);
  if (problem) return { ok: false, reason: invalid([{ path: "url", message: problem }]) };
  const { secret, ciphertext } = mintSigningSecret("destination secrets");
  const d = await insertDestination(ctx.db, {
    id: newId("dst"),
    workspaceId: ctx.workspaceId,
    tableId,
    url: req.url,
    name: req.name ?? null,
    secretCiphertext: ciphertext,
  });
  ctx.log.info({ tableId, destinationId: d.id }, "destination created");
  return { ok: true, value: { ...view(d), secret } };
}

export async function listDestinations(
  ctx: ServiceContext,
  tableId: string,
): Promise<Result<DestinationList, Failure>> {
  const table = await getTable(ctx.db, ctx.workspaceId, tableId);
  if (!table) return { ok: false, reason: notFound("table") };
  const list = await readDestinations(ctx.db, ctx.workspaceId, tableId);
  return { ok: true, value: { destinations: list.map(view) } };
}

/** Disabling keeps its pending deliveries; they go out once it is enabled again. */
export async function setEnabled(
  ctx: ServiceContext,
  tableId: string,
  destinationId: string,
  enabled: boolean,
): Promise<Result<DestinationView, Failure>> {
  const scope = { workspaceId: ctx.workspaceId, tableId, destinationId };
  const d = await setDestinationEnabled(ctx.db, scope, enabled);
  if (!d) return { ok: false, reason: notFound("destination") };
  ctx.log.info({ tableId, destinationId, enabled }, "destination switched");
  return { ok: true, value: view(d) };
}

export async function deleteDestination(
  ctx: ServiceContext,
  tableId: string,
  destinationId: string,
): Promise<Result<null, Failure>> {
  const scope = { workspaceId: ctx.workspaceId, tableId, destinationId };
  if (!(await deleteRecord(ctx.db, scope))) return { ok: false, reason: notFound("destination") };
  ctx.log.info({ tableId, destinationId }, "destination deleted");
  return { ok: true, value: null };
}

export async function listDeliveries(
  ctx: ServiceContext,
  tableId: string,
  destinationId: string,
  q: ListDeliveriesQuery,
): Promise<Result<DeliveryPage, Failure>> {
  const scope = { workspaceId: ctx.workspaceId, tableId, destinationId };
  if (!(await getDestination(ctx.db, scope))) return { ok: false, reason: notFound("destination") };
  const limit = q.limit ?? DEFAULT_PAGE;
  const rows = await readDeliveries(ctx.db, destinationId, { ...q, limit });
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    ok: true,
    value: { deliveries: page, nextCursor: rows.length > limit && last ? last.id : null },
  };
}
