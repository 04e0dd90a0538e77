/**
 * Workspace secrets. Invariant: a value goes in (sealed under the server key) and never
 * comes back out through the API or the logs; only names and times are shown.
 */
import {
  type PutSecretRequest,
  type SecretList,
  SecretName,
  type SecretView,
} from "@/contracts/secrets";
import { type Failure, invalid, notFound } from "@/domain/errors";
import type { Result } from "@/domain/result";
import { sealSecret } from "@/security/secret-box";
import { serverSecretKey } from "@/security/secret-key";
import { deleteSecret as removeSecret } from "@/store/secrets/delete";
import { putSecret as upsertSecret } from "@/store/secrets/put";
import { listSecrets as readSecrets, type SecretRecord } from "@/store/secrets/read";
import type { ServiceContext } from "./context";

function view(secret: SecretRecord): SecretView {
  return {
    name: secret.name,
    createdAt: secret.createdAt.toISOString(),
    updatedAt: secret.updatedAt.toISOString(),
  };
}

/** Creates the secret or replaces its value. */
export async function putSecret(
  ctx: ServiceContext,
  name: string,
  req: PutSecretRequest,
): Promise<Result<SecretView, Failure>> {
  const parsed = SecretName.safeParse(name);
  if (!parsed.success) {
    return {
      ok: false,
      reason: invalid(
        parsed.error.issues.map((i) => ({ path: "name", message: i.message })),
        "The secret name is not valid",
      ),
    };
  }
  const key = serverSecretKey();
  if (!key) {
    // A deployment fault, not the caller's: the route answers 500 and the log says why.
    throw new Error(
      "CELLFLOW_SECRET_KEY is not set: workspace secrets cannot be stored (set a 32-byte key, see .env.example)",
    );
  }
  const secret = await upsertSecret(ctx.db, {
    workspaceId: ctx.workspaceId,
    name,
    ciphertext: sealSecret(key, req.value),
  });
  ctx.log.info({ secretName: name }, "secret stored");
  return { ok: true, value: view(secret) };
}

export async function listSecrets(ctx: ServiceContext): Promise<Result<SecretList, Failure>> {
  const secrets = await readSecrets(ctx.db, ctx.workspaceId);
  return { ok: true, value: { secrets: secrets.map(view) } };
}

export async function deleteSecret(
  ctx: ServiceContext,
  name: string,
): Promise<Result<null, Failure>> {
  // A name that cannot be valid cannot exist: 404, like any unknown id.
  if (
    !SecretName.safeParse(name).success ||
    !(await removeSecret(ctx.db, { workspaceId: ctx.workspaceId, name }))
  )
    return { ok: false, reason: notFound("secret") };
  ctx.log.info({ secretName: name }, "secret deleted");
  return { ok: true, value: null };
}
