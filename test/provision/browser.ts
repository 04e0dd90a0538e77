/**
 * Which Chromium the browser tests drive. The provision step and the tests find it the
 * same way, so nothing has to be handed from one process to another: CHROMIUM_PATH when
 * set; else a system Chromium (on PATH, or at a fixed location); else the build shipped
 * inside the @sparticuz/chromium package, unpacked once under node_modules/.cache with no
 * download. CHROMIUM_PACKAGED=1 skips the system lookup, to run the tests on the packaged
 * build where a system one exists.
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import {
  type Host,
  installOrTell,
  isExecutableFile,
  type Result,
  versionLine,
  which,
} from "./host";

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, "../..");

/**
 * Flags for playwright-core's `chromium.launch`. No sandbox: as root Chromium refuses to
 * start with one. The network is closed on CI machines, so nothing may phone home.
 * Of @sparticuz/chromium's own `args`, only the two that stop reports and pings are
 * taken: the rest are for serverless sandboxes (single process, no zygote, SwiftShader
 * GL) or switch off web security, which the UI tests must keep.
 */
export const BROWSER_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-domain-reliability",
  "--no-pings",
];

export const SYSTEM_BROWSER_NAMES = [
  "chromium",
  "chromium-browser",
  "google-chrome-stable",
  "google-chrome",
];
export const SYSTEM_BROWSER_LOCATIONS = ["/usr/bin/chromium"];

/** The shared libraries the packaged build links against come from these Debian packages. */
export const PACKAGED_BROWSER_LIBRARIES = ["libnss3", "libexpat1"];

export interface BrowserLookup {
  /** The directories searched for SYSTEM_BROWSER_NAMES, as PATH spells them. */
  path: string;
  /** Files tried after PATH. */
  locations: string[];
  chromiumPath: string | undefined;
  packagedOnly: boolean;
  /** Where the packaged build is unpacked, one folder per package version. */
  cacheDir: string;
}

export type BrowserSource = "CHROMIUM_PATH" | "system" | "packaged";

export interface Browser {
  executablePath: string;
  source: BrowserSource;
}

export function browserLookup(
  env: Record<string, string | undefined> = process.env,
): BrowserLookup {
  return {
    path: env.PATH ?? "",
    locations: SYSTEM_BROWSER_LOCATIONS,
    chromiumPath: env.CHROMIUM_PATH || undefined,
    packagedOnly: env.CHROMIUM_PACKAGED === "1",
    cacheDir: path.join(root, "node_modules", ".cache", "cellflow-chromium"),
  };
}

export function findSystemBrowser(lookup: BrowserLookup): string | undefined {
  for (const name of SYSTEM_BROWSER_NAMES) {
    const found = which(name, lookup.path);
    if (found) return found;
  }
  return lookup.locations.find(isExecutableFile);
}

function packagedVersion(): Result<string> {
  const manifest = path.join(root, "node_modules", "@sparticuz", "chromium", "package.json");
  try {
    const { version } = JSON.parse(fs.readFileSync(manifest, "utf8")) as { version: string };
    return { ok: true, value: version };
  } catch {
    return { ok: false, reason: "@sparticuz/chromium is not installed (run npm ci)" };
  }
}

/**
 * The packaged build's binary, unpacked into `cacheDir`/<version> on first use. The
 * package unpacks into the OS temp dir and reuses whatever `chromium` it finds there,
 * whatever its version; so it runs in a child whose temp dir is a fresh staging folder,
 * renamed into place once complete (a killed unpack leaves only a staging folder behind,
 * and of two racing unpacks the first rename wins).
 */
export async function packagedBrowser(cacheDir: string): Promise<Result<string>> {
  const version = packagedVersion();
  if (!version.ok) return version;
  const target = path.join(cacheDir, version.value);
  const binary = path.join(target, "chromium");
  if (isExecutableFile(binary)) return { ok: true, value: binary };
  fs.mkdirSync(cacheDir, { recursive: true });
  const staging = fs.mkdtempSync(path.join(cacheDir, `${version.value}.unpacking-`));
  try {
    const script =
      'const { default: c } = await import("@sparticuz/chromium"); process.stdout.write(await c.executablePath());';
    const { stdout } = await run(process.execPath, ["--input-type=module", "-e", script], {
      cwd: root,
      env: { ...process.env, TMPDIR: staging },
      timeout: 120_000,
    });
    if (path.resolve(stdout.trim()) !== path.join(staging, "chromium"))
      return {
        ok: false,
        reason: `@sparticuz/chromium unpacked to ${stdout.trim()}, not ${staging}`,
      };
    try {
      fs.renameSync(staging, target);
    } catch (err) {
      // Another process renamed its complete unpack into place first.
      if (!isExecutableFile(binary)) throw err;
    }
    return { ok: true, value: binary };
  } catch (err) {
    const e = err as { stderr?: string; message?: string };
    return { ok: false, reason: `unpacking @sparticuz/chromium failed: ${e.stderr || e.message}` };
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
}

export async function findBrowser(
  lookup: BrowserLookup = browserLookup(),
): Promise<Result<Browser>> {
  if (lookup.chromiumPath) {
    if (!isExecutableFile(lookup.chromiumPath))
      return {
        ok: false,
        reason: `CHROMIUM_PATH=${lookup.chromiumPath} is not an executable file`,
      };
    return { ok: true, value: { executablePath: lookup.chromiumPath, source: "CHROMIUM_PATH" } };
  }
  if (!lookup.packagedOnly) {
    const system = findSystemBrowser(lookup);
    if (system) return { ok: true, value: { executablePath: system, source: "system" } };
  }
  const packaged = await packagedBrowser(lookup.cacheDir);
  if (!packaged.ok) return packaged;
  return { ok: true, value: { executablePath: packaged.value, source: "packaged" } };
}

/** The library named by a dynamic loader error, e.g. "libnss3.so". */
export function missingLibrary(message: string): string | undefined {
  return /error while loading shared libraries: ([^:\s]+)/.exec(message)?.[1];
}

/**
 * Finds the browser and checks it runs. The packaged build needs a few shared libraries
 * that a bare Debian may lack: as root they are installed, elsewhere one line says how.
 */
export async function provisionBrowser(
  host: Host,
  log: (line: string) => void,
  lookup: BrowserLookup = browserLookup(),
): Promise<Result<Browser>> {
  const found = await findBrowser(lookup);
  if (!found.ok) return found;
  const { executablePath, source } = found.value;
  let version = await versionLine(executablePath);
  const library = version.ok ? undefined : missingLibrary(version.reason);
  if (library && source === "packaged") {
    const installed = await installOrTell(host, {
      what: `${library} (for the packaged chromium)`,
      packages: PACKAGED_BROWSER_LIBRARIES,
      otherwise: "set CHROMIUM_PATH to a Chromium",
    });
    if (!installed.ok) return installed;
    version = await versionLine(executablePath);
  }
  if (!version.ok)
    return { ok: false, reason: `${executablePath} does not run: ${version.reason}` };
  // Debian's wrapper adds " built on Debian …": the version is what matters.
  const name = version.value.replace(/ built on .*/, "");
  log(`provision: ${name} at ${executablePath} (${source})`);
  return found;
}
