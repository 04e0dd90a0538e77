/**
 * `npm test`'s provision step, with the machine's own redis-server and Chromium hidden
 * from its lookups (PATH is an empty folder, the fixed browser locations point into it):
 * the packaged browser is chosen when no system one is in sight and a system one wins
 * when it is; a missing redis-server (or a library the packaged browser needs) is
 * installed only as root where apt-get exists, and anywhere else one line says what to
 * run; the step exits non-zero before the suite when it cannot provide something.
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import {
  type BrowserLookup,
  browserLookup,
  findBrowser,
  missingLibrary,
  PACKAGED_BROWSER_LIBRARIES,
  provisionBrowser,
} from "../provision/browser";
import { type Host, versionLine } from "../provision/host";
import { provisionRedis } from "../provision/redis";

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, "../..");
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "cellflow-provision-"));
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

let dirs = 0;
const emptyDir = () => fs.mkdtempSync(path.join(scratch, `d${++dirs}-`));

function script(file: string, body: string): string {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  return file;
}

/** A browser lookup that sees nothing of this machine's browsers. */
function hidden(): BrowserLookup {
  const empty = emptyDir();
  return {
    path: empty,
    locations: [path.join(empty, "chromium")],
    chromiumPath: undefined,
    packagedOnly: false,
    cacheDir: browserLookup().cacheDir,
  };
}

/** A host whose PATH is an empty folder and whose installer only records what it was asked. */
function fakeHost(
  isRoot: boolean,
  hasAptGet: boolean,
  onInstall: (bin: string) => void = () => {},
) {
  const bin = emptyDir();
  const installs: string[][] = [];
  const host: Host = {
    path: bin,
    isRoot,
    hasAptGet,
    async install(packages) {
      installs.push(packages);
      onInstall(bin);
      return { ok: true };
    },
  };
  return { host, bin, installs };
}

describe("finding a browser", () => {
  it("uses the build packaged in @sparticuz/chromium when no system Chromium is in sight, and it runs", async () => {
    const found = await findBrowser(hidden());
    expect(found.ok && found.value.source).toBe("packaged");
    if (!found.ok) return;
    expect(found.value.executablePath.startsWith(browserLookup().cacheDir)).toBe(true);
    const version = await versionLine(found.value.executablePath);
    expect(version.ok && version.value).toMatch(/^Chromium \d+\./);
  }, 120_000);

  it("prefers a system Chromium on PATH, then one at a fixed location, to the packaged build", async () => {
    const lookup = hidden();
    const onPath = script(path.join(emptyDir(), "chromium-browser"), "exit 0");
    const fixed = script(path.join(emptyDir(), "chromium"), "exit 0");
    const viaPath = await findBrowser({
      ...lookup,
      path: path.dirname(onPath),
      locations: [fixed],
    });
    expect(viaPath).toEqual({ ok: true, value: { executablePath: onPath, source: "system" } });
    const viaLocation = await findBrowser({ ...lookup, locations: [fixed] });
    expect(viaLocation).toEqual({ ok: true, value: { executablePath: fixed, source: "system" } });
  });

  it("takes CHROMIUM_PATH over everything and says so when it is wrong", async () => {
    const own = script(path.join(emptyDir(), "my-chrome"), "exit 0");
    expect(await findBrowser({ ...hidden(), chromiumPath: own })).toEqual({
      ok: true,
      value: { executablePath: own, source: "CHROMIUM_PATH" },
    });
    const missing = path.join(emptyDir(), "nothing-here");
    expect(await findBrowser({ ...hidden(), chromiumPath: missing })).toEqual({
      ok: false,
      reason: `CHROMIUM_PATH=${missing} is not an executable file`,
    });
  });

  it("skips the system lookup with CHROMIUM_PACKAGED=1", async () => {
    const onPath = script(path.join(emptyDir(), "chromium"), "exit 0");
    const lookup = browserLookup({ PATH: path.dirname(onPath), CHROMIUM_PACKAGED: "1" });
    const found = await findBrowser(lookup);
    expect(found.ok && found.value.source).toBe("packaged");
  }, 120_000);

  it("installs the packaged build's missing libraries as root, and names them otherwise", async () => {
    expect(
      missingLibrary(
        "chromium: error while loading shared libraries: libnss3.so: cannot open shared object file",
      ),
    ).toBe("libnss3.so");
    // A packaged build, already unpacked, that the loader cannot start.
    const cacheDir = emptyDir();
    const { version } = JSON.parse(
      fs.readFileSync(path.join(root, "node_modules/@sparticuz/chromium/package.json"), "utf8"),
    ) as { version: string };
    const binary = path.join(cacheDir, version, "chromium");
    const broken = () =>
      script(
        binary,
        'echo "chromium: error while loading shared libraries: libnss3.so: cannot open shared object file" >&2; exit 127',
      );
    const lookup = { ...hidden(), cacheDir };

    broken();
    const user = fakeHost(false, true);
    const lines: string[] = [];
    expect(await provisionBrowser(user.host, (l) => lines.push(l), lookup)).toEqual({
      ok: false,
      reason: `libnss3.so (for the packaged chromium) is missing: run sudo apt-get install -y ${PACKAGED_BROWSER_LIBRARIES.join(" ")}, or set CHROMIUM_PATH to a Chromium`,
    });
    expect(user.installs).toEqual([]);
    expect(lines).toEqual([]);

    const rootHost = fakeHost(true, true, () => script(binary, 'echo "Chromium 1.2.3"'));
    const found = await provisionBrowser(rootHost.host, (l) => lines.push(l), lookup);
    expect(found).toEqual({ ok: true, value: { executablePath: binary, source: "packaged" } });
    expect(rootHost.installs).toEqual([PACKAGED_BROWSER_LIBRARIES]);
    expect(lines).toEqual([`provision: Chromium 1.2.3 at ${binary} (packaged)`]);
  });
});

