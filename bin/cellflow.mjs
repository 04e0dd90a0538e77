#!/usr/bin/env node
// The `cellflow` command: runs the TypeScript CLI (src/cli) through tsx, so a checkout
// needs no build step. The project's own tsconfig applies wherever it is run from.
import { fileURLToPath } from "node:url";
import { register } from "tsx/esm/api";

register({ tsconfig: fileURLToPath(new URL("../tsconfig.json", import.meta.url)) });
await import("../src/cli/main.ts");
