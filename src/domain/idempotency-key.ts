import { IdempotencyKey } from "@/contracts/runs";
import { type Failure, invalid } from "./errors";
import { zodIssues } from "./json-text";
import type { Result } from "./result";

export const IDEMPOTENCY_KEY_HEADER = "idempotency-key";

/** The `Idempotency-Key` header's value: null when absent, refused when empty or too long. */
export function idempotencyKeyOf(header: string | null): Result<string | null, Failure> {
  if (header === null) return { ok: true, value: null };
  const parsed = IdempotencyKey.safeParse(header);
  if (parsed.success) return { ok: true, value: parsed.data };
  return {
    ok: false,
    reason: invalid(
      zodIssues(parsed.error).map((i) => ({ ...i, path: IDEMPOTENCY_KEY_HEADER })),
      "The Idempotency-Key header is not valid",
    ),
  };
}
