/**
 * The built web app for `npm start`. Invariants: a build runs only when the sources (or
 * the lock file, or the config) changed since the last one that succeeded, or none is
 * there; the stamp is written only after a build succeeds, so a failed or interrupted
 * build is redone; while it runs the person sees its phases and the elapsed time
 * (build-progress.ts), and a failure reports the end of next build's own output.
 * `npm run dev` does not come here: Next.js's dev server writes to `.next/dev`, and leaves
 * the build and this stamp alone.
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { BuildProgress, LineSplitter, type ProgressOut } from "./build-progress";

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
  report: { say: (line: string) => void; out: ProgressOut },
): Promise<"built" | "cached"> {
  const want = fingerprint(root);
  const stampFile = path.join(root, STAMP);
  const have = fs.existsSync(stampFile) ? fs.readFileSync(stampFile, "utf8").trim() : "";
  if (have === want && fs.existsSync(path.join(root, ".next", "BUILD_ID"))) return "cached";
  report.say("building the web app (first start, or the sources changed)…");
  const progress = new BuildProgress(report.out);
  const ticker = setInterval(() => progress.tick(), 1_000);
  const bin = path.join(root, "node_modules", ".bin", "next");
  await new Promise<void>((resolve, reject) => {
    const child = spawn(bin, ["build"], {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, NODE_ENV: "production", NEXT_TELEMETRY_DISABLED: "1" },
    });
    let output = "";
    const lines = new LineSplitter();
    const collect = (chunk: Buffer) => {
      const text = chunk.toString("utf8");
      output += text;
      for (const line of lines.push(text)) progress.line(line);
    };
    child.stdout.on("data", collect);
    child.stderr.on("data", collect);
    child.once("error", reject);
    child.once("exit", (code) =>
      code === 0
        ? resolve()
        : reject(new Error(`next build failed (exit ${code}):\n${output.slice(-4000)}`)),
    );
  }).then(
    () => {
      clearInterval(ticker);
      progress.finish();
    },
    (err: unknown) => {
      clearInterval(ticker);
      progress.abandon();
      throw err;
    },
  );
  fs.writeFileSync(stampFile, want);
  return "built";
}
