/**
 * What provisioning asks of the machine, as one value a test can replace: the PATH it
 * searches, whether it runs as root where apt-get exists, and how it installs Debian
 * packages. `installOrTell` is the one place that decides between installing something
 * and telling a person, in one line, what to run.
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { sleep } from "@/domain/sleep";

const run = promisify(execFile);

export type Outcome = { ok: true } | { ok: false; reason: string };
export type Result<T> = { ok: true; value: T } | { ok: false; reason: string };

export interface Host {
  /** The directories searched for executables, as PATH spells them. */
  path: string;
  isRoot: boolean;
  hasAptGet: boolean;
  /** Installs Debian packages; only called as root where apt-get exists. */
  install(packages: string[]): Promise<Outcome>;
}

export function isExecutableFile(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/** The first executable called `name` in the directories of `pathValue`. */
export function which(name: string, pathValue: string): string | undefined {
  for (const dir of pathValue.split(path.delimiter)) {
    if (!dir) continue;
    const file = path.join(dir, name);
    if (isExecutableFile(file)) return file;
  }
  return undefined;
}

/**
 * The first line `file --version` prints; when it does not run, the first line it wrote to
 * stderr (a missing shared library shows up here).
 */
export async function versionLine(file: string): Promise<Result<string>> {
  try {
    const { stdout } = await run(file, ["--version"], { timeout: 20_000 });
    return { ok: true, value: stdout.trim().split("\n")[0] ?? "" };
  } catch (err) {
    const e = err as { stderr?: string; message?: string };
    const first = (e.stderr || e.message || String(err)).trim().split("\n")[0] ?? "";
    return { ok: false, reason: first };
  }
}

export function realHost(): Host {
  const pathValue = process.env.PATH ?? "";
  return {
    path: pathValue,
    isRoot: process.getuid?.() === 0,
    hasAptGet: which("apt-get", pathValue) !== undefined,
    install: (packages) => aptInstall(packages),
  };
}

/**
 * `apt-get update` then install, quietly; a fresh machine's mirror sometimes stalls, so
 * the pair is tried `attempts` times with a growing pause. Output is shown only on failure.
 */
export async function aptInstall(packages: string[], attempts = 3): Promise<Outcome> {
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  let last = "";
  for (let attempt = 1; attempt <= attempts; attempt++) {
    try {
      await run("apt-get", ["update", "-qq"], { env, maxBuffer: 64 << 20 });
      await run("apt-get", ["install", "-y", "-qq", "--no-install-recommends", ...packages], {
        env,
        maxBuffer: 64 << 20,
      });
      return { ok: true };
    } catch (err) {
      const e = err as { stderr?: string; message?: string };
      last = (e.stderr || e.message || String(err)).trim().split("\n").slice(-5).join("\n");
      if (attempt < attempts) {
        console.error(
          `provision: apt-get install ${packages.join(" ")} failed (attempt ${attempt}); retrying`,
        );
        await sleep(attempt * 10_000);
      }
    }
  }
  return {
    ok: false,
    reason: `apt-get install ${packages.join(" ")} failed ${attempts} times:\n${last}`,
  };
}

export interface Need {
  /** What is missing, as the one-line message names it ("redis-server"). */
  what: string;
  packages: string[];
  /** What else a person can do instead of installing ("set REDIS_SERVER_BIN"). */
  otherwise: string;
}

/**
 * Installs `need.packages` as root where apt-get exists; anywhere else it installs nothing
 * and fails with the one line a person needs.
 */
export async function installOrTell(host: Host, need: Need): Promise<Outcome> {
  const list = need.packages.join(" ");
  if (host.isRoot && host.hasAptGet) return host.install(need.packages);
  const how = host.hasAptGet ? `run sudo apt-get install -y ${list}` : `install ${list}`;
  return { ok: false, reason: `${need.what} is missing: ${how}, or ${need.otherwise}` };
}
