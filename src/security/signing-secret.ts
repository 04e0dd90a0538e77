/**
 * A new signing secret (a webhook's, a destination's): returned to be shown once and
 * sealed under the server key for storage. A missing key is the deployment's fault, not
 * the caller's: it throws, so the route answers 500 and the log says why.
 */
import { randomBytes } from "node:crypto";
import { sealSecret } from "./secret-box";
import { serverSecretKey } from "./secret-key";

export interface MintedSecret {
  secret: string;
  ciphertext: string;
}

/** `what` names the secrets in the error ("webhook secrets", "destination secrets"). */
export function mintSigningSecret(what: string): MintedSecret {
  const key = serverSecretKey();
  if (!key)
    throw new Error(
      `CELLFLOW_SECRET_KEY is not set: ${what} cannot be stored (set a 32-byte key, see .env.example)`,
    );
  const secret = `whsec_${randomBytes(32).toString("base64url")}`;
  return { secret, ciphertext: sealSecret(key, secret) };
}
