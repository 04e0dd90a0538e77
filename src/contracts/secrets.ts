import { z } from "zod";

export const MAX_SECRET_BYTES = 8 * 1024;

/**
 * Upper case, so `secrets.NAME` in an expression reads as a constant and cannot be
 * mistaken for a column or block id (those are lower case).
 */
export const SecretName = z
  .string()
  .regex(/^[A-Z][A-Z0-9_]{0,63}$/, "must match ^[A-Z][A-Z0-9_]{0,63}$ (uppercase, digits, _)");
export type SecretName = z.infer<typeof SecretName>;

export const PutSecretRequest = z.strictObject({
  value: z
    .string()
    .min(1, "must not be empty")
    .refine(
      (v) => Buffer.byteLength(v, "utf8") <= MAX_SECRET_BYTES,
      `must be at most ${MAX_SECRET_BYTES} bytes (UTF-8)`,
    ),
});
export type PutSecretRequest = z.infer<typeof PutSecretRequest>;

/** What the API shows of a secret: never its value, which is write-only. */
export const SecretView = z.object({
  name: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type SecretView = z.infer<typeof SecretView>;

export const SecretList = z.object({ secrets: z.array(SecretView) });
export type SecretList = z.infer<typeof SecretList>;
