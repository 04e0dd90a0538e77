import type { Issue } from "@/contracts/common";

/**
 * Failures a service returns (never throws) for a request it refuses. The HTTP layer maps
 * each code to one status; nothing else decides statuses.
 */
export type Failure =
  | { code: "validation_failed"; message: string; issues: Issue[] }
  | { code: "not_found"; message: string }
  | { code: "unauthorized"; message: string }
  | { code: "conflict"; message: string }
  | { code: "limit_reached"; message: string }
  | { code: "payload_too_large"; message: string };

export const notFound = (what: string): Failure => ({
  code: "not_found",
  message: `${what} not found`,
});

export const invalid = (issues: Issue[], message = "The request is not valid"): Failure => ({
  code: "validation_failed",
  message,
  issues,
});

export const conflict = (message: string): Failure => ({ code: "conflict", message });

/** For requests that prove who sent them some other way than an API key (signed webhooks). */
export const unauthorized = (message: string): Failure => ({ code: "unauthorized", message });

/** Thrown for failures found before a service runs (body parsing, auth). */
export class RequestError extends Error {
  constructor(
    readonly code: "validation_failed" | "unauthorized" | "payload_too_large" | "not_found",
    message: string,
    readonly issues?: Issue[],
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = "RequestError";
  }
}
