/**
 * The rate limiter on a plain Redis (REDIS_URL): the same `@upstash/ratelimit` as on
 * Upstash, over `new Redis(requester)` whose requester runs each command on an ioredis
 * client instead of sending it over Upstash's REST protocol. Shared by every worker
 * process that points at the same Redis.
 *
 * Invariant: a Redis that is down or slow answers "unavailable", never "ok": commands
 * fail fast instead of queueing for a reconnect (`maxRetriesPerRequest`), and the
 * library's timeout bounds the rest (see sliding-log.ts).
 */
import { Redis as UpstashRedis } from "@upstash/redis";
import IORedis from "ioredis";
import { SlidingLogLimiter } from "./sliding-log";

type Command = (string | number)[];
type Reply = { result?: unknown; error?: string };

/**
 * Stock Redis 7.0 answers "ERR Unexpected flag in script shebang" to the
 * `#!lua flags=allow-key-locking` line @upstash/ratelimit's own scripts start with; the
 * flag only matters on Upstash. EVALSHA of such a script then misses (its hash is of the
 * unstripped text) and the library falls back to EVAL, which is harmless.
 */
export function stripShebang(script: string): string {
  return script.startsWith("#!") ? script.slice(script.indexOf("\n") + 1) : script;
}

/** Runs one Upstash-style command (`["evalsha", sha, 1, key, ...]`) on ioredis. */
export async function runCommand(client: IORedis, command: Command): Promise<Reply> {
  const [name, ...args] = command;
  if (typeof name !== "string") return { error: "ERR empty command" };
  const verb = name.toLowerCase();
  if ((verb === "eval" || verb === "eval_ro") && typeof args[0] === "string") {
    args[0] = stripShebang(args[0]);
  }
  if (
    verb === "script" &&
    String(args[0]).toLowerCase() === "load" &&
    typeof args[1] === "string"
  ) {
    args[1] = stripShebang(args[1]);
  }
  try {
    return { result: await client.call(verb, ...args.map(String)) };
  } catch (err) {
    return { error: err instanceof Error ? err.message : String(err) };
  }
}

async function runMulti(client: IORedis, commands: Command[]): Promise<Reply[]> {
  const multi = client.multi();
  for (const [name, ...args] of commands)
    multi.call(String(name).toLowerCase(), ...args.map(String));
  const replies = (await multi.exec()) ?? [];
  return replies.map(([err, result]) => (err ? { error: err.message } : { result }));
}

/** An `@upstash/redis` requester over ioredis: single commands, /pipeline and /multi-exec. */
export function ioredisRequester(client: IORedis) {
  return {
    async request<TResult = unknown>(req: { path?: string[]; body?: unknown }) {
      const body = req.body as Command | Command[];
      const path = req.path?.[0];
      if (path === "pipeline") {
        const out: Reply[] = [];
        for (const command of body as Command[]) out.push(await runCommand(client, command));
        return out as unknown as { result?: TResult; error?: string };
      }
      if (path === "multi-exec") {
        return (await runMulti(client, body as Command[])) as unknown as {
          result?: TResult;
          error?: string;
        };
      }
      return (await runCommand(client, body as Command)) as { result?: TResult; error?: string };
    },
  };
}

export function createRedisLimiter(url: string): SlidingLogLimiter {
  const client = new IORedis(url, {
    // A command issued while disconnected fails after one reconnect attempt instead of
    // waiting in the offline queue: "unavailable" is the answer, not a hang.
    maxRetriesPerRequest: 1,
    connectTimeout: 2_000,
    lazyConnect: false,
  });
  // ioredis emits connection errors as events; unhandled, they would crash the process.
  client.on("error", () => {});
  const redis = new UpstashRedis(ioredisRequester(client));
  return new SlidingLogLimiter("redis", redis, async () => {
    client.disconnect();
  });
}
