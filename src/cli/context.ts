/**
 * What a command runs with: its streams and environment, and the connection, made only
 * once the command needs the server (so `--help` works without a key).
 */
import { type Connection, connectionFromEnv } from "./connection";
import type { CliResult } from "./failure";

/** A standard stream as the CLI uses it: a terminal says so and how wide it is. */
export type Output = NodeJS.WritableStream & { isTTY?: boolean; columns?: number };

export interface CliContext {
  env: Readonly<Record<string, string | undefined>>;
  stdout: Output;
  stderr: Output;
  /** Ctrl-C (or SIGTERM), once claimed: commands that run on watch it to end cleanly. */
  interrupted: AbortSignal;
  /** From now on the first Ctrl-C aborts `interrupted` instead of ending the process. */
  claimInterrupt: () => void;
}

export function connect(ctx: CliContext): CliResult<Connection> {
  return connectionFromEnv(ctx.env);
}

/** Writes and waits for the stream to take more when its buffer is full (a slow pipe). */
export function writeOut(stream: NodeJS.WritableStream, text: string): Promise<void> | undefined {
  if (stream.write(text)) return undefined;
  return new Promise((resolve) => {
    const go = () => {
      stream.off("drain", go);
      stream.off("close", go);
      resolve();
    };
    stream.once("drain", go);
    stream.once("close", go);
  });
}
