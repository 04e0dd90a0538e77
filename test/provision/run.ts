/**
 * `npm test`'s first step: makes sure what the suite needs beyond npm packages is on the
 * machine (a Chromium for the UI tests, a redis-server binary for the rate-limit tests),
 * printing one line per thing found or installed. Exits non-zero with one line saying
 * what to run before the long suite starts when it cannot provide something itself.
 */
import { provisionBrowser } from "./browser";
import { realHost } from "./host";
import { provisionRedis } from "./redis";

const host = realHost();
const log = (line: string) => console.log(line);

let failed = false;
for (const step of [provisionBrowser, provisionRedis]) {
  const outcome = await step(host, log);
  if (!outcome.ok) {
    console.error(`provision: ${outcome.reason}`);
    failed = true;
  }
}
if (failed) process.exitCode = 1;
