import { z } from "zod";
import { DELIVERY_STATUSES } from "@/domain/statuses";
import { Name } from "./common";

export const DeliveryStatus = z.enum(DELIVERY_STATUSES);
export type DeliveryStatus = z.infer<typeof DeliveryStatus>;

export const CreateDestinationRequest = z.strictObject({
  /** http or https; its host is judged by the private-network rule (as http blocks are). */
  url: z.string().min(1).max(2_000),
  name: Name.optional(),
});
export type CreateDestinationRequest = z.infer<typeof CreateDestinationRequest>;

export const PatchDestinationRequest = z.strictObject({ enabled: z.boolean() });
export type PatchDestinationRequest = z.infer<typeof PatchDestinationRequest>;

export const DestinationView = z.object({
  id: z.string(),
  tableId: z.string(),
  url: z.string(),
  name: z.string().nullable(),
  enabled: z.boolean(),
  createdAt: z.string(),
});
export type DestinationView = z.infer<typeof DestinationView>;

/** The answer to creating a destination: the only time its signing secret is shown. */
export const CreatedDestination = DestinationView.extend({ secret: z.string() });
export type CreatedDestination = z.infer<typeof CreatedDestination>;

/** A table's destinations; never their secrets. */
export const DestinationList = z.object({ destinations: z.array(DestinationView) });
export type DestinationList = z.infer<typeof DestinationList>;

export const ListDeliveriesQuery = z.strictObject({
  status: DeliveryStatus.optional(),
  /**
   * `true`: only deliveries with a `lastError` — the failed ones and the pending ones being
   * retried (what the grid shows as a destination's problems), newest first.
   */
  withError: z
    .enum(["true", "false"])
    .optional()
    .transform((v) => v === "true"),
  /** The last delivery id of the previous page (`nextCursor`). */
  cursor: z.string().max(64).optional(),
  limit: z.coerce.number().int().min(1).max(200).optional(),
});
export type ListDeliveriesQuery = z.infer<typeof ListDeliveriesQuery>;

export const DeliveryView = z.object({
  /** The `Cellflow-Delivery` header it is sent with, the same on every re-send. */
  id: z.string(),
  rowId: z.string(),
  status: DeliveryStatus,
  attempts: z.number().int(),
  lastError: z.string().nullable(),
  deliveredAt: z.string().nullable(),
  nextAttemptAt: z.string().nullable(),
  createdAt: z.string(),
});
export type DeliveryView = z.infer<typeof DeliveryView>;

/** Newest first; `nextCursor` is null on the last page. */
export const DeliveryPage = z.object({
  deliveries: z.array(DeliveryView),
  nextCursor: z.string().nullable(),
});
export type DeliveryPage = z.infer<typeof DeliveryPage>;
