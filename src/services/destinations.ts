/**
 * A table's destinations (API.md "Schedules, destinations, views"): create (the signing
 * secret is shown once and stored sealed), list, enable or disable, delete, and each one's
 * deliveries. What is sent, and when, is the engine's (engine/destination-send.ts).
 */
import { randomBytes } from "node:crypto";
import { allowPrivateNetwork } from "@/config/env";
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
import { isLocalHostName, literalAddress, nonPublicRange } from "@/security/destinations";
import { sealSecret } from "@/security/secret-box";
import { serverSecretKey } from "@/security/secret-key";
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
 * Why a URL cannot be a destination, or null. A host name is judged again at every send,
 * on each address it resolves to then (net/outbound.ts); what can be judged without DNS
 * is refused here, so a mistake shows at once rather than as failed deliveries.
 */
function urlProblem(text: string): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return "must be an absolute http(s) URL";
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return "must be an http(s) URL";
  if (url.username !== "" || url.password !== "") return "must not carry credentials";
  if (allowPrivateNetwork()) return null;
  const hint = "set CELLFLOW_ALLOW_PRIVATE_NETWORK=1 to allow";
  if (isLocalHostName(url.hostname)) return `${url.hostname} is this machine; ${hint}`;
  const literal = literalAddress(url.hostname);
  const range = literal === null ? null : nonPublicRange(literal);
  return range === null ? null : `${literal} is a private address (${range}); ${hint}`;
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
  const key = serverSecretKey();
  if (!key) {
    // A deployment fault, not the caller's: the route answers 500 and the log says why.
    throw new Error(
      "CELLFLOW_SECRET_KEY is not set: destination secrets cannot be stored (set a 32-byte key, see .env.example)",
    );
  }
  const secret = `whsec_${randomBytes(32).toString("base64url")}`;
  const d = await insertDestination(ctx.db, {
    id: newId("dst"),
    workspaceId: ctx.workspaceId,
    tableId,
    url: req.url,
    name: req.name ?? null,
    secretCiphertext: sealSecret(key, secret),
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