describe("making sure of redis-server", () => {
  const fakeRedis = (bin: string) =>
    script(path.join(bin, "redis-server"), 'echo "Redis server v=7.0.99 sha=00000000:0 bits=64"');

  it("installs redis-server with apt-get when run as root, and reports the installed version", async () => {
    const { host, bin, installs } = fakeHost(true, true, fakeRedis);
    const lines: string[] = [];
    const result = await provisionRedis(host, (l) => lines.push(l), undefined);
    expect(installs).toEqual([["redis-server"]]);
    expect(result).toEqual({
      ok: true,
      value: { bin: path.join(bin, "redis-server"), version: "7.0.99" },
    });
    expect(lines).toEqual([`provision: redis-server 7.0.99 at ${bin}/redis-server (installed)`]);
  });

  it("installs nothing without root or apt-get, and says in one line what to run", async () => {
    for (const [isRoot, hasAptGet, how] of [
      [false, true, "run sudo apt-get install -y redis-server"],
      [true, false, "install redis-server"],
    ] as const) {
      const { host, installs } = fakeHost(isRoot, hasAptGet);
      const lines: string[] = [];
      expect(await provisionRedis(host, (l) => lines.push(l), undefined)).toEqual({
        ok: false,
        reason: `redis-server is missing: ${how}, or set REDIS_SERVER_BIN`,
      });
      expect(installs).toEqual([]);
      expect(lines).toEqual([]);
    }
  });

  it("uses a redis-server already on PATH, or REDIS_SERVER_BIN, without installing", async () => {
    const { host, bin, installs } = fakeHost(true, true);
    fakeRedis(bin);
    const lines: string[] = [];
    expect((await provisionRedis(host, (l) => lines.push(l), undefined)).ok).toBe(true);
    const own = fakeRedis(emptyDir());
    expect(await provisionRedis(host, (l) => lines.push(l), own)).toEqual({
      ok: true,
      value: { bin: own, version: "7.0.99" },
    });
    expect(installs).toEqual([]);
    expect(lines).toEqual([
      `provision: redis-server 7.0.99 at ${bin}/redis-server`,
      `provision: redis-server 7.0.99 at ${own} (REDIS_SERVER_BIN)`,
    ]);
  });

  it("stops `npm test` before the suite, with one line, when it cannot provide something", async () => {
    const missing = path.join(emptyDir(), "redis-server");
    const failed = await run(process.execPath, ["--import", "tsx", "test/provision/run.ts"], {
      cwd: root,
      env: { ...process.env, REDIS_SERVER_BIN: missing },
    }).then(
      () => undefined,
      (err: { code: number; stderr: string }) => err,
    );
    expect(failed?.code).toBe(1);
    expect(failed?.stderr).toBe(
      `provision: REDIS_SERVER_BIN=${missing} is not an executable file\n`,
    );
  }, 60_000);
});
