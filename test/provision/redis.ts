/**
 * Makes sure a `redis-server` binary is there for the tests that start their own
 * (test/helpers/redis.ts): REDIS_SERVER_BIN when set, else the one on PATH, else Debian's
 * package installed as root, else one line saying what to run. It starts no server.
 */
import {
  type Host,
  installOrTell,
  isExecutableFile,
  type Result,
  versionLine,
  which,
} from "./host";

export interface RedisBinary {
  bin: string;
  version: string;
}

/** "7.0.15" out of `redis-server --version`'s "Redis server v=7.0.15 sha=…". */
export function redisVersion(line: string): string {
  return /\bv=(\S+)/.exec(line)?.[1] ?? line;
}

async function describe(
  bin: string,
  how: string,
  log: (line: string) => void,
): Promise<Result<RedisBinary>> {
  const line = await versionLine(bin);
  if (!line.ok) return { ok: false, reason: `${bin} does not run: ${line.reason}` };
  const version = redisVersion(line.value);
  log(`provision: redis-server ${version} at ${bin}${how}`);
  return { ok: true, value: { bin, version } };
}

export async function provisionRedis(
  host: Host,
  log: (line: string) => void,
  redisServerBin: string | undefined = process.env.REDIS_SERVER_BIN,
): Promise<Result<RedisBinary>> {
  if (redisServerBin) {
    if (!isExecutableFile(redisServerBin))
      return { ok: false, reason: `REDIS_SERVER_BIN=${redisServerBin} is not an executable file` };
    return describe(redisServerBin, " (REDIS_SERVER_BIN)", log);
  }
  const onPath = which("redis-server", host.path);
  if (onPath) return describe(onPath, "", log);
  const installed = await installOrTell(host, {
    what: "redis-server",
    packages: ["redis-server"],
    otherwise: "set REDIS_SERVER_BIN",
  });
  if (!installed.ok) return installed;
  const bin = which("redis-server", host.path);
  if (!bin) return { ok: false, reason: "redis-server was installed but is not on PATH" };
  return describe(bin, " (installed)", log);
}
