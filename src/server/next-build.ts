import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";

const INPUTS = ["src", "db", "next.config.ts", "package-lock.json", "tsconfig.json"];
const STAMP = path.join(".next", "cellflow-build-stamp");

function fingerprint(root: string): string {
  const hash = createHash("sha256");
  const walk = (rel: string) => {
    const abs = path.join(root, rel);
    if (!fs.existsSync(abs)) return;
    const stat = fs.statSync(abs);
    if (stat.isDirectory()) {
      for (const name of fs.readdirSync(abs).sort()) walk(path.join(rel, name));
    } else {
      hash.update(rel).update("\0").update(fs.readFileSync(abs)).update("\0");
    }
  };
  for (const input of INPUTS) walk(input);
  return hash.digest("hex");
}

/**
 * Builds the Next.js app when its sources changed since the last build (or it never ran),
 * so a fresh clone needs only `npm start`, and later starts skip the build.
 */
export async function ensureNextBuild(
  root: string,
  log: (line: string) => void,
): Promise<"built" | "cached"> {
  const want = fingerprint(root);
  const stampFile = path.join(root, STAMP);
  const have = fs.existsSync(stampFile) ? fs.readFileSync(stampFile, "utf8").trim() : "";
  if (have === want && fs.existsSync(path.join(root, ".next", "BUILD_ID"))) return "cached";
  log("building the web app (first start, or the sources changed)…");
  const bin = path.join(root, "node_modules", ".bin", "next");
  await new Promise<void>((resolve, reject) => {
    const child = spawn(bin, ["build"], {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, NODE_ENV: "production", NEXT_TELEMETRY_DISABLED: "1" },
    });
    let output = "";
    const collect = (chunk: Buffer) => {
      output += chunk.toString("utf8");
    };
    child.stdout.on("data", collect);
    child.stderr.on("data", collect);
    child.once("error", reject);
    child.once("exit", (code) =>
      code === 0
        ? resolve()
        : reject(new Error(`next build failed (exit ${code}):\n${output.slice(-4000)}`)),
    );
  });
  fs.writeFileSync(stampFile, want);
  return "built";
}
