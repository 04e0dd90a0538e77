import { z } from "zod";

/** Ids the client chooses (columns, groups, blocks, inputs). */
export const ClientId = z
  .string()
  .regex(/^[a-z][a-z0-9_]{0,62}$/, "must match ^[a-z][a-z0-9_]{0,62}$ (lowercase, digits, _)")
  // Every JavaScript object already has a `constructor`: `row.data[id]` would find it on a
  // row without that value, and auto-run, inputs and templates would read a function.
  // It is the only name the pattern allows that Object.prototype holds.
  .refine((id) => id !== "constructor", 'is reserved ("constructor"); choose another id');
export type ClientId = z.infer<typeof ClientId>;

/** Ids Cellflow generates; only their length is checked, lookups decide existence. */
export const EntityId = z.string().min(1).max(64);
export type EntityId = z.infer<typeof EntityId>;

/**
 * Kept exactly as sent: leading or trailing white space is refused rather than trimmed,
 * so a name never comes back different from the one given.
 */
export const Name = z
  .string()
  .min(1, "must not be empty")
  .max(200)
  .refine((s) => s.trim() !== "", "must not be blank")
  .refine(
    (s) => s.trim() === "" || s.trim() === s,
    "must not start or end with white space (remove it)",
  );
export type Name = z.infer<typeof Name>;

/** Expressions and templates: bounded so one request cannot store megabytes of code. */
export const Expression = z.string().min(1, "must not be empty").max(20_000);
export type Expression = z.infer<typeof Expression>;

/**
 * Any JSON value. One shared instance: the schema is recursive, and a document generated
 * from the contracts names it once and refers to it.
 */
export const JsonValue = z.json();
export type JsonValue = z.infer<typeof JsonValue>;

/**
 * A positive credit amount given by a client (a per-row budget): kept to 1/1000 of a
 * credit, as every credit amount is, so more decimals are refused rather than rounded.
 */
export const CreditAmount = z
  .number()
  .positive()
  .max(1_000_000_000)
  .refine((n) => Math.abs(n * 1000 - Math.round(n * 1000)) < 1e-6, {
    message: "credits are kept to 1/1000: at most three decimals",
  });

export const Issue = z.object({ path: z.string(), message: z.string() });
export type Issue = z.infer<typeof Issue>;

export const ERROR_CODES = [
  "validation_failed",
  "not_found",
  "unauthorized",
  "conflict",
  "payload_too_large",
  "limit_reached",
  "internal",
] as const;
export const ErrorCode = z.enum(ERROR_CODES);
export type ErrorCode = z.infer<typeof ErrorCode>;

export const ApiError = z.object({
  error: z.object({
    code: ErrorCode,
    message: z.string(),
    issues: z.array(Issue).optional(),
  }),
});
export type ApiError = z.infer<typeof ApiError>;
