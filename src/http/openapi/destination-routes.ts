/**
 * The operations under `/api/tables/{id}/destinations`: where a table's finished rows are
 * sent, and each destination's deliveries. Each entry names the contract its route
 * validates with and the contract its service answers with.
 */
import {
  CreateDestinationRequest,
  CreatedDestination,
  DeliveryPage,
  DestinationList,
  DestinationView,
  ListDeliveriesQuery,
  PatchDestinationRequest,
} from "@/contracts/destinations";
import type { Operation } from "./operation";

const TABLE = { id: "The table's id" };
const DESTINATION = { ...TABLE, destinationId: "The destination's id" };

export const DESTINATION_OPERATIONS: Operation[] = [
  {
    method: "get",
    path: "/api/tables/{id}/destinations",
    operationId: "listDestinations",
    tag: "Destinations",
    summary: "List the table's destinations (never their secrets)",
    access: "key",
    params: TABLE,
    answers: [{ status: 200, description: "The destinations", json: DestinationList }],
  },
  {
    method: "post",
    path: "/api/tables/{id}/destinations",
    operationId: "createDestination",
    tag: "Destinations",
    summary: "Create a destination (its signing secret is shown once)",
    description:
      "When one of a row's cells ends and the row then has no queued, running or paused cell, the row is sent: `POST url` with `{ tableId, rowId, data, cells, dispatchId }` (the row as it was then, kept with the delivery), headers `Cellflow-Signature` (the webhook scheme, this destination's secret) and `Cellflow-Delivery` (the same on every re-send). 2xx → delivered; 408, 429, 5xx, a timeout (10 s) or a network error → retried with backoff (base·2ⁿ, at most 1 h, jitter) for 24 h; other 4xx → failed. In order per row, at most 10 in flight per destination. A URL that is not http(s), or a private address or `localhost` (unless CELLFLOW_ALLOW_PRIVATE_NETWORK=1) → 400.",
    access: "key",
    params: TABLE,
    body: { json: CreateDestinationRequest },
    answers: [
      { status: 201, description: "The destination and its secret", json: CreatedDestination },
    ],
  },
  {
    method: "patch",
    path: "/api/tables/{id}/destinations/{destinationId}",
    operationId: "patchDestination",
    tag: "Destinations",
    summary: "Enable or disable a destination",
    description:
      "A disabled destination gets no new deliveries; its pending ones wait and go out once it is enabled again.",
    access: "key",
    params: DESTINATION,
    body: { json: PatchDestinationRequest },
    answers: [{ status: 200, description: "The destination", json: DestinationView }],
  },
  {
    method: "delete",
    path: "/api/tables/{id}/destinations/{destinationId}",
    operationId: "deleteDestination",
    tag: "Destinations",
    summary: "Delete a destination and its deliveries",
    access: "key",
    params: DESTINATION,
    answers: [{ status: 204, description: "Deleted" }],
  },
  {
    method: "get",
    path: "/api/tables/{id}/destinations/{destinationId}/deliveries",
    operationId: "listDeliveries",
    tag: "Destinations",
    summary: "A destination's deliveries, newest first",
    description:
      "`status` filters (`failed`, or `pending` with `lastError` for those being retried); `cursor` is the previous page's `nextCursor`. Delivered entries are kept 7 days, failed ones 30 days after they were made.",
    access: "key",
    params: DESTINATION,
    query: ListDeliveriesQuery,
    answers: [{ status: 200, description: "A page of deliveries", json: DeliveryPage }],
  },
];
