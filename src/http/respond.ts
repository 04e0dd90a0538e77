import type { ErrorCode, Issue } from "@/contracts/common";
import type { Failure } from "@/domain/errors";
import type { Result } from "@/domain/result";
import { assertNever } from "@/domain/statuses";

export function statusFor(code: ErrorCode): number {
  switch (code) {
    case "validation_failed":
      return 400;
    case "unauthorized":
      return 401;
    case "limit_reached":
      return 402;
    case "not_found":
      return 404;
    case "conflict":
      return 409;
    case "payload_too_large":
      return 413;
    case "internal":
      return 500;
    default:
      return assertNever(code);
  }
}

export function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return Response.json(body, { status, headers: { "cache-control": "no-store", ...headers } });
}

export function errorResponse(code: ErrorCode, message: string, issues?: Issue[]): Response {
  return json({ error: { code, message, ...(issues ? { issues } : {}) } }, statusFor(code));
}

export function failureResponse(failure: Failure): Response {
  return errorResponse(
    failure.code,
    failure.message,
    "issues" in failure ? failure.issues : undefined,
  );
}

/** The last step of every route: a service outcome to a response. */
export function respond<T>(result: Result<T, Failure>, status = 200): Response {
  if (!result.ok) return failureResponse(result.reason);
  if (status === 204) return new Response(null, { status });
  return json(result.value, status);
}
