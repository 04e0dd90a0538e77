/**
 * LISTEN and UNLISTEN on a pinned session (never a pooled query: a LISTEN lives as long
 * as its session). Channel names are the engine's own constants, not user input.
 */
import type { SessionClient } from "@db/client";

export async function listen(client: SessionClient, channel: string): Promise<void> {
  await client.query(`listen ${channel}`);
}

export async function unlisten(client: SessionClient, channel: string): Promise<void> {
  await client.query(`unlisten ${channel}`);
}
