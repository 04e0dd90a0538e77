/**
 * `npm run dev`: the same start-up as `npm start` (run-server.ts) with Next.js's dev server
 * in place of the built app: pages and API routes recompile when their files change. Its
 * output goes to `.next/dev` (Next.js's own choice in dev), so the production build and its
 * stamp in `.next` stay as `npm start` left them.
 */
import { runServer } from "./run-server";

void runServer({ dev: true });
